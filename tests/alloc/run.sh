#!/bin/sh
# run.sh - tests of the allocation profiler (RTE_ALLOC): real programs
# (tests/alloc/progs) under the real shim, their files read back with the
# real rte-read (-f jsonl) and decoded by tests/alloc/check.py. Each
# program also runs without the shim: same output, same exit status.
#
# Environment (set by mk/tests-alloc.mk): RTE_BUILD, the build folder
# (absolute); RTE_ASAN_RT, the ASan runtime to preload first (empty
# without ASan); RTE_SAN, the sanitizers the programs were built with.
# Every program runs under `timeout`, so a deadlock fails the test.
set -u

B=${RTE_BUILD:?RTE_BUILD is not set}
T=$B/tests/alloc
LIB=$B/librte.so
READ=$B/rte-read
CHECK="python3 $(dirname "$0")/check.py"
PRELOAD="${RTE_ASAN_RT:+$RTE_ASAN_RT }$LIB"
SAN=${RTE_SAN:-}
TMO="timeout 120"
TCMALLOC=$(ls /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -n 1)
WORK=$(mktemp -d "$T/work.XXXXXX") || exit 1
# sizes.c asks for 2^63 bytes on purpose (ENOMEM): a sanitizer must fail
# it as malloc does, not abort.
export ASAN_OPTIONS="allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export TSAN_OPTIONS="allocator_may_return_null=1${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
. "$(dirname "$0")/../harness.sh"

# run NAME [VAR=value...] -- CMD...: CMD without the shim, then under it
# (RTE_ALLOC=1, tracing into $D from the start unless NOSTART is set,
# preserved, rings of 2^20 words so that none wraps, plus the VARs); the status
# and standard output must match. Leaves $D/NAME.jsonl (every file of $D
# decoded) and $D/NAME.err (the traced run's standard error).
run() {
	name=$1
	shift
	envs=""
	while [ "$1" != "--" ]; do
		envs="$envs $1"
		shift
	done
	shift
	$TMO "$@" >"$D/$name.plain" 2>/dev/null
	st_plain=$?
	# shellcheck disable=SC2086
	$TMO env LD_PRELOAD="$PRELOAD" ${NOSTART:-OCAML_RUNTIME_EVENTS_START=1} \
		OCAML_RUNTIME_EVENTS_DIR="$D" OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		OCAMLRUNPARAM=e=20 RTE_ALLOC=1 $envs "$@" \
		>"$D/$name.out" 2>"$D/$name.err"
	st=$?
	[ "$st" = "$st_plain" ] ||
		fail "exit status $st under the shim, $st_plain without it"
	cmp -s "$D/$name.plain" "$D/$name.out" || fail "output differs"
	: >"$D/$name.jsonl"
	for f in "$D"/*.events; do
		[ -e "$f" ] || continue
		"$READ" -f jsonl "$f" >>"$D/$name.jsonl" 2>"$D/$name.rerr" ||
			fail "rte-read $f: $(cat "$D/$name.rerr")"
	done
	STATUS=$st
}

# totals NAME: "pid calls bytes frees freed b0..b19" lines of NAME's run
totals() { $CHECK totals "$D/$1.jsonl"; }

# field LINE N: the Nth field (1-based) of LINE
field() { echo "$1" | awk -v n="$2" '{ print $n }'; }

# bucket LINE I: bucket I (0..19) of a totals line
bucket() { field "$1" $(($2 + 6)); }

# in_range V LO HI
in_range() { [ "$1" -ge "$2" ] && [ "$1" -lt "$3" ]; }

# exact_buckets NAME: NAME's run of a program that prints each size it
# allocates ("fn size count": sizes, addr) has the buckets that output
# gives, exactly, in its alloc events.
exact_buckets() {
	want=$($CHECK expect "$D/$1.out")
	got=$(totals "$1" | cut -d' ' -f6-)
	[ "$got" = "$want" ] || fail "buckets $got, want $want"
}

# ---- the alloc events: bucket counts, exactly --------------------------------

t_buckets() {
	begin buckets
	run sizes -- "$T/sizes"
	[ "$STATUS" = 0 ] || fail "sizes exited $STATUS (errno not preserved?)"
	exact_buckets sizes
	line=$(totals sizes)
	[ "$(echo "$line" | wc -l)" = 1 ] || fail "not one process: $line"
	calls=$(awk '{ n += $3 } END { print n }' "$D/sizes.out")
	[ "$(field "$line" 2)" = "$calls" ] ||
		fail "rte.alloc.calls $(field "$line" 2), want $calls"
	grep -q '"kind":"alloc"' "$D/sizes.jsonl" || fail "no alloc event"
	finish
}

# Every allocation sampled (RTE_ALLOC_SAMPLE=1): the sample path preserves
# errno too, and every sample's free is written.
t_sample_all() {
	begin sample_all
	run sizes RTE_ALLOC_SAMPLE=1 -- "$T/sizes"
	[ "$STATUS" = 0 ] || fail "sizes exited $STATUS (errno not preserved?)"
	exact_buckets sizes
	# a block of s bytes is sampled with probability 1 - exp(-s): all
	# 11000 of 8 bytes and more but about 1 in 3000
	n=$($CHECK samples "$D/sizes.jsonl" | awk '$2 >= 8' | wc -l)
	[ "$n" -ge 10900 ] || fail "$n samples of 8 bytes or more, want 11000"
	live=$($CHECK live "$D/sizes.jsonl" | wc -l)
	[ "$live" = 0 ] || fail "$live samples never freed"
	finish
}

# A vfork child's allocations are never sampled (it shares its parent's
# memory, the ring of its parent's thread included; the sampling paths'
# cheap look at the vfork depth must see it), the parent's still are.
t_vfork() {
	begin vfork
	run vforker RTE_ALLOC_SAMPLE=1 -- "$T/vforker"
	[ "$STATUS" = 0 ] || fail "vforker exited $STATUS"
	$CHECK samples "$D/vforker.jsonl" >"$D/vforker.samples" || fail "check.py samples"
	n=$(awk '$2 == 444' "$D/vforker.samples" | wc -l)
	[ "$n" -ge 990 ] || fail "$n samples of the parent's 1000 blocks of 444 bytes"
	n=$(awk '$2 == 333' "$D/vforker.samples" | wc -l)
	[ "$n" = 0 ] || fail "$n samples written from the vfork child"
	finish
}

# ---- a leak of known size and stack ------------------------------------------

t_leak() {
	begin leak
	run leak RTE_ALLOC_SAMPLE=65536 -- "$T/leak"
	[ "$STATUS" = 0 ] || fail "leak exited $STATUS"
	$CHECK live "$D/leak.jsonl" >"$D/live"
	n=$(awk '$2 == 1048576' "$D/live" | wc -l)
	[ "$n" = 4 ] || fail "$n live 1 MiB samples, want 4: $(cat "$D/live")"
	other=$(awk '$2 != 1048576' "$D/live" | wc -l)
	[ "$other" = 0 ] || fail "other live samples: $(cat "$D/live")"
	# The first frame is in leak_here (the program is built without PIE).
	range=$(nm -S "$T/leak" | awk '$4 == "leak_here" { print $1, $2 }')
	lo=$((0x$(field "$range" 1)))
	hi=$((lo + 0x$(field "$range" 2)))
	awk '{ print $5 }' "$D/live" | while read -r pc; do
		in_range "$((0x$pc))" "$lo" "$hi" ||
			echo "frame $pc not in leak_here"
	done >"$D/bad"
	[ -s "$D/bad" ] && fail "$(cat "$D/bad")"
	# rte-read's leak report finds it, symbolised
	"$READ" -f summary "$D"/*.events >"$D/summary" 2>&1 ||
		fail "rte-read -f summary: $(cat "$D/summary")"
	sed -n '/still live at the end/,$p' "$D/summary" >"$D/leaks"
	grep -q "4194304 bytes" "$D/leaks" && grep -q "leak_here" "$D/leaks" ||
		fail "no leak of 4194304 bytes in leak_here: $(cat "$D/summary")"
	finish
}

# ---- the bytes live at exit: exact, and the estimate bounded by them ---------

# The live bytes from the counts (usable allocated - freed, one measure)
# against heaptrack's "total memory leaked" on the same program.
t_live() {
	begin live
	run live -- "$T/live"
	[ "$STATUS" = 0 ] || fail "live exited $STATUS"
	kept=$(awk '$1 == "kept" { print $2 }' "$D/live.out")
	"$READ" -f summary-json "$D"/*.events >"$D/live.sj" || fail "summary-json"
	$CHECK bounded "$D/live.jsonl" "$D/live.sj" "$kept" || fail "live bytes or estimate"
	if ! command -v heaptrack >/dev/null || ! command -v heaptrack_print >/dev/null; then
		skip live_heaptrack "heaptrack not installed (Debian's heaptrack)"
	elif [ -n "$SAN" ]; then
		skip live_heaptrack "heaptrack's preload and $SAN's runtime in one process"
	else
		$TMO heaptrack -o "$D/ht" "$T/live" >/dev/null 2>&1 || fail "heaptrack: exit $?"
		heaptrack_print "$D/ht.zst" >"$D/ht.txt" 2>/dev/null || fail "heaptrack_print: exit $?"
		python3 - "$D/ht.txt" "$D/live.sj" <<'PY' || fail "live bytes not within 5 % of heaptrack's"
import json, re, sys
m = re.search(r"total memory leaked: ([0-9.]+)([KMG]?)B?", open(sys.argv[1]).read())
theirs = float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]
ours = json.load(open(sys.argv[2]))["processes"][0]["alloc_profile"]["live_bytes"]
print("live at exit: rte %d bytes, heaptrack %.0f" % (ours, theirs))
sys.exit(not abs(ours - theirs) <= 0.05 * theirs)
PY
	fi
	finish
}

# One block of each small size from its own function, each the only call
# of its size class (but libc's), sampled often (a period of 256 bytes):
# a sampled one stands for one block, not for 256 bytes' worth of them;
# and the whole estimate stays at most the exact live bytes.
t_live_estimate() {
	begin live_estimate
	run live RTE_ALLOC_SAMPLE=256 -- "$T/live"
	[ "$STATUS" = 0 ] || fail "live exited $STATUS"
	kept=$(awk '$1 == "kept" { print $2 }' "$D/live.out")
	"$READ" -f summary-json "$D"/*.events >"$D/live.sj" || fail "summary-json"
	$CHECK bounded "$D/live.jsonl" "$D/live.sj" "$kept" small || fail "estimate not bounded"
	"$READ" -f summary "$D"/*.events >"$D/live.txt" || fail "summary"
	grep -q "live at the end (exact)" "$D/live.txt" || fail "summary: no exact live bytes"
	finish
}

# ---- threads, late start, fork from a thread ----------------------------------

t_threads() {
	begin threads
	# Under TSan, no samples here: libunwind's per-thread cache has a
	# key destructor that takes a mutex after TSan let go of the thread
	# (a crash in TSan's interceptor, ours or not).
	samp=
	case $SAN in *thread*) samp=RTE_ALLOC_SAMPLE=0 ;; esac
	NOSTART=RTE_ALLOC=1 run threads $samp -- "$T/threads"
	[ "$STATUS" = 0 ] || fail "threads exited $STATUS"
	totals threads >"$D/tot"
	[ "$(wc -l <"$D/tot")" = 2 ] || fail "want 2 processes: $(cat "$D/tot")"
	# parent: 4 threads x 100000 of 56 bytes (bucket 7); child: 5000 of
	# 40 bytes (bucket 5). pthread_create's own few may add a little.
	# (pids may wrap: the processes are told apart by their counts)
	parent=$(awk '$13 >= 400000' "$D/tot")
	b7=$(bucket "$parent" 7)
	in_range "${b7:-0}" 400000 400064 || fail "parent bucket 7: $b7"
	# the 100-byte blocks of before the start are not counted; their
	# frees, after it, are
	b10=$(bucket "$parent" 10)
	[ "$b10" = 0 ] || fail "parent bucket 10: $b10 (before the start)"
	frees=$(field "$parent" 4)
	[ "${frees:-0}" -ge 404000 ] || fail "parent frees: $frees"
	b5=$(awk '$11 >= 5000 { print $11 }' "$D/tot" | head -n 1)
	in_range "${b5:-0}" 5000 5064 || fail "child bucket 5: $(cat "$D/tot")"
	finish
}

# 70000 threads one after another, then one that allocates 1000 blocks of
# 48 bytes: the pool of per-thread states (65536) is never exhausted by
# states kept by ended threads.
t_manythreads() {
	begin manythreads
	run many -- "$T/manythreads"
	[ "$STATUS" = 0 ] || fail "manythreads exited $STATUS"
	b6=$(bucket "$(totals many)" 6)
	in_range "${b6:-0}" 1000 1064 || fail "the last thread's bucket 6: $b6"
	finish
}

# ---- exec: the counts reach the file before the image goes ------------------

t_exec() {
	begin exec
	# the new image: one of ours (built with the same sanitizer)
	run exec -- "$T/execer" "$T/sizes"
	[ "$STATUS" = 0 ] || fail "execer exited $STATUS"
	pre=$(ls "$D"/*.exec1.events 2>/dev/null)
	[ -n "$pre" ] || { fail "no <pid>.exec1.events"; finish; return; }
	"$READ" -f jsonl "$pre" >"$D/pre.jsonl"
	b3=$($CHECK totals "$D/pre.jsonl" | awk '{ print $9 }')
	in_range "${b3:-0}" 3000 3064 || fail "bucket 3 before exec: $b3"
	finish
}

# ---- C++ new/delete ----------------------------------------------------------

t_cxx() {
	begin cxx
	run cxx RTE_ALLOC_SAMPLE=65536 -- "$T/cxx"
	[ "$STATUS" = 0 ] || fail "cxx exited $STATUS"
	line=$(totals cxx)
	b5=$(bucket "$line" 5)
	b6=$(bucket "$line" 6)
	in_range "$b5" 2000 2064 || fail "new int[10] (bucket 5): $b5"
	in_range "$b6" 2000 2064 || fail "new Obj (bucket 6): $b6"
	$CHECK samples "$D/cxx.jsonl" | awk '$2 == 1048576 && $4 == 1' \
		>"$D/big"
	[ -s "$D/big" ] || fail "the vector's 1 MiB was not sampled as malloc"
	finish
}

# ---- another allocator: tcmalloc after us (wrapped), before us (aside) ----

t_tcmalloc() {
	[ -n "$TCMALLOC" ] || { skip tcmalloc "no libtcmalloc.so.4 \
(apt-get install libgoogle-perftools4)"; return; }
	begin tcmalloc
	PRELOAD_SAVED=$PRELOAD
	PRELOAD="$LIB $TCMALLOC"
	run sizes -- "$T/sizes"
	[ "$STATUS" = 0 ] || fail "sizes exited $STATUS under tcmalloc"
	exact_buckets sizes
	rm -f "$D"/*.events
	PRELOAD="$TCMALLOC $LIB"
	run first -- "$T/sizes"
	[ "$STATUS" = 0 ] || fail "sizes exited $STATUS with tcmalloc first"
	grep -q "malloc is interposed before librte.so (by .*tcmalloc" \
		"$D/first.err" || fail "no warning: $(cat "$D/first.err")"
	grep -q '"kind":"alloc"' "$D/first.jsonl" &&
		fail "alloc events with tcmalloc first"
	PRELOAD=$PRELOAD_SAVED
	finish
}

# ---- under ASan: it takes malloc first; RTE_ALLOC stands aside --------------

# A non-PIE executable that takes malloc's address has a canonical PLT
# entry for it: dlsym finds that first, but the calls still reach us.
# Exact counts; then Debian's python3 (non-PIE), profiled at all.
t_addr() {
	begin addr
	run addr -- "$T/addr"
	[ "$STATUS" = 0 ] || fail "addr exited $STATUS"
	grep -q "interposed" "$D/addr.err" && fail "warned: $(cat "$D/addr.err")"
	exact_buckets addr
	rm -f "$D"/*.events
	if [ -x /usr/bin/python3 ]; then
		run py -- /usr/bin/python3 -c 'x = [bytes(1000) for i in range(20000)]'
		[ "$STATUS" = 0 ] || fail "python3 exited $STATUS"
		grep -q "interposed" "$D/py.err" && fail "python3: warned: $(cat "$D/py.err")"
		grep -q '"kind":"alloc"' "$D/py.jsonl" || fail "python3: no alloc events"
		rm -f "$D"/*.events
	fi
	finish
}

t_sanitizer() {
	begin sanitizer
	run sizes -- "$T/sizes"
	[ "$STATUS" = 0 ] || fail "sizes exited $STATUS"
	grep -q "malloc is interposed before librte.so" "$D/sizes.err" ||
		fail "no warning: $(cat "$D/sizes.err")"
	grep -q '"kind":"alloc"' "$D/sizes.jsonl" && fail "alloc events"
	finish
}

# ---- the bootstrap arena: allocations made inside dlsym, freed later ------

t_arena() {
	begin arena
	for a in 0 1; do
		PRELOAD_SAVED=$PRELOAD
		PRELOAD="$PRELOAD $T/libearly.so"
		run arena$a RTE_ALLOC=$a -- "$T/execer"
		PRELOAD=$PRELOAD_SAVED
		# execer without an argument exits 1 after its allocations
		[ "$STATUS" = 1 ] || fail "RTE_ALLOC=$a: exit status $STATUS"
	done
	finish
}

# ---- off by default: no events, nothing counted -----------------------------

t_off() {
	begin off
	run off RTE_ALLOC= -- "$T/sizes"
	[ "$STATUS" = 0 ] || fail "sizes exited $STATUS"
	grep -q 'rte.alloc\|"kind":"alloc"' "$D/off.jsonl" &&
		fail "alloc events with RTE_ALLOC unset"
	finish
}

# ---- a malformed value: its default and one warning -------------------------

# RTE_ALLOC_FLUSH_CALLS=N: every flush of a thread but its last (at exit)
# holds exactly N calls and frees, and the totals stay exact.
t_flush_calls() {
	begin flush_calls
	run flush RTE_ALLOC_FLUSH_CALLS=7 -- "$T/sizes"
	[ "$STATUS" = 0 ] || fail "sizes exited $STATUS"
	exact_buckets flush
	$CHECK flushes "$D/flush.jsonl" >"$D/flush.n"
	[ -s "$D/flush.n" ] || fail "no rte.alloc.calls events"
	bad=$(awk '{ for (i = 3; i < NF; i++) if ($i != 7) print; if ($NF > 7) print }' "$D/flush.n")
	[ -z "$bad" ] || fail "a flush of other than 7 calls: $(echo "$bad" | head -c 300)"
	finish
}

t_badvalue() {
	begin badvalue
	run bad RTE_ALLOC_SAMPLE=lots RTE_ALLOC_FLUSH_MS=0 -- "$T/sizes"
	[ "$STATUS" = 0 ] || fail "sizes exited $STATUS"
	grep -q "RTE_ALLOC_SAMPLE=lots is not a number" "$D/bad.err" &&
		grep -q "RTE_ALLOC_FLUSH_MS=0 is not a number" "$D/bad.err" ||
		fail "warnings: $(cat "$D/bad.err")"
	grep -q '"kind":"alloc"' "$D/bad.jsonl" || fail "no alloc event"
	finish
}

# ---- rte-run --alloc ---------------------------------------------------------

t_rte_run() {
	begin rte_run
	for opt in --alloc ""; do
		# shellcheck disable=SC2086
		$TMO env RTE_LIB="$LIB" RTE_READ="$READ" \
			RTE_RUN_EXEC="$B/rte-run-exec" "$B/rte-run" $opt -q \
			-d "$D/dir$opt" -- "$T/sizes" >"$D/out$opt" 2>"$D/err$opt" ||
			fail "rte-run $opt: $(cat "$D/err$opt")"
		"$READ" -f jsonl "$D/dir$opt"/*.events >"$D/j$opt" 2>&1 ||
			fail "rte-read: $(cat "$D/j$opt")"
	done
	grep -q '"kind":"alloc"' "$D/j--alloc" || fail "no alloc event with --alloc"
	grep -q '"kind":"alloc"' "$D/j" && fail "alloc events without --alloc"
	finish
}

ALL="t_buckets t_sample_all t_vfork t_leak t_live t_live_estimate t_threads t_manythreads t_exec t_cxx t_addr t_tcmalloc t_arena t_off t_flush_calls t_badvalue t_rte_run"
case $SAN in
# ASan's runtime is preloaded first: its malloc takes the calls.
*address*) ALL="t_sanitizer t_off" ;;
# TSan's runtime is a dependency of the program, after librte.so: we wrap
# its malloc. (A dlsym wrapper like libearly.so breaks TSan's own start,
# tcmalloc cannot stand behind TSan's interceptors, and TSan defines
# operator new itself: C++ new does not reach malloc.)
# t_live is left out there: its thread, started and ended while
# allocations are sampled, dies under TSan alone (libunwind's per-thread
# cache and TSan's thread start; t_threads samples nothing there).
*thread*) ALL="t_buckets t_sample_all t_vfork t_leak t_threads t_exec t_off" ;;
esac
echo "alloc tests (${SAN:-no sanitizer})"
for t in ${*:-$ALL}; do
	case $t in t_*) "$t" ;; *) "t_$t" ;; esac
done
echo "alloc: $NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]
