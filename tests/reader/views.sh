#!/bin/sh
# tests/reader/views.sh [TEST...] - what rte-read's views show of real
# programs, recounted independently from --format=jsonl of the same files
# (tests/reader/views_check.py):
#   test_demo              the demo (demo/demo.c) writes its collections as
#                          OCaml 5.2 does, and its summary, summary-json
#                          and gc-stats agree with the recount; its
#                          Chrome trace as below
#   test_chrome_c          threads in waves and forks (from main and from a
#                          thread) in C: fork arrows forward, one track per
#                          thread tenancy, threads per process
#   test_chrome_python     python3 threads, a multiprocessing pool, a
#                          subprocess: the same
#   test_chrome_old_files  files of the shim that stamped fork_parent after
#                          fork() (tests/fixtures/rte-fork-late), and
#                          OCaml 5.2's own (a reused ring: a track for each
#                          of its domains): the same
# Each prints "== views: ..." and its failures; none: all tests.
#
# Environment: RTE_BUILD (the absolute build folder; set by mk/reader.mk).
set -u
RTE_TEST_NAME=views
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.sh"
RUN=$B/rte-run
VC="python3 $HERE/views_check.py"
FIX=$HERE/../fixtures

# chrome_views NAME DIR [--stamps]: jsonl and chrome (with --all and
# without) of DIR checked
chrome_views() {
	"$RR" -f jsonl -o "$W/$1.jsonl" "$2" || fail "$1: jsonl: exit $?"
	"$RR" -f chrome --all -o "$W/$1.all.json" "$2" || fail "$1: chrome --all: exit $?"
	$VC chrome "$W/$1.jsonl" "$W/$1.all.json" ${3:-} || fail "$1: chrome --all"
	"$RR" -f chrome -o "$W/$1.json" "$2" || fail "$1: chrome: exit $?"
	python3 - "$W/$1.all.json" "$W/$1.json" <<'PY' || fail "$1: arrows or tracks differ without --all"
import json, sys
def key(p):
    d = json.load(open(p))["traceEvents"]
    return (sorted((e["ph"], e["pid"], e["tid"], e["ts"]) for e in d if e["ph"] in "sf"),
            sorted((e["pid"], e["tid"]) for e in d if e["ph"] == "M" and e["name"] == "thread_name"))
sys.exit(key(sys.argv[1]) != key(sys.argv[2]))
PY
}

test_demo() {
	begin "the demo: collections as OCaml 5.2 writes them, every figure as recounted"
	"$RUN" -q -d "$W/demo" -- "$B/demo/rte-demo" >"$W/demo.out" || fail "rte-demo: exit $?"
	"$RR" -f jsonl -o "$W/demo.jsonl" "$W/demo" || fail "jsonl: exit $?"
	"$RR" -f summary-json -o "$W/demo.sj" "$W/demo" || fail "summary-json: exit $?"
	"$RR" -f gc-stats-json -o "$W/demo.gj" "$W/demo" || fail "gc-stats-json: exit $?"
	"$RR" -f summary -o "$W/demo.txt" "$W/demo" || fail "summary: exit $?"
	$VC demo "$W/demo.jsonl" "$W/demo.sj" "$W/demo.gj" "$W/demo.txt" || fail "figures"
	chrome_views demo "$W/demo" --stamps
}

test_chrome_c() {
	begin "chrome: C threads in waves and forks from two threads"
	# --alloc: the allocation counts flushed at each fork are written
	# on the forking thread's ring too
	"$RUN" -q --alloc -d "$W/c" -- "$B/tests/reader/forkthreads" 3 6 2 || fail "forkthreads: exit $?"
	chrome_views c "$W/c" --stamps
}

test_chrome_python() {
	begin "chrome: python3 threads, a multiprocessing pool, a subprocess"
	# (Under ASan, Python's own leaks are not ours to report.)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		"$RUN" -q -d "$W/py" -- /usr/bin/python3 "$HERE/pythreads.py" || fail "python3: exit $?"
	chrome_views py "$W/py" --stamps
}

test_chrome_old_files() {
	begin "chrome: files with late fork_parent stamps, OCaml 5.2's domains and fork"
	for s in rte-fork-late ocaml-5.2/domains ocaml-5.2/fork; do
		n=$(echo "$s" | tr / -)
		mkdir -p "$W/$n"
		for gz in "$FIX/$s/"*.events.gz; do
			gzip -dc "$gz" >"$W/$n/$(basename "$gz" .gz)" || fail "gunzip $gz"
		done
		chrome_views "$n" "$W/$n"
	done
}

if [ $# -gt 0 ]; then
	for t in "$@"; do "$t"; done
else
	test_demo
	test_chrome_c
	test_chrome_python
	test_chrome_old_files
fi
if [ $fails -ne 0 ]; then
	echo "views: $fails failure(s) in $tests tests" >&2
	exit 1
fi
echo "views: all $tests tests passed"
