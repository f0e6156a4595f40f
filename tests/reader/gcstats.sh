#!/bin/sh
# tests/reader/gcstats.sh BUILD - rte-read's GC statistics and OCaml
# version tables on real files: every fixture of OCaml 5.2 (including the
# GC-heavy gc/ and the lossy gc-lossy/), of OCaml 5.3.0~alpha1 (its own
# test suite's programs, and a GC-heavy multi-domain one) and of a 5.4
# development runtime. Every figure of gc-stats-json is recomputed by
# tests/reader/gcstats_check.py twice: from --format=jsonl of the same
# file, and from the events the release's own consumer decoded (the
# fixtures' PID.expected.jsonl: no rte code in the figures expected). The
# names of every event must be those its own consumer printed, and the
# release named (or the range of releases) must hold the one that wrote
# the file.
set -u
BUILD=${1:-build}
RR=$BUILD/rte-read
CHECK="python3 tests/reader/check.py"
GCCHECK="python3 tests/reader/gcstats_check.py"
mkdir -p "$BUILD/tests/reader" && T=$(mktemp -d "$BUILD/tests/reader/gc.XXXXXX") || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }

# field FILE EXPR: a value of a JSON document (python expression on d)
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

for d in tests/fixtures/ocaml-5.2/*/ tests/fixtures/ocaml-5.3/*/ tests/fixtures/ocaml-5.4dev/*/; do
	set -- "$d"*.events.gz
	[ -e "$1" ] || continue # ocaml-5.3/src: the programs
	v=$(basename "$(dirname "$d")") s=$(basename "$d")
	w="$T/$v/$s"
	mkdir -p "$w"
	for gz in "$d"*.events.gz; do
		gzip -dc "$gz" >"$w/$(basename "$gz" .gz)" || fail "gunzip $gz"
	done
	"$RR" -f jsonl "$w" >"$T/j.jsonl" 2>/dev/null || fail "$v/$s: jsonl"
	"$RR" -f gc-stats-json "$w" >"$T/g.json" 2>"$T/err" || fail "$v/$s: gc-stats-json: $(cat "$T/err")"
	$GCCHECK "$T/j.jsonl" "$T/g.json" || fail "$v/$s: gc-stats figures"
	exp=
	for e in "$d"*.expected.jsonl "$d"*.expected.jsonl.gz; do
		[ -e "$e" ] || continue
		pid=$(basename "$(basename "$e" .gz)" .expected.jsonl)
		gzip -dcf "$e" >"$w/$pid.expected.jsonl"
		exp="$exp $pid=$w/$pid.expected.jsonl"
	done
	# shellcheck disable=SC2086 # one PID=FILE word each
	$GCCHECK --expected $exp "$T/g.json" >/dev/null ||
		fail "$v/$s: gc-stats figures differ from those of the consumer's events: $($GCCHECK --expected $exp "$T/g.json" | head -5)"
	# the summary's GC section is the same object
	"$RR" -f summary-json "$w" >"$T/s.json" 2>/dev/null || fail "$v/$s: summary-json"
	[ "$(field "$T/s.json" "[p['gc'] for p in d['processes']]")" = \
	  "$(field "$T/g.json" "[p['gc'] if p['runtime_events'] else None for p in d['processes']]")" ] ||
		fail "$v/$s: the summary's gc section differs from gc-stats-json"
	# the text forms print the same GC share
	"$RR" -f gc-stats "$w" >"$T/g.txt" || fail "$v/$s: gc-stats"
	"$RR" -f summary "$w" >"$T/s.txt" || fail "$v/$s: summary"
	for p in $(field "$T/g.json" "' '.join('%.2f' % p['gc']['gc_pct'] for p in d['processes'] if p['runtime_events'])"); do
		grep -Eq "GC overhead \(% of CPU time\): +~?$p%" "$T/g.txt" || fail "$v/$s: gc-stats text lacks GC overhead $p%"
		grep -Eq "GC overhead \(% of CPU time\): +~?$p%" "$T/s.txt" || fail "$v/$s: summary text lacks GC overhead $p%"
	done
	# the release named: the one that wrote the file, or a range holding
	# it (version = same_names_from .. same_names_to), never another
	want=${v#ocaml-}
	[ "$(field "$T/g.json" "sorted({(lambda o, r=['5.0','5.1','5.2','5.3','5.4dev']: o['version'] == o['same_names_from'] and r.index(o['version']) <= r.index('$want') <= r.index(o['same_names_to']))(p['gc']['ocaml']) for p in d['processes'] if p['runtime_events']})")" = "[True]" ] ||
		fail "$v/$s: OCaml release named: $(field "$T/g.json" "[p['gc']['ocaml'] for p in d['processes']]")"
	# ... and every event named as OCaml's consumer did
	for pe in $exp; do
		$CHECK jsonl-vs-expected "$T/j.jsonl" "${pe#*=}" "${pe%%=*}" >/dev/null ||
			fail "$v/$s/${pe%%=*}: jsonl names differ from OCaml's own consumer"
	done
done
ok "gc-stats figures agree with jsonl and with OCaml's consumers' events, names with OCaml's consumers, releases named right, on every fixture"

# a 5.3 file: 5.3 and 5.4dev name its ids alike; the text says the range
"$RR" -f gc-stats "$T/ocaml-5.3/counters" | grep -qF "Names: OCaml 5.3 to 5.4dev names (from the trace nesting, sure:" ||
	fail "5.3 counters: gc-stats text: $("$RR" -f gc-stats "$T/ocaml-5.3/counters" | grep Names)"
"$RR" -f summary "$T/ocaml-5.3/counters" | grep -qF "Names: OCaml 5.3 to 5.4dev names (from the trace nesting, sure:" ||
	fail "5.3 counters: summary text does not say the range"
ok "a 5.3 file is named 5.3 to 5.4dev (the releases that name its ids alike), not 5.4dev"

# OCaml's test_caml_slot_reuse begins thousands of major_slice with no
# phase open on both rings: detection still reads the nestings behind
# them and is sure (it used to stop at 4096 such phases: "by default,
# guess: 0 of 4100")
for r in 5.2:5.1:5.2 5.3:5.3:5.4dev; do
	w=$T/ocaml-${r%%:*}/slot_reuse want=${r#*:}
	"$RR" -f gc-stats-json "$w" >"$T/g.json"
	[ "$(field "$T/g.json" "(lambda o: (o['from'], o['sure'], o['version'] + ':' + o['same_names_to'], o['explained'] * 10 >= o['nestings'] * 9))(d['processes'][0]['gc']['ocaml'])")" = \
	  "('trace', 'sure', '$want', True)" ] ||
		fail "$w: detection: $(field "$T/g.json" "d['processes'][0]['gc']['ocaml']")"
done
ok "real 5.2 and 5.3 files with thousands of top-level phases (OCaml's test_caml_slot_reuse): detection sure"

# a GC-heavy 5.3 program, four domains and a reused ring, nothing lost:
# every lifetime is exact (5.3's counters after domain_terminate start
# none), and their sum is what the consumer's events say (checked above)
"$RR" -f gc-stats-json "$T/ocaml-5.3/gc" >"$T/g.json"
[ "$(field "$T/g.json" "(lambda g: (g['lost_words'], g['cpu_lower_bound'], [x['lifetime_lower_bound'] for x in g['domains']]))(d['processes'][0]['gc'])")" = \
  "(0, False, [False, False, False, False])" ] ||
	fail "5.3 gc: lifetimes: $(field "$T/g.json" "[(x['ring'], x['lifetime_ns'], x['lifetime_lower_bound']) for x in d['processes'][0]['gc']['domains']]")"
"$RR" -f gc-stats "$T/ocaml-5.3/gc" | grep -v "beyond the histogram" | grep -q ">=" && fail "5.3 gc: a lossless file has figures marked >="
ok "5.3 GC-heavy multi-domain file: CPU time and every domain's lifetime exact"

# the 5.4dev files under 5.2's names are wrong, and detection is sure of it
w=$T/ocaml-5.4dev/gc
"$RR" -f jsonl --ocaml-version=5.2 "$w" >"$T/j52.jsonl"
gzip -dc tests/fixtures/ocaml-5.4dev/gc/*.expected.jsonl.gz >"$T/exp.jsonl"
$CHECK jsonl-vs-expected "$T/j52.jsonl" "$T/exp.jsonl" "$(basename "$w"/*.events .events)" >/dev/null 2>&1 &&
	fail "--ocaml-version=5.2 on a 5.4dev file still gives 5.4dev names"
"$RR" -f gc-stats-json "$w" >"$T/g.json"
[ "$(field "$T/g.json" "d['processes'][0]['gc']['ocaml']['sure']")" = sure ] || fail "5.4dev gc: detection not sure"
"$RR" -f gc-stats-json --ocaml-version=5.3 "$w" >"$T/g.json"
[ "$(field "$T/g.json" "d['processes'][0]['gc']['ocaml']['sure']")" = forced ] || fail "--ocaml-version=5.3 not forced"
"$RR" -f gc-stats "$w" | grep -q "Names: OCaml 5.4dev names (from the trace nesting, sure" || fail "gc-stats text does not say the names"
"$RR" -f summary "$w" | grep -q "Names: OCaml 5.4dev names (from the trace nesting, sure" || fail "summary text does not say the names"
"$RR" -f gc-stats --ocaml-version=9.9 "$w" >/dev/null 2>"$T/err"
[ $? -eq 1 ] && grep -q "unknown version '9.9'" "$T/err" || fail "--ocaml-version=9.9: $(cat "$T/err")"
# the 5.4.0 release is not covered (only trunk's 5.4dev), nor is a made-up patch
for v in 5.4.0 5.4 5.2.x 5.2.; do
	"$RR" -f gc-stats --ocaml-version=$v "$w" >/dev/null 2>"$T/err"
	[ $? -eq 1 ] || fail "--ocaml-version=$v accepted"
done
"$RR" -f gc-stats --ocaml-version=5.2.1 "$w" >/dev/null 2>&1 || fail "--ocaml-version=5.2.1 refused"
ok "names: 5.4dev detected (sure), --ocaml-version forces a table, an unknown one is a usage error"

# lost words: lower bounds marked, never a nonsense wall time (olly #63)
w=$T/ocaml-5.2/gc-lossy
"$RR" -f gc-stats-json "$w" >"$T/g.json"
[ "$(field "$T/g.json" "(lambda g: (g['gc_lower_bound'], g['cpu_lower_bound'], g['allocations']['lower_bound'], g['pauses']['lower_bound'], g['wall_ns'] < 10**9))(d['processes'][0]['gc'])")" = \
  "(True, True, True, True, True)" ] || fail "gc-lossy: lower bounds not all marked"
"$RR" -f gc-stats "$w" | grep -Eq "GC time \(s\): +>=[0-9]" || fail "gc-lossy text: GC time not marked >="
# per domain: a domain that lost words has its GC time, pauses and waits marked
"$RR" -f gc-stats "$w" | awk '/Per domain stats/ {on = 1; next} on && $1 ~ /^[0-9]+$/ && $NF > 0 {
	n++; if ($4 !~ /^>=/ || $6 !~ /^>=/ || $7 !~ /^>=/) bad++ } END { exit !(n > 0 && !bad) }' ||
	fail "gc-lossy text: a domain with lost words not marked >=: $("$RR" -f gc-stats "$w" | sed -n '/Per domain/,$p')"
"$RR" -f summary-json "$w" >"$T/s.json"
[ "$(field "$T/s.json" "d['processes'][0]['wall_ns'] < 10**9")" = True ] ||
	fail "gc-lossy: the summary's wall time counts from a loss's time 0"
"$RR" -f gc-stats-json "$T/ocaml-5.2/gc" >"$T/g.json"
[ "$(field "$T/g.json" "(lambda g: (g['gc_lower_bound'], g['cpu_lower_bound'], g['wall_lower_bound']))(d['processes'][0]['gc'])")" = \
  "(False, False, False)" ] || fail "gc: a lossless file has lower bounds"
ok "lost words make the figures they touch lower bounds; wall time stays sane"

if [ "$FAILS" -ne 0 ]; then
	echo "gc-stats tests: $FAILS failure(s)" >&2
	exit 1
fi
rm -rf "$T"
echo "gc-stats tests: all passed"
