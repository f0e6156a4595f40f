#!/bin/sh
# tests/reader/ocamlexe.sh BUILD - rte-read takes the OCaml version of a
# ring file from the executable of its live writer, else from the trace.
#
# Live processes: BUILD/tests/reader/ocamlprog-* (tests/reader/ocamlprog.c)
# carry in their ELF files what OCaml 5 programs carry (Sys.ocaml_version,
# the bytecode runtime's version string, runtime symbols new in a release),
# and while they run map a copy of a ring file written by an OCaml 5.4
# development runtime (tests/fixtures/ocaml-5.4dev/basic) as PID.events.
# The names rte-read gives its events are checked against those OCaml's
# own consumer printed for that file.
set -u
BUILD=${1:-build}
RR=$BUILD/rte-read
P=$BUILD/tests/reader/ocamlprog
CHECK="python3 tests/reader/check.py"
FIX=tests/fixtures/ocaml-5.4dev/basic
mkdir -p "$BUILD/tests/reader" && T=$(mktemp -d "$BUILD/tests/reader/ocamlexe.XXXXXX") || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
ocaml() { field "$1" "(lambda o: $2)(d['processes'][0]['gc']['ocaml'])"; }

gzip -dc "$FIX"/*.events.gz >"$T/src.events" || exit 1
fixpid=$(basename "$FIX"/*.events.gz .events.gz)
# the events OCaml's 5.4 consumer read, with the pid the copy's ring_start has
sed "s/\"name\":\"ring_start\",\"data\":$fixpid}/\"name\":\"ring_start\",\"data\":PID}/" \
	"$FIX/$fixpid.expected.jsonl" >"$T/exp.tmpl"
grep -q '"data":PID}' "$T/exp.tmpl" || fail "no ring_start in $FIX/$fixpid.expected.jsonl"

# names_match DIR PID: 0 if rte-read -f jsonl names the events of DIR's
# file as OCaml's 5.4 consumer did, else not 0.
names_match() {
	"$RR" -f jsonl "$1" >"$T/j.jsonl" 2>/dev/null || return 2
	sed "s/PID/$2/g" "$T/exp.tmpl" >"$T/exp.jsonl"
	$CHECK jsonl-vs-expected "$T/j.jsonl" "$T/exp.jsonl" "$2" >/dev/null 2>&1
}

# start VARIANT: run ocamlprog-VARIANT on a fresh directory; sets $dir,
# $pid (the program's) and keeps its stdin open on fd 3.
start() {
	dir=$T/$1
	rm -rf "$dir" "$T/ctl" "$T/ready" && mkdir -p "$dir" &&
		mkfifo "$T/ctl" "$T/ready" || exit 1
	"$P-$1" "$T/src.events" "$dir" <"$T/ctl" >"$T/ready" &
	exec 3>"$T/ctl"
	word= pid=
	read -r word pid <"$T/ready" || true
	[ "$word" = ready ] || { fail "$1: did not start"; exec 3>&-; wait; exit 1; }
}
stop() { exec 3>&-; wait; }

# --- a live native program of 5.4dev: the executable decides, sure
start native54
"$RR" -f gc-stats-json "$dir" >"$T/g.json" 2>"$T/err" || fail "native54: gc-stats-json: $(cat "$T/err")"
exe=$(readlink -f "$P-native54")
[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['sure'], o['executable']['path'], o['executable']['ocaml'], o['executable']['evidence'])")" = \
  "('5.4dev', 'executable', 'sure', '$exe', '5.4.0+dev0-2024-08-25', 'Sys.ocaml_version')" ] ||
	fail "native54 live: $(ocaml "$T/g.json" o)"
[ -s "$T/err" ] && fail "native54 live: stderr: $(cat "$T/err")"
names_match "$dir" "$pid" || fail "native54 live: names differ from OCaml 5.4's consumer"
"$RR" -f gc-stats "$dir" | grep -qF "Names: OCaml 5.4dev names (from the executable $exe: OCaml 5.4.0+dev0-2024-08-25, by its Sys.ocaml_version; sure:" ||
	fail "native54 live: gc-stats text: $("$RR" -f gc-stats "$dir" | grep Names)"
"$RR" -f summary "$dir" | grep -qF "Names: OCaml 5.4dev names (from the executable $exe" ||
	fail "native54 live: summary text does not say the executable"
"$RR" -f summary-json "$dir" >"$T/s.json"
[ "$(field "$T/s.json" "d['processes'][0]['gc']['ocaml']")" = "$(ocaml "$T/g.json" o)" ] ||
	fail "native54 live: summary-json's ocaml differs from gc-stats-json's"
# --ocaml-version still wins over the executable
"$RR" -f gc-stats-json --ocaml-version=5.2 "$dir" >"$T/g.json"
[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['sure'])")" = "('5.2', 'option', 'forced')" ] ||
	fail "native54 live, --ocaml-version=5.2: $(ocaml "$T/g.json" o)"
stop
# gone: the trace's nesting decides, and still finds 5.4dev
"$RR" -f gc-stats-json "$dir" >"$T/g.json"
[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['sure'], o['executable'])")" = "('5.4dev', 'trace', 'sure', None)" ] ||
	fail "native54 gone: $(ocaml "$T/g.json" o)"
names_match "$dir" "$pid" || fail "native54 gone: names differ from OCaml 5.4's consumer"
"$RR" -f gc-stats "$dir" | grep -qF "Names: OCaml 5.4dev names (from the trace nesting, sure:" ||
	fail "native54 gone: gc-stats text does not say the trace nesting"
ok "live 5.4 executable: its Sys.ocaml_version decides (sure); once it is gone, the trace nesting; --ocaml-version wins"

# --- the same file under a live 5.2 executable: the executable's names,
# and a warning that the nesting disagrees
for v in native52 byte52; do
	start $v
	"$RR" -f gc-stats-json "$dir" >"$T/g.json" 2>"$T/err"
	want=Sys.ocaml_version
	[ $v = byte52 ] && want="runtime version string"
	[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['sure'], o['executable']['ocaml'], o['executable']['evidence'], o['trace_version'])")" = \
	  "('5.2', 'executable', 'sure', '5.2.0', '$want', '5.4dev')" ] ||
		fail "$v live: $(ocaml "$T/g.json" o)"
	grep -q "says OCaml 5.2.0, but the trace's phase nesting fits OCaml 5.4dev's names" "$T/err" ||
		fail "$v live: no warning of the disagreement: $(cat "$T/err")"
	names_match "$dir" "$pid" && fail "$v live: 5.4's names although the executable says 5.2"
	stop
	"$RR" -f gc-stats-json "$dir" >"$T/g.json" 2>"$T/err"
	[ "$(ocaml "$T/g.json" "(o['version'], o['from'])")" = "('5.4dev', 'trace')" ] ||
		fail "$v gone: $(ocaml "$T/g.json" o)"
	[ -s "$T/err" ] && fail "$v gone: stderr: $(cat "$T/err")"
	names_match "$dir" "$pid" || fail "$v gone: names differ from OCaml 5.4's consumer"
done
ok "live 5.2 executables (native, bytecode runtime): their names, with a warning; gone: the nesting's"

# --- runtime symbols only: the release, likely
start syms53
"$RR" -f gc-stats-json "$dir" >"$T/g.json" 2>/dev/null
[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['sure'], o['executable']['ocaml'], o['executable']['evidence'])")" = \
  "('5.3', 'executable', 'likely', '5.3', 'runtime symbols')" ] ||
	fail "syms53 live: $(ocaml "$T/g.json" o)"
stop
ok "live executable with 5.3's runtime symbols only: 5.3 (likely)"

# --- not an OCaml program: the trace decides, and says why not the executable
start plain
"$RR" -f gc-stats-json "$dir" >"$T/g.json" 2>"$T/err"
[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['executable']['path'], o['executable']['ocaml'], o['executable']['error'])")" = \
  "('5.4dev', 'trace', '$(readlink -f "$P-plain")', None, None)" ] ||
	fail "plain live: $(ocaml "$T/g.json" o)"
[ -s "$T/err" ] && fail "plain live: stderr: $(cat "$T/err")"
"$RR" -f gc-stats "$dir" | grep -q "from the trace nesting, sure: .*; executable .*ocamlprog-plain: no OCaml 5 runtime version in it)" ||
	fail "plain live: gc-stats text: $("$RR" -f gc-stats "$dir" | grep Names)"
stop
ok "live non-OCaml executable: the trace nesting, and the text says why"

# --- a shared OCaml runtime mapped by a program that is not OCaml itself
start shared
"$RR" -f gc-stats-json "$dir" >"$T/g.json" 2>/dev/null
[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['sure'], o['executable']['path'], o['executable']['ocaml'], o['executable']['evidence'])")" = \
  "('5.3', 'executable', 'sure', '$(readlink -f "$BUILD/tests/reader/lib/libcamlrun_shared.so")', '5.3.0~alpha1', 'runtime version string')" ] ||
	fail "shared live: $(ocaml "$T/g.json" o)"
stop
ok "live program with a shared OCaml runtime (libcamlrun_shared.so): the runtime's version"

# --- --exe for a finished process, including a stripped one
"$RR" -f gc-stats-json --exe "$P-native52" "$T/native54" >"$T/g.json" 2>/dev/null
[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['executable']['path'])")" = "('5.2', 'executable', '$P-native52')" ] ||
	fail "--exe native52: $(ocaml "$T/g.json" o)"
cp "$P-native52" "$T/stripped" && strip "$T/stripped" || fail "strip"
"$RR" -f gc-stats-json --exe "$T/stripped" "$T/native54" >"$T/g.json" 2>/dev/null
[ "$(ocaml "$T/g.json" "(o['version'], o['sure'], o['executable']['ocaml'], o['executable']['evidence'])")" = \
  "('5.2', 'likely', '5.2.0', 'string constant shaped like Sys.ocaml_version')" ] ||
	fail "--exe stripped: $(ocaml "$T/g.json" o)"
"$RR" -f gc-stats-json --exe "$P-native54" --ocaml-version=5.3 "$T/native54" >"$T/g.json"
[ "$(ocaml "$T/g.json" "o['from']")" = option ] || fail "--ocaml-version does not win over --exe"
for bad in "$P-plain" "$T/nonexistent" "$T" /dev/null tests/reader/ocamlexe.sh; do
	"$RR" -f gc-stats --exe "$bad" "$T/native54" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q -- "--exe: " "$T/err" || fail "--exe $bad: exit $rc: $(cat "$T/err")"
done
ok "--exe: a finished process's executable (stripped too); not OCaml or unreadable: exit 1"

# --- a real native OCaml 5.3.0~alpha1 program (tests/fixtures/ocaml-5.3/gc:
# gc.ml, built by ocamlopt 5.3.0~alpha1, debug sections stripped, symbols
# kept): 5.1 and later name Stdlib__Sys's data camlStdlib__Sys.data_begin
R53=tests/fixtures/ocaml-5.3/gc
gzip -dc "$R53/gc.exe.gz" >"$T/gc53" && chmod +x "$T/gc53" || exit 1
mkdir -p "$T/gcfix" && gzip -dc "$R53"/*.events.gz >"$T/gcfix/$(basename "$R53"/*.events.gz .gz)"
gzip -dc "$R53"/*.expected.jsonl.gz >"$T/gcfix.expected.jsonl"
"$RR" -f gc-stats-json --exe "$T/gc53" "$T/gcfix" >"$T/g.json" 2>"$T/err" || fail "--exe gc53: $(cat "$T/err")"
[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['sure'], o['executable']['ocaml'], o['executable']['evidence'])")" = \
  "('5.3', 'executable', 'sure', '5.3.0~alpha1', 'Sys.ocaml_version')" ] ||
	fail "--exe real 5.3 executable: $(ocaml "$T/g.json" o)"
[ -s "$T/err" ] && fail "--exe real 5.3 executable: stderr: $(cat "$T/err")"
"$RR" -f jsonl --exe "$T/gc53" "$T/gcfix" >"$T/j.jsonl" &&
	$CHECK jsonl-vs-expected "$T/j.jsonl" "$T/gcfix.expected.jsonl" "$(basename "$R53"/*.events.gz .events.gz)" >/dev/null ||
	fail "--exe real 5.3 executable: names differ from OCaml 5.3's consumer"
# ... and the same program live: its /proc/PID/exe decides, sure
mkdir -p "$T/live53" && rm -f "$T/ctl" "$T/ready" && mkfifo "$T/ctl" "$T/ready" || exit 1
OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_PRESERVE=1 OCAML_RUNTIME_EVENTS_DIR=$T/live53 \
	"$T/gc53" 20000 wait <"$T/ctl" >"$T/ready" &
exec 3>"$T/ctl"
{ read -r _ && read -r word; } <"$T/ready" || word=
if [ "$word" = ready ]; then
	"$RR" -f gc-stats-json "$T/live53" >"$T/g.json" 2>"$T/err" || fail "live gc53: $(cat "$T/err")"
	[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['sure'], o['executable']['path'], o['executable']['ocaml'], o['executable']['evidence'])")" = \
	  "('5.3', 'executable', 'sure', '$(readlink -f "$T/gc53")', '5.3.0~alpha1', 'Sys.ocaml_version')" ] ||
		fail "live real 5.3 program: $(ocaml "$T/g.json" o)"
	"$RR" -f gc-stats "$T/live53" | grep -qF "Names: OCaml 5.3 names (from the executable $(readlink -f "$T/gc53"): OCaml 5.3.0~alpha1, by its Sys.ocaml_version; sure:" ||
		fail "live real 5.3 program: gc-stats text: $("$RR" -f gc-stats "$T/live53" | grep Names)"
else
	fail "live gc53: did not start"
fi
exec 3>&-
wait
"$RR" -f gc-stats-json "$T/live53" >"$T/g.json" 2>/dev/null
[ "$(ocaml "$T/g.json" "(o['version'], o['from'], o['same_names_to'])")" = "('5.3', 'trace', '5.4dev')" ] ||
	fail "real 5.3 program gone: $(ocaml "$T/g.json" o)"
# OCaml 5.0's layout (camlStdlib__Sys__data_begin) is still read
"$RR" -f gc-stats-json --exe "$P-native50" "$T/native54" >"$T/g.json" 2>/dev/null
[ "$(ocaml "$T/g.json" "(o['version'], o['sure'], o['executable']['ocaml'], o['executable']['evidence'])")" = \
  "('5.0', 'sure', '5.0.0', 'Sys.ocaml_version')" ] ||
	fail "--exe native50: $(ocaml "$T/g.json" o)"
ok "a real native OCaml 5.3 program (--exe, and live): its Sys.ocaml_version, sure; 5.0's symbol names too"

# --- hostile executables: truncated and corrupted ELF files never crash
# the reader (each is at worst "not an OCaml 5 program")
size=$(wc -c <"$P-native54")
for cut in 16 64 200 1000 $((size / 2)) $((size - 100)); do
	head -c "$cut" "$P-native54" >"$T/cut"
	"$RR" -f gc-stats --exe "$T/cut" "$T/native54" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "--exe truncated to $cut: exit $rc"
done
python3 - "$P-native54" "$T/bad" <<'EOF'
import random, sys
d = bytearray(open(sys.argv[1], 'rb').read())
rnd = random.Random(16)
for k in range(40):
    b = bytearray(d)
    for _ in range(64):  # the ELF and section headers, then anywhere
        i = rnd.randrange(0, 64) if rnd.random() < 0.3 else rnd.randrange(len(b))
        b[i] = rnd.randrange(256)
    open('%s.%d' % (sys.argv[2], k), 'wb').write(b)
EOF
for f in "$T"/bad.*; do
	"$RR" -f gc-stats --exe "$f" "$T/native54" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "--exe corrupted $(basename "$f"): exit $rc: $(tail -1 "$T/err")"
done
ok "truncated and corrupted executables: read or refused, never a crash"

[ $FAILS -eq 0 ] && rm -rf "$T"
[ $FAILS -eq 0 ] || { echo "$FAILS failure(s); files kept in $T" >&2; exit 1; }
