#!/bin/sh
# run.sh - fault injection: the real victim program (tests/faults/victim.c)
# under the real preloaded librte.so while something goes wrong, its file
# read back with the real rte-read. For each fault:
#   - the program: stdout and exit status identical to a run without the
#     shim (stdout carries the errno values the program saw);
#   - the shim: exactly one "rte: " line on stderr per process that met the
#     fault (none when nothing went wrong from its point of view);
#   - the reader: rte-read's exit status and message;
#   - what was kept: the events rte-read finds.
#
# Environment (from mk/tests-stress.mk): RTE_BUILD (absolute build dir),
# RTE_SAN_RT (sanitizer runtime to preload first, empty without). Faults
# that mount a tmpfs need root and are skipped otherwise, with the reason.
# Every program runs under `timeout`: a hang fails the test.
set -u

B=${RTE_BUILD:?RTE_BUILD is not set}
V=$B/tests/faults/victim
READ=$B/rte-read
PRELOAD="${RTE_SAN_RT:+$RTE_SAN_RT }$B/librte.so"
TMO="timeout -k 5 60"
WORK=$(mktemp -d "$B/tests/faults/work.XXXXXX") || exit 1
. "$(dirname "$0")/../harness.sh"

# traced DIR PREFIX [VAR=value...] -- [ARGS...]: run the victim under the
# shim, tracing into DIR, preserved: PREFIX.out, PREFIX.err, PREFIX.rc,
# PREFIX.pid (sh execs env, which execs the victim: the pid is kept).
traced() {
	_d=$1 _p=$2
	shift 2
	_vars=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _vars="$_vars $1"; shift; done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086 # _vars is a list of VAR=value words
	$TMO sh -c 'echo $$ >"$0"; exec "$@"' "$_p.pid" env LD_PRELOAD="$PRELOAD" \
		OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$_d" \
		OCAML_RUNTIME_EVENTS_PRESERVE=1 $_vars "$V" "$@" \
		>"$_p.out" 2>"$_p.err"
	echo $? >"$_p.rc"
}

# gated DIR PREFIX [VAR=value...] [-- ARGS...]: start the victim under the shim in the
# background, held at a gate before it execs (so its pid, in PREFIX.pid,
# is known before it runs); `echo go >PREFIX.gate` lets it go. Writes
# PREFIX.out, .err and .rc like traced().
gated() {
	_d=$1 _p=$2
	shift 2
	_vars=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _vars="$_vars $1"; shift; done
	[ $# -gt 0 ] && shift
	rm -f "$_p.gate" "$_p.pid"
	mkfifo "$_p.gate"
	(
		# shellcheck disable=SC2086 # _vars is a list of VAR=value words
		$TMO sh -c 'echo $$ >"$0"; read x <"$1"; shift; exec "$@"' \
			"$_p.pid" "$_p.gate" env LD_PRELOAD="$PRELOAD" \
			OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$_d" \
			$_vars "$V" "$@" >"$_p.out" 2>"$_p.err"
		echo $? >"$_p.rc"
	) &
	BG="$BG $!"
	await_file "$_p.pid"
}

await_file() { # FILE: wait (at most 30 s) until FILE is not empty
	_i=0
	while [ ! -s "$1" ] && [ $_i -lt 3000 ]; do sleep 0.01; _i=$((_i + 1)); done
}

# unchanged PREFIX: stdout and exit status are those of the plain run.
unchanged() {
	cmp -s "$WORK/plain.out" "$1.out" ||
		fail "stdout differs from the run without the shim: $(diff "$WORK/plain.out" "$1.out" | head -5)"
	[ "$(cat "$1.rc")" = "$(cat "$WORK/plain.rc")" ] ||
		fail "exit status $(cat "$1.rc"), without the shim $(cat "$WORK/plain.rc")"
}

# rte_lines PREFIX N [PATTERN]: stderr is exactly N lines, each "rte: ...",
# each matching PATTERN (grep -E) if given.
rte_lines() {
	_n=$(wc -l <"$1.err")
	_r=$(grep -c '^rte: ' "$1.err")
	[ "$_n" = "$2" ] && [ "$_r" = "$2" ] ||
		fail "stderr has $_n lines ($_r from rte), want $2: $(head -3 "$1.err")"
	if [ $# -gt 2 ] && [ "$2" -gt 0 ]; then
		_m=$(grep -cE "$3" "$1.err")
		[ "$_m" = "$2" ] || fail "stderr does not say /$3/: $(cat "$1.err")"
	fi
	[ "$_r" -gt 0 ] && echo "       shim: $(head -1 "$1.err")"
	return 0
}

# events FILE NAME: number of NAME events rte-read finds in FILE.
events() {
	"$READ" -f jsonl "$1" 2>/dev/null | grep -c "\"event\":\"$2\""
}

# reader_says EXPECTED_RC PATTERN INPUT...: rte-read's exit status, and
# a stderr line matching PATTERN (PATTERN "": stderr empty).
reader_says() {
	_rc=$1 _pat=$2
	shift 2
	$TMO "$READ" "$@" >"$D/read.out" 2>"$D/read.err"
	_got=$?
	[ "$_got" = "$_rc" ] || fail "rte-read $* exited $_got, want $_rc: $(head -3 "$D/read.err")"
	if [ -z "$_pat" ]; then
		[ -s "$D/read.err" ] && fail "rte-read $* said: $(head -3 "$D/read.err")"
	else
		grep -qE "$_pat" "$D/read.err" ||
			fail "rte-read $* said: $(head -3 "$D/read.err"), want /$_pat/"
	fi
	echo "       rte-read: exit $_got${_pat:+: $(grep -E "$_pat" "$D/read.err" | head -1)}"
}

no_leftovers() { # DIR: no ring file, no temporary file
	left=$(ls -A "$1" 2>/dev/null | grep -E '\.events|\.tmp$')
	[ -z "$left" ] || fail "left in $1: $left"
}

# ---- the reference run --------------------------------------------------------

plain() {
	$TMO "$V" >"$WORK/plain.out" 2>"$WORK/plain.err"
	echo $? >"$WORK/plain.rc"
	[ "$(cat "$WORK/plain.rc")" = 3 ] && grep -q '^done$' "$WORK/plain.out" ||
		{ echo "  FAIL the victim does not run without the shim"; exit 1; }
}

# ---- a healthy run: the baseline every fault is compared with --------------

test_healthy() {
	begin healthy
	traced "$D" "$D/run" --
	unchanged "$D/run"
	rte_lines "$D/run" 0
	pid=$(cat "$D/run.pid")
	[ "$(events "$D/$pid.events" victim.main)" = 20 ] || fail "victim.main events"
	[ "$(events "$D/$pid.events" victim.thread)" = 10 ] || fail "victim.thread events"
	[ "$(ls "$D" | grep -c '\.events$')" = 2 ] || fail "want the parent's and the child's file"
	finish
}

# ---- full disk -----------------------------------------------------------------

# No room for even the headers and ring 0's first 16 KiB (28 KiB, reserved
# before the file is published). Expected: no file at all (a file whose
# ring 0 cannot be used holds no event, not even ring_start, and a reader
# takes its writer for killed), one line, tracing disabled (so the fork
# child says nothing more).
test_disk_full_at_start() {
	is_root || { skip ring0-no-space "needs root to mount a small tmpfs"; return; }
	begin ring0-no-space
	mount_tmpfs "$D/fs" size=16k || { skip ring0-no-space "mount failed"; return; }
	traced "$D/fs" "$D/run" --
	unchanged "$D/run"
	rte_lines "$D/run" 1 'No space left on device'
	no_leftovers "$D/fs"
	reader_says 2 "No such file" --dir="$D/fs" "$(cat "$D/run.pid")"
	finish
}

# The disk fills up while the program runs: the first part of the main
# thread's ring was reserved at start and keeps working (no SIGBUS), the new thread's ring
# cannot be reserved (its events are dropped and counted), the fork child
# cannot make its file: one line in each process.
test_disk_full_while_running() {
	is_root || { skip disk-full-while-running "needs root to mount a small tmpfs"; return; }
	begin disk-full-while-running
	mount_tmpfs "$D/fs" size=2m || { skip disk-full-while-running "mount failed"; return; }
	traced "$D/fs" "$D/run" -- -r "$D/ready" -g "$D/go" &
	BG="$BG $!"
	await_file "$D/ready"
	dd if=/dev/zero of="$D/fs/filler" bs=64k 2>/dev/null # until ENOSPC
	touch "$D/go"
	wait
	unchanged "$D/run"
	rte_lines "$D/run" 2 'No space left on device'
	grep -q 'tmp: No space left on device; tracing disabled' "$D/run.err" ||
		fail "the fork child did not say it could not make its file"
	ls -A "$D/fs" | grep -q '\.tmp$' && fail "a temporary file was left"
	pid=$(cat "$D/run.pid")
	f=$D/fs/$pid.events
	[ "$(events "$f" victim.main)" = 20 ] || fail "the main thread's 20 events are not all kept"
	[ "$(events "$f" victim.thread)" = 0 ] || fail "events of a thread without a ring"
	dropped=$("$READ" -f jsonl "$f" 2>/dev/null | sed -n 's/.*"event":"rte.dropped","value":\([0-9]*\).*/\1/p')
	[ "${dropped:-0}" -ge 10 ] || fail "rte.dropped is '$dropped', want >= 10"
	reader_says 0 "" "$f"
	echo "       kept: 20 of 20 main-thread events; rte.dropped = $dropped"
	finish
}

# ---- unwritable directory, read-only file system ------------------------------

test_unwritable_dir() {
	begin unwritable-dir
	mkdir -p "$D/ro" && chmod 555 "$D/ro"
	if is_root; then
		# root writes anywhere: run the victim as nobody instead.
		command -v setpriv >/dev/null || { skip unwritable-dir "root without setpriv"; return; }
		chmod 755 "$WORK" "$D"
		setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null &&
			setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$V" ||
			{ skip unwritable-dir "nobody cannot run $V"; return; }
		AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	else
		AS=""
	fi
	# shellcheck disable=SC2086 # AS is a command prefix or nothing
	$TMO $AS env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/ro" "$V" >"$D/run.out" 2>"$D/run.err"
	echo $? >"$D/run.rc"
	unchanged "$D/run"
	rte_lines "$D/run" 1 'Permission denied'
	no_leftovers "$D/ro"
	finish
}

test_readonly_fs() {
	is_root || { skip readonly-fs "needs root to mount a read-only tmpfs"; return; }
	begin readonly-fs
	mount_tmpfs "$D/fs" ro,size=1m || { skip readonly-fs "mount failed"; return; }
	traced "$D/fs" "$D/run" --
	unchanged "$D/run"
	rte_lines "$D/run" 1 'Read-only file system'
	no_leftovers "$D/fs"
	reader_says 2 "No such file" --dir="$D/fs" "$(cat "$D/run.pid")"
	finish
}

# ---- the ring file deleted while the program runs ---------------------------

# A reader that opened the file before it was deleted reads everything to
# ring_stop; nothing is re-created under the name; the program and its
# fork child are unaffected.
test_deleted_while_running() {
	begin deleted-while-running
	traced "$D" "$D/run" -- -r "$D/ready" -g "$D/go" &
	BG="$BG $!"
	await_file "$D/ready"
	pid=$(cat "$D/run.pid")
	$TMO "$READ" --follow -f jsonl "$D/$pid.events" >"$D/follow.out" 2>"$D/follow.err" &
	rpid=$!
	BG="$BG $rpid"
	# Delete only once the reader has the file mapped.
	_i=0
	until grep -qs "/$pid.events" "/proc/$(pgrep -P "$rpid")/maps" ||
		[ $_i -ge 3000 ]; do sleep 0.01; _i=$((_i + 1)); done
	rm -f "$D/$pid.events"
	touch "$D/go"
	wait $rpid
	rrc=$?
	wait
	unchanged "$D/run"
	rte_lines "$D/run" 0
	[ ! -e "$D/$pid.events" ] || fail "$pid.events was re-created"
	[ "$rrc" = 0 ] || fail "rte-read --follow exited $rrc: $(cat "$D/follow.err")"
	n=$(grep -c '"event":"victim.main"' "$D/follow.out")
	t=$(grep -c '"event":"victim.thread"' "$D/follow.out")
	[ "$n" = 20 ] && [ "$t" = 10 ] || fail "the reader got $n/20 main and $t/10 thread events"
	grep -q '"name":"ring_stop"' "$D/follow.out" || fail "the reader got no ring_stop"
	[ "$(ls "$D" | grep -c '\.events$')" = 1 ] || fail "the fork child's file is missing"
	echo "       rte-read --follow on the deleted file: exit $rrc, $n + $t events and ring_stop"
	finish
}

# ---- a reader attaching while the file is being made ------------------------

# rte-read --wait --follow is started before the program; it must see the
# file only when complete (never "bad header" or "truncated"), then read it
# to ring_stop. 20 rounds.
test_reader_races_creation() {
	begin reader-races-creation
	bad=0
	for round in $(seq 1 20); do
		r=$D/r$round
		mkdir -p "$r"
		# PRESERVE: a run that ends before the reader's first look
		# leaves its file, instead of a reader waiting in vain.
		gated "$r" "$r/run" OCAML_RUNTIME_EVENTS_PRESERVE=1
		$TMO "$READ" --wait=30 --follow -f jsonl -d "$r" "$(cat "$r/run.pid")" \
			>"$r/read" 2>"$r/read.err" &
		rpid=$!
		echo go >"$r/run.gate"
		wait $rpid
		rrc=$?
		wait
		n=$(grep -c '"event":"victim.main"' "$r/read")
		if [ "$rrc" != 0 ] || [ "$n" != 20 ] || ! cmp -s "$r/run.out" "$WORK/plain.out"; then
			fail "round $round: rte-read exit $rrc, $n/20 events: $(head -2 "$r/read.err")"
			bad=$((bad + 1))
		fi
	done
	echo "       20 rounds, $bad failed"
	finish
}

# ---- SIGKILL ---------------------------------------------------------------------

# The file of a killed process stays (even without PRESERVE: nothing runs
# at a SIGKILL); rte-read reads every event written before the kill, says
# "(no ring_stop)" in the summary, and --follow says the process ended
# without ring_stop (exit 6) instead of waiting. Cleaning up is removing
# the file: no tool does it yet (reported as missing).
test_sigkill() {
	begin sigkill
	gated "$D" "$D/run" -- -k -r "$D/ready"
	echo go >"$D/run.gate"
	await_file "$D/ready"
	pid=$(cat "$D/run.pid")
	kill -9 "$pid"
	wait
	[ "$(cat "$D/run.rc")" = 137 ] || fail "exit status $(cat "$D/run.rc"), want 137 (SIGKILL)"
	grep -v '^Killed$' "$D/run.err" >"$D/k.err" # the shell's notice
	rte_lines "$D/k" 0
	f=$D/$pid.events
	[ -f "$f" ] || { fail "no file left by the killed process"; finish; return; }
	[ "$(events "$f" victim.main)" = 10 ] || fail "the 10 events before the kill are not all there"
	"$READ" -f summary "$f" >"$D/sum" 2>&1 || fail "rte-read --format=summary exited $?"
	grep -q 'no ring_stop' "$D/sum" || fail "the summary does not say 'no ring_stop': $(head -5 "$D/sum")"
	reader_says 6 "process $pid ended without ring_stop" --follow "$f"
	echo "       kept: 10 of 10 events before the kill"
	finish
}

# The killed process's pid is alive again (here: the killed program was pid
# 1 of its own pid namespace, so the pid in its file names the host's pid
# 1). rte-read --follow must still see that the writer is gone.
test_stale_pid_reused() {
	is_root || { skip stale-pid-reused "needs root for a pid namespace"; return; }
	begin stale-pid-reused
	unshare --pid --fork --mount-proc true 2>/dev/null ||
		{ skip stale-pid-reused "unshare --pid failed"; return; }
	$TMO unshare --pid --fork --mount-proc env LD_PRELOAD="$PRELOAD" \
		OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$D" \
		"$V" -k -r "$D/ready" >"$D/run.out" 2>"$D/run.err" &
	tpid=$!
	BG="$BG $tpid"
	await_file "$D/ready"
	f=$(ls "$D"/*.events)
	# Its pid on this side: the child of unshare, the child of timeout.
	u=$(pgrep -P "$tpid")
	vpid=$(pgrep -P "$u")
	[ -n "$vpid" ] && kill -9 "$vpid"
	wait
	[ "$(basename "$f")" = 1.events ] || fail "the program was not pid 1 of its namespace: $f"
	timeout 10 "$READ" --follow "$f" >"$D/read.out" 2>"$D/read.err"
	rc=$?
	[ "$rc" = 6 ] || fail "rte-read --follow on the stale file of pid 1 exited $rc (124: still waiting after 10 s), want 6"
	finish
}

# ---- a symlink planted at the ring file's name --------------------------------

test_planted_symlink() {
	begin planted-symlink
	echo precious >"$D/target"
	for kind in live dangling; do
		r=$D/$kind
		mkdir -p "$r"
		gated "$r" "$r/run" OCAML_RUNTIME_EVENTS_PRESERVE=1
		pid=$(cat "$r/run.pid")
		if [ $kind = live ]; then
			ln -s "$D/target" "$r/$pid.events"
		else
			ln -s "$D/nowhere" "$r/$pid.events"
		fi
		echo go >"$r/run.gate"
		wait
		unchanged "$r/run"
		rte_lines "$r/run" 1 "$pid\.events"
		[ -L "$r/$pid.events" ] || fail "$kind: the symlink was replaced"
		[ "$(cat "$D/target")" = precious ] || fail "$kind: the symlink's target was written"
		[ -e "$D/nowhere" ] && fail "$kind: the dangling symlink's target was created"
		ls -A "$r" | grep -q '\.tmp$' && fail "$kind: a temporary file was left"
	done
	reader_says 3 "not a ring file|too small" "$D/live/$(cat "$D/live/run.pid").events"
	finish
}

# ---- headers whose sizes overflow ------------------------------------------------

# mkhdr FILE W0..W7: a 4 KiB file whose header is the 8 words given.
mkhdr() {
	python3 -c '
import struct, sys
words = [int(w, 0) for w in sys.argv[2:10]]
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<8Q", *words) + bytes(4096 - 64))
' "$@"
}

test_header_overflow() {
	begin header-overflow
	# version domains ringhdr ringbytes words hdroff dataoff namesoff
	mkhdr "$D/a.events" 1 128 80 0 0x2000000000000000 64 10304 0x1000 # 2^61 words * 8 = 0 mod 2^64
	mkhdr "$D/b.events" 1 0x8000000000000000 80 8192 1024 64 10304 0x1000 # domains * 80 overflows
	mkhdr "$D/c.events" 1 4096 4096 0x800000000 0x100000000 64 0x1000040 0xFFFFFFFFFFFFFF00 # names end past 2^64
	mkhdr "$D/d.events" 1 4096 80 0x800000000 0x100000000 64 327744 0x1000 # 4096 * 2^35 bytes of rings in 4 KiB
	mkhdr "$D/e.events" 1 128 80 524288 65536 0xFFFFFFFFFFFFFFC0 0 0 # headers start near 2^64
	mkhdr "$D/f.events" 1 128 80 524288 65536 64 10304 67119168 # a real layout, in 4 KiB
	for x in a b c d e f; do
		reader_says 3 "$D/$x.events: " "$D/$x.events"
		[ "$(wc -l <"$D/read.err")" = 1 ] || fail "$x: $(wc -l <"$D/read.err") lines on stderr, want 1"
	done
	finish
}

echo "== fault tests ($B)"
plain
for t in ${*:-test_healthy test_disk_full_at_start test_disk_full_while_running \
	test_unwritable_dir test_readonly_fs test_deleted_while_running \
	test_reader_races_creation test_sigkill test_stale_pid_reused \
	test_planted_symlink test_header_overflow}; do
	$t
done
echo "faults: $NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]
