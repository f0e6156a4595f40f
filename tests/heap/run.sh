#!/bin/sh
# run.sh - the heap of the allocation profiler (RTE_ALLOC): the peak and
# its sites, the heap series (summary, Chrome counter track), the
# temporary allocations, on real programs under the real shim, read back
# with the real rte-read, and against Debian's heaptrack + heaptrack_print
# where installed. Environment (mk/tests-heap.mk): RTE_BUILD; RTE_SAN.
set -u

B=${RTE_BUILD:?RTE_BUILD is not set}
T=$B/tests/heap
LIB=$B/librte.so
READ=$B/rte-read
SAN=${RTE_SAN:-}
HERE=$(cd "$(dirname "$0")" && pwd)
CHECK="python3 $HERE/check.py"
PY=$(readlink -f /usr/bin/python3)
TMO="timeout 300"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rte-heap.XXXXXX") || exit 1
. "$HERE/../harness.sh"

# traced NAME CMD...: CMD under the shim (with the VAR=value words of
# $EXTRA, and the library $AFTER preloaded after librte.so) (RTE_ALLOC=1, from the start)
# into $D/NAME/, its output in $D/NAME.out, and CMD alone: same status
# and output. Then $D/NAME.sj (summary-json), $D/NAME.txt (summary).
traced() {
	name=$1
	shift
	mkdir -p "$D/$name"
	$TMO "$@" >"$D/$name.plain" 2>/dev/null
	st_plain=$?
	$TMO env LD_PRELOAD="$LIB${AFTER:+ $AFTER}" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/$name" OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		RTE_ALLOC=1 ${EXTRA:-} "$@" >"$D/$name.out" 2>"$D/$name.err"
	st=$?
	[ "$st" = "$st_plain" ] || fail "$name: exit $st under the shim, $st_plain without"
	cmp -s "$D/$name.plain" "$D/$name.out" || fail "$name: output differs"
	"$READ" -f summary-json "$D/$name"/*.events >"$D/$name.sj" || fail "summary-json"
	"$READ" -f summary "$D/$name"/*.events >"$D/$name.txt" || fail "summary"
}

# heaptrack NAME CMD...: CMD under heaptrack, heaptrack_print's report in
# $D/NAME.ht; returns 1 (skipped) where heaptrack cannot run.
heaptrack_of() {
	name=$1
	shift
	if ! command -v heaptrack >/dev/null || ! command -v heaptrack_print >/dev/null; then
		skip "$CUR heaptrack" "heaptrack not installed (Debian's heaptrack)"
		return 1
	fi
	if [ -n "$SAN" ]; then
		skip "$CUR heaptrack" "heaptrack's preload and $SAN's runtime in one process"
		return 1
	fi
	$TMO heaptrack -o "$D/$name.ht" "$@" >/dev/null 2>&1 || { fail "heaptrack: exit $?"; return 1; }
	heaptrack_print -T 1 -p 1 -l 1 "$D/$name.ht.zst" >"$D/$name.ht" 2>/dev/null ||
		{ fail "heaptrack_print: exit $?"; return 1; }
}

# The issue's program of known shape: a 48 MiB burst freed, 100 000
# temporaries of 64..127 bytes, 8 MiB leaked by leak_here.
t_shape() {
	begin shape
	traced shape "$T/shape"
	$CHECK shape "$D/shape.sj" "$D/shape.txt" || fail "shape's heap"
	if heaptrack_of shape "$T/shape"; then
		$CHECK heaptrack "$D/shape.sj" "$D/shape.ht" exact-temps ||
			fail "not as heaptrack says"
	fi
	"$READ" -f chrome "$D/shape"/*.events >"$D/shape.json" || fail "chrome"
	$CHECK chrome "$D/shape.json" "$D/shape.sj" || fail "no heap counter track"
	finish
}

# A Python program building dicts (every object through malloc:
# PYTHONMALLOC=malloc, so that both tools see them).
t_python() {
	begin python
	export PYTHONMALLOC=malloc
	traced py "$PY" "$HERE/progs/dicts.py"
	if heaptrack_of py "$PY" "$HERE/progs/dicts.py"; then
		$CHECK heaptrack "$D/py.sj" "$D/py.ht" ||
			fail "not as heaptrack says"
	fi
	unset PYTHONMALLOC
	finish
}

# sampled NAME CMD...: CMD under rte-run --alloc (its live drain, so
# that no sample is lost; one sample per 512 bytes on average: a top
# site's estimate within about 1 %) into $D/NAME.sj, its output in
# $D/NAME.out, the same as CMD's alone; heaptrack's data file of the
# same command in $D/NAME.ht.zst. Returns 1 (skipped) where heaptrack
# cannot run.
sampled() {
	name=$1
	shift
	$TMO "$@" >"$D/$name.plain" 2>/dev/null
	OCAMLRUNPARAM=e=20 RTE_ALLOC_SAMPLE=512 $TMO "$B/rte-run" --alloc \
		--fail-on-lost -q -d "$D/$name.d" -f summary-json -o "$D/$name.sj" \
		"$@" >"$D/$name.out" 2>"$D/$name.err" || fail "$name: rte-run: exit $?"
	cmp -s "$D/$name.plain" "$D/$name.out" || fail "$name: output differs"
	heaptrack_of "$name" "$@"
}

# The top 5 allocation sites by bytes against heaptrack's (its data file:
# heaptrack_print does not rank by bytes): a C program of seven sites of
# known weights (heaptrack's bytes exact, ours within 5 %, the order the
# program's), and Python building dicts (the same set).
t_sites() {
	begin sites
	if sampled sites "$T/sites"; then
		$CHECK sites "$D/sites.sj" "$D/sites.ht.zst" "$D/sites.out" ||
			fail "C sites not as heaptrack's"
	fi
	# one hash seed for both runs: with a random one each run's dicts
	# grow differently (a site's bytes moved by 3 % between runs)
	export PYTHONMALLOC=malloc PYTHONHASHSEED=0
	if sampled pysites "$PY" "$HERE/progs/dicts.py"; then
		$CHECK sites "$D/pysites.sj" "$D/pysites.ht.zst" ||
			fail "Python's sites not as heaptrack's"
	fi
	unset PYTHONMALLOC PYTHONHASHSEED
	# gcc's compiler proper (cc1: Debian's is not PIE, stripped, named by
	# its dynamic symbols) on one of our own C files, preprocessed first
	cc1=$(gcc -print-prog-name=cc1 2>/dev/null)
	if [ -x "$cc1" ] && gcc -E -I"$HERE/../../include" -I"$HERE/../../common" \
		-I"$HERE/../../reader" "$HERE/../../reader/profile.c" -o "$D/p.i" 2>/dev/null; then
		if sampled cc1 "$cc1" -fpreprocessed "$D/p.i" -quiet -O2 -o "$D/p.s"; then
			$CHECK sites "$D/cc1.sj" "$D/cc1.ht.zst" || fail "cc1's sites not as heaptrack's"
		fi
	else
		skip "sites cc1" "no gcc's cc1 to run"
	fi
	finish
}

# The reader's peak from odd sequences of rte.alloc.peak / peak_ns (a
# wrapped ring loses a peak_ns, a hostile one anything; progs/peaks.c):
# the highest rte.alloc.peak, the time of that value or null.
t_peaks() {
	begin peaks
	mkdir -p "$D/ev"
	"$T/peaks" "$D/ev" || fail "peaks: exit $?"
	"$READ" -f summary-json "$D/ev"/*.events >"$D/sj" || fail "summary-json"
	python3 - "$D/sj" <<'PY' || fail "peaks not as written"
import json, sys
want = {50: (3000, None), 51: (500, 600), 52: (4000, 900)}
got = {p["pid"]: (p["alloc_profile"]["peak_bytes"], p["alloc_profile"]["peak_ns"])
       for p in json.load(open(sys.argv[1]))["processes"] if p.get("alloc_profile")}
print("     peaks (bytes, ns) by pid:", got)
sys.exit(0 if got == want else 1)
PY
	"$READ" -f summary "$D/ev/50.events" | grep -q "peak heap: 3000 usable bytes" ||
		fail "summary: no peak of 3000"
	finish
}

# The odd calls: counted right, the same output, no crash; the slack 0
# (every call added at once) gives the same figures.
t_bad() {
	begin bad
	# bad.c's handler calls malloc on purpose (raised synchronously)
	TSAN_OPTIONS="report_signal_unsafe=0 ${TSAN_OPTIONS:-}"
	export TSAN_OPTIONS
	traced bad "$T/bad"
	want=$(awk '$1 == "temps" { print $2 }' "$D/bad.out")
	$CHECK bad "$D/bad.sj" "$want" "$D/bad.txt" || fail "odd calls"
	EXTRA=RTE_ALLOC_HEAP_SLACK=0 traced bad0 "$T/bad"
	$CHECK bad "$D/bad0.sj" "$want" || fail "odd calls, slack 0"
	finish
}

# tcmalloc preloaded after librte.so: we wrap it, its malloc_usable_size
# measures the blocks; the same figures as over glibc's malloc.
t_tcmalloc() {
	tc=$(ls /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -n 1)
	[ -n "$tc" ] || { skip tcmalloc "no libtcmalloc.so.4 (apt-get install libgoogle-perftools4)"; return; }
	begin tcmalloc
	AFTER=$tc traced tc "$T/shape"
	$CHECK shape "$D/tc.sj" "$D/tc.txt" || fail "shape's heap over tcmalloc"
	finish
}

# jemalloc (Debian's libjemalloc2): preloaded after librte.so and linked
# into the program, we wrap it (its malloc_usable_size measures the
# blocks): the same figures as over glibc's malloc, Python's sites as
# heaptrack's over glibc (the bytes asked for do not depend on the
# allocator); preloaded before librte.so, it takes the calls: RTE_ALLOC
# stands aside with one line, the program runs as without us.
t_jemalloc() {
	je=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1)
	[ -n "$je" ] || { skip jemalloc "no libjemalloc.so.2 (apt-get install libjemalloc2)"; return; }
	begin jemalloc
	AFTER=$je traced je "$T/shape"
	$CHECK shape "$D/je.sj" "$D/je.txt" || fail "shape's heap over jemalloc preloaded"
	if [ -x "$T/shape_je" ]; then
		ldd "$T/shape_je" | grep -q libjemalloc || fail "shape_je is not linked with jemalloc"
		traced jelinked "$T/shape_je"
		$CHECK shape "$D/jelinked.sj" "$D/jelinked.txt" ||
			fail "shape's heap, linked with jemalloc"
	else
		fail "no $T/shape_je (built where libjemalloc.so.2 is installed)"
	fi
	export PYTHONMALLOC=malloc
	AFTER=$je traced jepy "$PY" "$HERE/progs/dicts.py"
	if heaptrack_of jepy "$PY" "$HERE/progs/dicts.py"; then
		$CHECK heaptrack "$D/jepy.sj" "$D/jepy.ht" ||
			fail "Python over jemalloc not as heaptrack over glibc says"
	fi
	unset PYTHONMALLOC
	# first in the lookup order: it takes the calls, we stand aside aloud
	$TMO env LD_PRELOAD="$je $LIB" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/je" OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		RTE_ALLOC=1 "$T/shape" >"$D/first.out" 2>"$D/first.err"
	st=$?
	[ "$st" = 0 ] || fail "exit $st with jemalloc first"
	cmp -s "$D/je.plain" "$D/first.out" || fail "output differs with jemalloc first"
	n=$(grep -c "malloc is interposed before librte.so (by .*jemalloc" "$D/first.err")
	[ "$n" = 1 ] || fail "$n warning lines with jemalloc first: $(cat "$D/first.err")"
	[ "$(wc -l <"$D/first.err")" = 1 ] || fail "more than one line: $(cat "$D/first.err")"
	finish
}

# The peak across threads: 4 threads' blocks live at once. With the
# default slack, at most twice the slack low per other thread; with
# RTE_ALLOC_HEAP_SLACK=0, exact (plus libc's own few blocks).
t_threads() {
	begin threads
	traced mt "$T/mt"
	want=$(awk '$1 == "peak" { print $2 }' "$D/mt.out")
	$CHECK peak "$D/mt.sj" "$want" $((3 * 2 * 65536)) || fail "peak across threads"
	EXTRA=RTE_ALLOC_HEAP_SLACK=0 traced mt0 "$T/mt"
	want=$(awk '$1 == "peak" { print $2 }' "$D/mt0.out")
	$CHECK peak "$D/mt0.sj" "$want" 0 || fail "peak across threads, slack 0"
	finish
}

# A buffer grown by realloc step by step: sampled by its growth, not by
# the size of every step, and its bytes still estimated right
# (progs/grow.c; RTE_ALLOC_SAMPLE of 64 KiB: about 1 000 samples; rings
# of 2^20 words, so that none wraps).
t_grow() {
	begin grow
	EXTRA="RTE_ALLOC_SAMPLE=65536 OCAMLRUNPARAM=e=20" traced grow "$T/grow"
	$CHECK grow "$D/grow.sj" "$D/grow.out" 65536 || fail "realloc growth's samples"
	finish
}

ALL="t_shape t_python t_sites t_peaks t_bad t_threads t_grow t_tcmalloc t_jemalloc"
case $SAN in
# ASan's malloc comes before librte.so: RTE_ALLOC stands aside (tests/alloc
# t_sanitizer checks the warning).
*address*) ALL="t_peaks" ;;
# TSan: heaptrack cannot run beside it (skipped inside), Python is not
# instrumented; a thread started while profiling crashes in TSan's own
# thread start (its realloc reaches our instrumented per-thread pool
# before TSan's thread state exists; tests/alloc starts its threads
# before tracing for that reason): not t_threads.
*thread*) ALL="t_shape t_peaks t_bad t_grow" ;;
esac
echo "heap tests (${SAN:-no sanitizer})"
for t in ${*:-$ALL}; do
	case $t in t_*) "$t" ;; *) "t_$t" ;; esac
done
echo "heap: $NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]
