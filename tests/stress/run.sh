#!/bin/sh
# run.sh - stress tests of librte.so with exact accounting: real programs
# (tests/stress/*.c) under the real LD_PRELOAD shim, read back with the
# real consumer library (follow.c, while they write) and rte-read (after).
#
#   stress   16 threads flood numbered events while follow.c reads the
#            live file: each event delivered intact and in order, or
#            inside a lost span that ends on a message boundary; written =
#            delivered + lost, per thread and in total. Four runs: the
#            default ring (2^16 words); 2^8 words (a wrap every 85 events:
#            padding in and around lost spans); 2^10 words with writers
#            that yield every 256 events (thousands of short lost spans,
#            most events delivered); 2^20 words, where every event fits
#            (nothing may be lost).
#   churn    10,000 threads, 8 alive at a time: spawn/terminate pairs,
#            ring reuse, descriptors and anonymous memory before/after,
#            and (outside ASan builds) LeakSanitizer preloaded.
#   fork     200 forks from two threads while 4 threads write: every child
#            file complete, fork_parent for each, no deadlock.
#
# Environment (from mk/tests-stress.mk): RTE_BUILD (absolute build dir),
# RTE_SAN_RT (sanitizer runtime to preload first, empty without),
# RTE_SAN (the SAN flags of the build), STRESS_EVENTS (events per thread
# of the default-ring run). Every program runs under `timeout`: a hang
# fails the test. Lines starting "figure:" are doc/TESTING.md's figures.
set -u

B=${RTE_BUILD:?RTE_BUILD is not set}
S=$B/tests/stress
READ=$B/rte-read
PRELOAD="${RTE_SAN_RT:+$RTE_SAN_RT }$B/librte.so"
EVENTS=${STRESS_EVENTS:-2000000}
TMO="timeout -k 5 150"
WORK=$(mktemp -d "$S/work.XXXXXX") || exit 1
. "$(dirname "$0")/../harness.sh"

finish() {
	h_finish
	rm -rf "$D" # ring files are large: keep the disk small
}

# traced DIR PIDFILE CMD...: run CMD under the shim, tracing into DIR,
# preserved; its pid goes to PIDFILE (sh execs CMD: the pid is kept).
traced() {
	_d=$1 _p=$2
	shift 2
	$TMO sh -c 'echo $$ >"$0"; exec "$@"' "$_p" env LD_PRELOAD="$PRELOAD" \
		OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$_d" \
		OCAML_RUNTIME_EVENTS_PRESERVE=1 ${RUNPARAM:+OCAMLRUNPARAM=$RUNPARAM} "$@"
}

# ---- 16 threads followed live -------------------------------------------------

# follow_run NAME LOG2 EVENTS [VAR=value...] [noloss]
follow_run() {
	_n=$1 _e=$2 _ev=$3
	shift 3
	_extra="" _mode=""
	for a in "$@"; do
		case $a in
		noloss) _mode=noloss ;;
		*) _extra="$_extra $a" ;;
		esac
	done
	mkdir -p "$D/$_n"
	# shellcheck disable=SC2086 # _extra is a list of VAR=value words
	$TMO env $_extra OCAMLRUNPARAM=e=$_e OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/$_n" OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		RTE_STRESS_PRELOAD="$PRELOAD" \
		"$S/follow" 16 "$_ev" "$S/writer" $_mode >"$D/$_n.out" 2>"$D/$_n.err"
	rc=$?
	[ "$rc" = 0 ] || fail "$_n: follow exited $rc: $(cat "$D/$_n.out" "$D/$_n.err" | head -20)"
	[ -s "$D/$_n.err" ] && fail "$_n: stderr: $(head -5 "$D/$_n.err")"
	_line=$(grep '^stress:' "$D/$_n.out")
	echo "figure: $_n: ${_line#stress: }"
	# shellcheck disable=SC2086 # the numbers after "written", "delivered"
	set -- $(echo "$_line" | sed 's/.*written \([0-9]*\), delivered \([0-9]*\), lost \([0-9]*\).*/\1 \2 \3/')
	[ $# = 3 ] && W_ALL=$((W_ALL + $1)) D_ALL=$((D_ALL + $2)) L_ALL=$((L_ALL + $3))
	rm -rf "$D/$_n"
}

test_stress() {
	begin stress
	W_ALL=0 D_ALL=0 L_ALL=0
	follow_run default-ring 16 "$EVENTS"
	follow_run small-ring 8 $((EVENTS / 4))
	follow_run paced 10 $((EVENTS / 4)) STRESS_YIELD=256
	follow_run big-ring 20 $((EVENTS / 6)) RTE_RINGS=17 noloss
	echo "figure: stress total: $W_ALL events written by 16 threads, $D_ALL delivered intact and in order, $L_ALL in lost spans, $((W_ALL - D_ALL - L_ALL)) unaccounted"
	[ "$W_ALL" = $((D_ALL + L_ALL)) ] || fail "written != delivered + lost"
	finish
}

# ---- thread churn -------------------------------------------------------------

# Ring size of the churn runs: on a loaded machine the threads run one after
# another and nearly all of them reuse ring 1, so that ring must hold the
# lifecycle of all 10,000 threads (about 30 words each): 2^20 words.
CHURN_LOG2=20

churn_check() { # DIR OUT TOTAL ALIVE
	_d=$1 _out=$2
	f=$(ls "$_d"/*.events 2>/dev/null)
	[ -n "$f" ] || { fail "no ring file"; return; }
	"$READ" -f jsonl "$f" >"$_d/j" 2>"$_d/j.err" ||
		fail "rte-read exited $?: $(cat "$_d/j.err")"
	python3 tests/stress/check.py churn "$_d/j" "$3" "$4" >"$_d/c" ||
		fail "$(cat "$_d/c")"
	# shellcheck disable=SC2046 # the five numbers of the churn line
	set -- $(sed -n 's/^churn: threads \([0-9]*\) fds \([0-9]*\) \([0-9]*\) anon_kb \([0-9]*\) \([0-9]*\)$/\1 \2 \3 \4 \5/p' "$_out")
	[ $# = 5 ] || { fail "no churn line: $(cat "$_out")"; return; }
	[ "$2" = "$3" ] || fail "open descriptors: $2 before, $3 after"
	case ${RTE_SAN:-} in
	*address*|*thread*) ;; # the sanitizer's own memory: LSan/TSan judge
	*) [ $(($5 - $4)) -le 256 ] ||
		fail "anonymous memory grew by $(($5 - $4)) kB over $(($1 * 9 / 10)) threads" ;;
	esac
	echo "figure: $(cat "$_d/c"); descriptors $2 -> $3, anonymous memory $4 -> $5 kB"
}

test_churn() {
	begin churn
	RUNPARAM=e=$CHURN_LOG2 traced "$D" "$D/pid" "$S/churn" 10000 8 \
		>"$D/out" 2>"$D/err"
	rc=$?
	[ "$rc" = 0 ] || fail "churn exited $rc: $(head -20 "$D/err")"
	[ -s "$D/err" ] && fail "stderr: $(head -5 "$D/err")"
	churn_check "$D" "$D/out" 10000 8
	finish
}

# The same run with LeakSanitizer preloaded into the plain build (the ASan
# build runs test_churn under LSan already).
test_churn_lsan() {
	san_skip any churn-lsan "the build's own sanitizer judges test_churn" &&
		return
	asan=$(${CC:-cc} -print-file-name=libasan.so)
	if [ ! -f "$asan" ]; then
		echo "  skip churn-lsan: libasan.so not found ($asan)"
		return
	fi
	begin churn-lsan
	$TMO env LD_PRELOAD="$asan $B/librte.so" \
		ASAN_OPTIONS=detect_leaks=1:exitcode=23 \
		OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$D" \
		OCAML_RUNTIME_EVENTS_PRESERVE=1 OCAMLRUNPARAM=e=$CHURN_LOG2 \
		"$S/churn" 10000 8 >"$D/out" 2>"$D/err"
	rc=$?
	[ "$rc" = 0 ] || fail "churn under LeakSanitizer exited $rc: $(head -30 "$D/err")"
	[ -s "$D/err" ] && fail "stderr: $(head -5 "$D/err")"
	f=$(ls "$D"/*.events 2>/dev/null)
	"$READ" -f jsonl "$f" >"$D/j" 2>"$D/j.err" &&
		python3 tests/stress/check.py churn "$D/j" 10000 8 >"$D/c" ||
		fail "$(cat "$D/j.err" "$D/c")"
	finish
}

# ---- fork storm -------------------------------------------------------------

test_forkstorm() {
	begin forkstorm
	# LeakSanitizer cannot stop the parent's threads in a fork child
	# ("Running thread ... was not suspended"): no leak check there.
	(
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		export ASAN_OPTIONS
		traced "$D" "$D/pid" "$S/forkstorm" 200 4 >"$D/out" 2>"$D/err"
	)
	rc=$?
	[ "$rc" = 0 ] || fail "forkstorm exited $rc (124: a deadlock): $(head -20 "$D/err")"
	[ -s "$D/err" ] && fail "stderr: $(head -5 "$D/err")"
	grep -q '^forks 200 failed 0$' "$D/out" || fail "stdout: $(tail -1 "$D/out")"
	n=$(ls "$D" | grep -c '\.events$')
	[ "$n" = 201 ] || fail "$n ring files, want 201 (parent and 200 children)"
	"$READ" -f jsonl "$D" >"$D/j" 2>"$D/j.err"
	rc=$?
	[ "$rc" = 0 ] || fail "rte-read exited $rc: $(head -5 "$D/j.err")"
	python3 tests/stress/check.py forkstorm "$D/j" "$D/out" "$(cat "$D/pid")" \
		>"$D/c" || fail "$(cat "$D/c")"
	echo "figure: $(grep '^forkstorm:' "$D/c")"
	finish
}

echo "== stress tests ($B)"
for t in ${*:-test_stress test_churn test_churn_lsan test_forkstorm}; do
	$t
done
echo "stress: $NPASS passed, $NFAIL failed"
[ "$NFAIL" = 0 ]
