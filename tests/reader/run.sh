#!/bin/sh
# tests/reader/run.sh BUILD - rte-read end to end: real fixture files of
# OCaml 5.2, synthetic files of known content (gen_ring), live producers
# followed while they write, and every error class with its exit code.
# Each check prints "ok: ..." or fails the run with what went wrong.
set -u
BUILD=${1:-build}
RR=$BUILD/rte-read
GEN=$BUILD/tests/reader/gen_ring
CHECK="python3 tests/reader/check.py"
FIX=tests/fixtures/ocaml-5.2
# A directory of this run's own: several `make test` may run at once in
# one build tree (kept on failure, for a look; removed when all passed).
mkdir -p "$BUILD/tests/reader" && rm -rf "$BUILD/tests/reader/tmp" &&
	T=$(mktemp -d "$BUILD/tests/reader/tmp.XXXXXX") || exit 1
FAILS=0
BGPIDS=""

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
cleanup() { h_watchdog_stop "$T"; for p in $BGPIDS; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT
trap 'exit 1' INT TERM
. "$(dirname "$0")/../watchdog.sh"
h_watchdog "$T"

# expect CODE PATTERN -- CMD...: CMD exits with CODE and its stderr is one
# line matching PATTERN (grep -E), or empty if PATTERN is "".
expect() {
	code=$1 pat=$2
	shift 3
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		fail "$* exited $rc, expected $code: $(cat "$T/err")"
	elif [ -z "$pat" ] && [ -s "$T/err" ]; then
		fail "$* printed on stderr: $(cat "$T/err")"
	elif [ -n "$pat" ] && [ "$code" -ne 1 ] && [ "$(wc -l <"$T/err")" -ne 1 ]; then
		fail "$* stderr is not one line: $(cat "$T/err")"
	elif [ -n "$pat" ] && ! head -1 "$T/err" | grep -Eq "$pat"; then
		fail "$* stderr is not one line matching '$pat': $(cat "$T/err")"
	else
		ok "exit $code${pat:+, '$pat'}: $*"
	fi
}

# ---- the OCaml 5.2 fixtures through --format=jsonl -------------------------
for d in "$FIX"/*/; do
	s=$(basename "$d")
	mkdir -p "$T/fix/$s"
	for gz in "$d"*.events.gz; do
		gzip -dc "$gz" >"$T/fix/$s/$(basename "$gz" .gz)" || fail "gunzip $gz"
	done
	# the whole scenario directory at once: a merged, pid-tagged timeline
	"$RR" --format=jsonl "$T/fix/$s" >"$T/$s.jsonl" 2>"$T/$s.err" ||
		fail "rte-read jsonl $s: $(cat "$T/$s.err")"
	for exp in "$d"*.expected.jsonl; do
		[ -e "$exp" ] || continue # gc/: compressed, gcstats.sh checks it
		pid=$(basename "$exp" .expected.jsonl)
		$CHECK jsonl-vs-expected "$T/$s.jsonl" "$exp" "$pid" || fail "jsonl $s/$pid"
		# and each file on its own
		"$RR" -f jsonl "$T/fix/$s/$pid.events" >"$T/one.jsonl" 2>/dev/null
		$CHECK jsonl-vs-expected "$T/one.jsonl" "$exp" "$pid" >/dev/null || fail "jsonl file $s/$pid"
	done
	$CHECK timeline "$T/$s.jsonl" || fail "timeline $s"
	"$RR" -f chrome -o "$T/$s.chrome.json" "$T/fix/$s" 2>/dev/null || fail "chrome $s"
	$CHECK chrome-valid "$T/$s.chrome.json" || fail "chrome $s"
	for f in text summary summary-json; do
		"$RR" -f $f "$T/fix/$s" >"$T/$s.$f" 2>"$T/err" || fail "$f $s: $(cat "$T/err")"
	done
	python3 -m json.tool "$T/$s.summary-json" >/dev/null || fail "summary-json $s is not JSON"
done
"$BUILD/tests/reader/test_jsonl_fast" "$T"/fix/*/*.events >"$T/jf.log" 2>&1 ||
	{ cat "$T/jf.log"; fail "fast JSONL differs from rte_event_jsonl on the fixtures"; }
ok "fast JSONL writer matches rte_event_jsonl on every fixture event"
grep -q '"kind":"lost"' "$T/wrap.jsonl" || fail "wrap: no lost event"
grep -q 'words lost' "$T/wrap.text" || fail "wrap: text does not show the loss"
grep -Eq '^# [0-9]+ events, [1-9][0-9]* words lost' "$T/wrap.text" || fail "wrap: no lost total"
grep -q '"unmatched":"end"' "$T/wrap.chrome.json" || fail "wrap: unmatched end not marked"
"$RR" -f jsonl "$T/fix/wrap" 2>&1 >/dev/null | grep -q 'words were lost' ||
	fail "wrap: jsonl does not warn about lost words"

# ---- a file of known content ------------------------------------------------
"$GEN" known "$T/known.events" "$T/truth.json" || fail "gen_ring known"
"$RR" -f summary-json "$T/known.events" >"$T/known.sum.json" || fail "summary-json known"
$CHECK summary "$T/known.sum.json" "$T/truth.json" || fail "summary numbers"
"$RR" -f chrome "$T/known.events" >"$T/known.chrome.json" || fail "chrome known"
$CHECK chrome "$T/known.chrome.json" "$T/truth.json" || fail "chrome slices"
"$RR" "$T/known.events" >"$T/known.txt" || fail "text known"
grep -Eq '^ +0\.000000000 +- +4242 +0 - +lifecycle +ring_start +4242$' "$T/known.txt" ||
	fail "text: ring_start line"
grep -Eq ' 1 worker-renamed +lifecycle +domain_terminate +4242$' "$T/known.txt" ||
	fail "text: a thread renamed by another (rte.thread.name_of)"
[ "$(grep -Ec ' 1 worker +user_span +app\.io +end dur 2\.000ms$' "$T/known.txt")" -eq 10 ] ||
	fail "text: app.io ends with their durations"
[ "$(grep -Ec ' main-thread +end +minor +dur 10\.00us$' "$T/known.txt")" -eq 100 ] ||
	fail "text: minor ends with their durations"
"$RR" -f summary "$T/known.events" >"$T/known.sum" || fail "summary known"
grep -Eq '^  app\.work +1000 +500\.500ms +500\.50us' "$T/known.sum" || fail "summary text: app.work row"
grep -Eq '^  0 +0 +main-thread +777 ' "$T/known.sum" || fail "summary text: ring 0 row"
ok "known file: text and summary lines"

# The summary's fast path (runs of a ring, no filter) and the one event at a
# time path (any filter, here one that drops nothing) agree exactly.
same_summary() {
	"$RR" -f summary-json "$@" >"$T/fast.json" 2>/dev/null
	"$RR" -f summary-json -x 'no such event*' "$@" >"$T/slow.json" 2>/dev/null
	cmp -s "$T/fast.json" "$T/slow.json" || fail "summary fast path differs on $*"
}
same_summary "$T/known.events"
for d in "$T"/fix/*/; do same_summary "$d"; done
ok "summary: the fast path and the filtered path agree"

# filters
n=$("$RR" -f jsonl --kind=lifecycle "$T/known.events" | wc -l)
[ "$n" -eq 4 ] || fail "--kind=lifecycle gave $n lines, expected 4"
n=$("$RR" -f jsonl --name='app.w*' "$T/known.events" | wc -l)
[ "$n" -eq 2000 ] || fail "--name='app.w*' gave $n lines, expected 2000"
n=$("$RR" -f jsonl --kind=user --exclude-name='app.*' "$T/known.events" | wc -l)
[ "$n" -eq 5 ] || fail "--kind=user --exclude-name='app.*' gave $n lines, expected 5 (rte.thread.*)"
n=$("$RR" -f jsonl --kind=phase,counter --name=minor --name=minor_allocated "$T/known.events" | wc -l)
[ "$n" -eq 300 ] || fail "--kind=phase,counter with two names gave $n lines, expected 300"
ok "filters by kind and name"

# several files, two processes, a pre-exec file: one timeline
mkdir -p "$T/multi" && "$GEN" multi "$T/multi" || fail "gen_ring multi"
"$RR" -f jsonl "$T/multi" >"$T/multi.jsonl" || fail "multi"
$CHECK timeline "$T/multi.jsonl" || fail "multi timeline"
[ "$(grep -c '^{"pid":100,' "$T/multi.jsonl")" -eq 84 ] || fail "multi: pid 100 (from ring_start) should have 84 events"
[ "$(grep -c '^{"pid":200,' "$T/multi.jsonl")" -eq 81 ] || fail "multi: pid 200 (from the name) should have 81 events"
"$RR" -f jsonl "$T/multi/100.events" "$T/multi/200.events" | $CHECK timeline /dev/stdin >/dev/null ||
	fail "two FILE inputs merged"
ok "directory and several inputs merge into one timeline"

# a closed pipe ends quietly
{ "$RR" "$T/known.events" 2>"$T/err"; echo $? >"$T/rc"; } | head -1 >/dev/null
[ ! -s "$T/err" ] || fail "rte-read | head printed: $(cat "$T/err")"
[ "$(cat "$T/rc")" = 0 ] || fail "rte-read | head exited $(cat "$T/rc")"
ok "rte-read | head exits quietly"
"$RR" --help >"$T/help" || fail "--help exit status"
for c in 0 1 2 3 4 5 6 7; do
	grep -Eq "^  $c  " "$T/help" || fail "--help does not document exit status $c"
	grep -q "^\.B $c\$" doc/rte-read.1 || fail "rte-read.1 does not document exit status $c"
done
if command -v groff >/dev/null; then
	groff -man -ww -z doc/rte-read.1 2>"$T/err" && [ ! -s "$T/err" ] ||
		fail "rte-read.1: $(cat "$T/err")"
fi
ok "--help and the man page document every exit status"

# The formats --help lists (from reader/commands.c's table) are exactly the
# ones -f accepts: each named one reads a fixture, its -f line and its
# Formats section agree, and a name not in the table is refused.
sed -n '/^Formats:/,/^$/p' "$T/help" | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' >"$T/fmts"
sed -n '/--format=FMT/,/^  -o/p' "$T/help" | sed '$d' |
	sed 's/.*--format=FMT//; s/(default)//g' | tr ', ' '\n\n' | grep . >"$T/fmts-f"
[ "$(wc -l <"$T/fmts")" -ge 10 ] || fail "--help lists $(wc -l <"$T/fmts") formats"
cmp -s "$T/fmts" "$T/fmts-f" || fail "--help: -f's list and Formats: differ: $(paste -sd' ' "$T/fmts") / $(paste -sd' ' "$T/fmts-f")"
for f in $(cat "$T/fmts"); do
	"$RR" -f "$f" -o "$T/f.out" "$T/known.events" 2>"$T/err" ||
		fail "-f $f (listed by --help) failed: $(cat "$T/err")"
	grep -qw -- "$f" doc/rte-read.1 || fail "rte-read.1 does not name format $f"
done
expect 1 "unknown format 'nosuch'" -- "$RR" -f nosuch "$T/known.events"
expect 1 "unknown format 'json'" -- "$RR" -f json "$T/known.events"
expect 1 "top goes with" -- "$RR" -f chrome --top 3 "$T/known.events"
"$RR" -f json --top 3 "$T/known.events" >"$T/top.json" 2>"$T/err" || fail "-f json --top 3: $(cat "$T/err")"
ok "--help's formats are the table's, each one runs"

# ---- errors: one line naming the file and the problem, one exit code ----------
: >"$T/empty.events"
head -c 8192 /dev/urandom >"$T/garbage.events"
printf '\001\000\000\000\000\000\000\000' >"$T/badhdr.events"
head -c 4096 /dev/zero >>"$T/badhdr.events"
cp "$T/known.events" "$T/trunc.events" && truncate -s 100000 "$T/trunc.events"
"$GEN" corrupt "$T/corrupt.events" && "$GEN" badname "$T/badname.events" || fail "gen hostile"
mkdir -p "$T/nofiles" && : >"$T/nofiles/readme.txt"
expect 2 "missing\.events: No such file" -- "$RR" "$T/missing.events"
expect 2 "/99999999?\.events: No such file" -- "$RR" -d "$T" 99999999
expect 3 "empty\.events: empty file" -- "$RR" "$T/empty.events"
expect 3 "garbage\.events: not a ring file" -- "$RR" "$T/garbage.events"
expect 3 "badhdr\.events: max_domains 0" -- "$RR" "$T/badhdr.events"
expect 3 "trunc\.events: file is 100000 bytes but its header needs" -- "$RR" "$T/trunc.events"
expect 4 "corrupt\.events: ring 0: .*length 0" -- "$RR" -f jsonl "$T/corrupt.events"
grep -q '"ring":1,"ts":1150,"kind":"begin","id":6,"name":"major"' "$T/out" ||
	fail "corrupt: the healthy ring was not read"
expect 4 "badname\.events: ring 0: name slot of user event 5" -- "$RR" "$T/badname.events"
expect 2 "nofiles: no ring files" -- "$RR" "$T/nofiles"
expect 2 "nodir/x\.events: did not appear in time" -- "$RR" --wait=0.2 "$T/nodir/x.events"
expect 1 "no input" -- "$RR"
expect 1 "unknown format 'xml'" -- "$RR" -f xml "$T/known.events"
expect 1 "unknown kind 'bogus'" -- "$RR" --kind=begin,bogus "$T/known.events"
expect 1 "not a number of seconds" -- "$RR" --wait=soon "$T/known.events"
expect 5 "/nonexistent/dir/out: No such file" -- "$RR" -o /nonexistent/dir/out "$T/known.events"
if [ -w /dev/full ]; then
	expect 5 "standard output: write error: No space left" -- sh -c "'$RR' '$T/known.events' >/dev/full"
fi
# one bad file among good ones: the others are still read, the status says so
mkdir -p "$T/mixed" && cp "$T/known.events" "$T/mixed/1.events" && cp "$T/garbage.events" "$T/mixed/2.events"
expect 3 "mixed/2\.events: not a ring file" -- "$RR" -f jsonl "$T/mixed"
[ "$(wc -l <"$T/out")" -eq 2729 ] || fail "mixed: the good file was not read"

# ---- --follow -----------------------------------------------------------------
# A producer that starts 300 ms late (--wait) and writes 20000 events over
# about 1.5 s: every one is seen or counted lost.
mkdir -p "$T/live"
"$GEN" live "$T/live" 20000 1000 stop 300 & gp=$!
BGPIDS="$BGPIDS $gp"
expect 0 "" -- "$RR" --follow --wait=20 -f jsonl -d "$T/live" "$gp"
cp "$T/out" "$T/follow.jsonl"
$CHECK follow "$T/follow.jsonl" 20000 || fail "follow saw every event"
grep -q '"name":"ring_stop"' "$T/follow.jsonl" || fail "follow: no ring_stop"
wait "$gp"
# A tiny ring written fast: events are lost, and every loss is counted.
"$GEN" live "$T/live" 200000 0 stop 200 10 & gp=$!
BGPIDS="$BGPIDS $gp"
"$RR" --follow --wait=20 -f jsonl -d "$T/live" "$gp" >"$T/fast.jsonl" 2>"$T/err"
[ $? -eq 0 ] || fail "follow fast: $(cat "$T/err")"
$CHECK follow "$T/fast.jsonl" 200000 || fail "follow fast producer"
wait "$gp"
# A producer killed before ring_stop is reported, not waited on.
"$GEN" live "$T/live" 100 0 nostop & gp=$!
BGPIDS="$BGPIDS $gp"
"$RR" --follow --wait=20 -f jsonl -d "$T/live" "$gp" >"$T/killed.jsonl" 2>"$T/err" & rp=$!
sleep 0.5
kill -9 "$gp"
wait "$rp"; rc=$?
[ "$rc" -eq 6 ] || fail "follow killed: exit $rc, expected 6"
grep -q "process $gp ended without ring_stop (killed?)" "$T/err" || fail "follow killed: $(cat "$T/err")"
[ "$(grep -c '"event":"seq"' "$T/killed.jsonl")" -eq 100 ] || fail "follow killed: events before the kill"
ok "follow: a killed producer is reported (exit 6)"
# Ctrl-C ends a follow cleanly: the summary is still written, status 0.
"$GEN" live "$T/live" 300 0 nostop & gp=$!
BGPIDS="$BGPIDS $gp"
"$RR" --follow --wait=20 -f summary -d "$T/live" "$gp" >"$T/int.txt" 2>"$T/err" & rp=$!
sleep 0.5
kill -INT "$rp"
wait "$rp"; rc=$?
[ "$rc" -eq 0 ] || fail "follow interrupted: exit $rc: $(cat "$T/err")"
grep -Eq '^  seq +300 ' "$T/int.txt" || fail "follow interrupted: no summary"
kill -9 "$gp"
ok "follow: SIGINT ends cleanly with the summary"
# A file cut short under the reader: SIGBUS is reported, exit 3.
"$GEN" live "$T/live" 10 0 nostop & gp=$!
BGPIDS="$BGPIDS $gp"
"$RR" --follow --wait=20 -f jsonl -d "$T/live" "$gp" >/dev/null 2>"$T/err" & rp=$!
sleep 0.5
truncate -s 0 "$T/live/$gp.events"
wait "$rp"; rc=$?
[ "$rc" -eq 3 ] || fail "truncated under the reader: exit $rc, expected 3"
grep -q "$gp.events: file was truncated while being read" "$T/err" || fail "truncated: $(cat "$T/err")"
kill -9 "$gp"
ok "a file truncated under the reader: exit 3"
# Following a directory picks up a process that appears later.
mkdir -p "$T/livedir"
"$GEN" live "$T/livedir" 500 200 stop 300 & gp=$!
BGPIDS="$BGPIDS $gp"
expect 0 "" -- "$RR" --follow --wait=20 -f jsonl "$T/livedir"
[ "$(grep -c '"event":"seq"' "$T/out")" -eq 500 ] || fail "follow dir: events"
wait "$gp"

# A real program under the real shim: three threads and a forked child
# writing while rte-read follows, by pid and by directory.
TRACED=$BUILD/tests/reader/traced
PRELOAD=$PWD/$BUILD/librte.so
if ldd "$RR" | grep -q libasan; then # ASan first, as the runtime wants
	PRELOAD="$(${CC:-cc} -print-file-name=libasan.so) $PRELOAD"
	ASAN_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
fi
run_traced() {
	exec env OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		OCAML_RUNTIME_EVENTS_DIR="$1" ${ASAN_PRELOAD:+LD_PRELOAD=$ASAN_PRELOAD} \
		"$TRACED" "$2" "$3" ${4:-}
}
mkdir -p "$T/shim1" "$T/shim2"
run_traced "$T/shim1" 3000 300 & gp=$!
BGPIDS="$BGPIDS $gp"
expect 0 "" -- "$RR" --follow --wait=20 -f jsonl -d "$T/shim1" "$gp"
cp "$T/out" "$T/shim1.jsonl"
wait "$gp" || fail "traced exited $?"
$CHECK follow "$T/shim1.jsonl" 3000 3 || fail "follow a traced process"
"$RR" -f summary-json "$T/shim1" | grep -q '"thread":"worker-2"' || fail "thread names from the shim"
same_summary "$T/shim1"
run_traced "$T/shim2" 2000 300 fork & gp=$!
BGPIDS="$BGPIDS $gp"
sleep 0.1
expect 0 "" -- "$RR" --follow --wait=20 -f jsonl "$T/shim2"
cp "$T/out" "$T/shim2.jsonl"
wait "$gp" || fail "traced fork exited $?"
$CHECK follow "$T/shim2.jsonl" 2000 4 || fail "follow a traced process tree"
# Live, only each ring's order is guaranteed (see --follow in rte-read(1)).
$CHECK ring-timelines "$T/shim2.jsonl" >/dev/null || fail "follow tree: time order"
# Following a pid across exec: a traced shell execs the traced program.
mkdir -p "$T/exec"
env OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_PRESERVE=1 \
	OCAML_RUNTIME_EVENTS_DIR="$T/exec" LD_PRELOAD="$PRELOAD" \
	sh -c 'sleep 0.3; exec "$0" 500 100' "$PWD/$TRACED" & gp=$!
BGPIDS="$BGPIDS $gp"
expect 0 "" -- "$RR" --follow --wait=20 -f jsonl -d "$T/exec" "$gp"
cp "$T/out" "$T/exec.jsonl"
wait "$gp" || fail "exec'd traced exited $?"
$CHECK follow "$T/exec.jsonl" 500 3 || fail "follow across exec"
[ "$(grep -c '"name":"ring_start"' "$T/exec.jsonl")" -ge 2 ] || fail "follow across exec: one image only"

# ---- --clean: what killed processes left, and nothing else -----------------
C=$T/clean
mkdir -p "$C"
"$GEN" live "$C" 50 0 nostop & dead=$!   # killed below: a stale file
"$GEN" live "$C" 50 0 nostop & live=$!   # still running
BGPIDS="$BGPIDS $dead $live"
"$RR" --wait=20 -f jsonl -d "$C" "$dead" >/dev/null 2>&1 || fail "clean: no file of $dead"
"$RR" --wait=20 -f jsonl -d "$C" "$live" >/dev/null 2>&1 || fail "clean: no file of $live"
sleep 0.2 # both have written their events and wait
kill -9 "$dead"
wait "$dead" 2>/dev/null
cp "$T/known.events" "$C/4242.events"           # finished: has ring_stop
cp "$C/$dead.events" "$C/.$dead.events.exec"    # leftovers of a dead pid
cp "$C/$dead.events" "$C/.$dead.0123abcd.events.tmp"
cp "$C/$dead.events" "$C/.$live.events.exec"    # ... of a live one: kept
for n in "notes.events.txt" "abc.events" "12a.events" ".$dead.0123ABCD.events.tmp" \
	".$dead.events.exec.bak" "$dead.exec.events"; do
	cp "$C/$dead.events" "$C/$n"                # not names of ours: kept
done
cp "$T/garbage.events" "$C/55.events"           # not a ring file: kept
ln -s "$C/$dead.events" "$C/77.events"          # not a regular file: kept
ls -A "$C" | sort >"$T/clean.before"
# text and summary tell a killed writer from a running one
"$RR" "$C/$dead.events" >"$T/out" 2>"$T/err" || fail "text of a killed writer's file: $(cat "$T/err")"
grep -q "^# $C/$dead.events: process $dead ended without ring_stop (killed?) and is gone$" "$T/out" ||
	fail "text does not say the writer was killed: $(tail -2 "$T/out")"
"$RR" -f summary "$C/$dead.events" "$C/$live.events" >"$T/out" 2>"$T/err" || fail "summary: $(cat "$T/err")"
grep -q "$dead.events (no ring_stop: its writer ended without it and is gone, killed?)" "$T/out" ||
	fail "summary does not say the writer was killed"
grep -q "$live.events (no ring_stop yet: its writer is running)" "$T/out" ||
	fail "summary does not say the writer is running"
"$RR" -f summary-json "$C/$dead.events" | grep -q "\"killed_files\":\[\"$C/$dead.events\"\]" ||
	fail "summary-json: no killed_files"
"$RR" "$C/$live.events" | grep -q 'killed' && fail "text says a running writer was killed"
ok "text and summary say when a writer ended without ring_stop and is gone"
want=$(printf '%s\n' "$C/$dead.events" "$C/.$dead.events.exec" "$C/.$dead.0123abcd.events.tmp" | sort)
expect 0 "" -- "$RR" --clean --dry-run "$C"
[ "$(sed 's/^would remove \([^:]*\): .*/\1/' "$T/out" | sort)" = "$want" ] ||
	fail "clean --dry-run listed: $(cat "$T/out")"
[ "$(ls -A "$C" | sort)" = "$(cat "$T/clean.before")" ] || fail "clean --dry-run removed files"
grep -q "^would remove $C/$dead.events: process $dead ended without ring_stop (killed?)$" "$T/out" ||
	fail "clean --dry-run: $(cat "$T/out")"
expect 0 "" -- env OCAML_RUNTIME_EVENTS_DIR="$C" "$RR" --clean
[ "$(sed 's/^removed \([^:]*\): .*/\1/' "$T/out" | sort)" = "$want" ] ||
	fail "clean removed: $(cat "$T/out")"
for f in "$C/$dead.events" "$C/.$dead.events.exec" "$C/.$dead.0123abcd.events.tmp"; do
	[ ! -e "$f" ] || fail "clean left $f"
done
[ "$(ls -A "$C" | wc -l)" -eq $(($(wc -l <"$T/clean.before") - 3)) ] ||
	fail "clean removed more than the 3 files: $(ls -A "$C")"
[ -L "$C/77.events" ] || fail "clean removed a symlink"
expect 0 "" -- "$RR" --clean "$C"
[ ! -s "$T/out" ] || fail "a second clean removed: $(cat "$T/out")"
expect 1 "goes with --clean" -- "$RR" --dry-run "$C"
expect 2 "nodir: No such file" -- "$RR" --clean "$T/nodir"
kill -9 "$live"
ok "clean removes a killed writer's file and the shim's leftovers, nothing else"

if [ "$FAILS" -ne 0 ]; then
	echo "reader tests: $FAILS failure(s)" >&2
	exit 1
fi
rm -rf "$T"
echo "reader tests: all passed"
