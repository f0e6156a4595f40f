#!/bin/sh
# tests/run/run.sh - rte-run as a test harness would use it, and an install
# into a staging DESTDIR followed by a build with pkg-config.
#
# Real programs under the real librte.so, their files read back with the
# real rte-read (summary-json checked with python3) and, after the
# install, with a consumer built against the installed library.
#
# Environment (set by mk/tests-run.mk): RTE_BUILD (absolute build folder),
# RTE_TOP (the source tree), RTE_CC, RTE_SAN (sanitizer flags of this
# build), RTE_MAKE.
set -u

B=${RTE_BUILD:?set RTE_BUILD}
TOP=${RTE_TOP:?set RTE_TOP}
CC=${RTE_CC:-cc}
SAN=${RTE_SAN:-}
MAKE=${RTE_MAKE:-make}
RUN=$B/rte-run
READ=$B/rte-read

NAME=run
. "$(dirname "$0")/lib.sh"
# In an ASan build, uninstrumented programs (sh, sleep) get the ASan
# runtime preloaded: their allocations are not ours to check, and a
# signal must kill them as it would without ASan (handle_segv=0).
ASAN_RT=
case $SAN in *address*)
	export ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_abort=0
	ASAN_RT=$("$CC" -print-file-name=libasan.so) ;;
esac
# In a TSan build, rte-run puts the TSan runtime librte.so needs right
# after it in LD_PRELOAD (before it, TSan would bind what it intercepts to
# librte.so's hooks and every traced process would die at start-up).
# As under ASan, a signal must kill a program as it would without TSan
# (whose own handlers would report it and exit 66).
TSAN_RT=
case $SAN in *thread*)
	export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS }handle_segv=0 handle_abort=0"
	TSAN_RT=$(ldd "$B/librte.so" | sed -n 's/^[[:space:]]*libtsan[^[:space:]]* => \([^[:space:]]*\).*/\1/p')
	[ -n "$TSAN_RT" ] || { echo "run: $B/librte.so does not need libtsan" >&2; exit 1; } ;;
esac

# rte-run's temporary directories left in $TMPDIR.
leftovers() { ls "$TMPDIR" | grep -c '^rte-run[.-]' ; }


# ---- exit statuses -----------------------------------------------------------

test_status() {
	begin "exit status 0, 3 and a signal pass through"
	"$RUN" -q -- true; st=$?
	[ $st -eq 0 ] || fail "true under rte-run exited $st, not 0"
	"$RUN" -q -- sh -c 'exit 3'; st=$?
	[ $st -eq 3 ] || fail "exit 3 under rte-run exited $st"
	"$RUN" -q -- sh -c 'kill -SEGV $$' 2>"$W/sig.err"; st=$?
	[ $st -eq 139 ] || fail "a command killed by SIGSEGV: rte-run exited $st, not 139"
	grep -q 'killed by signal 11 (SIGSEGV)' "$W/sig.err" ||
		fail "no 'killed by signal 11' message: $(cat "$W/sig.err")"
	"$RUN" -q -- "$W/no-such-command" 2>/dev/null; st=$?
	[ $st -eq 127 ] || fail "a missing command: rte-run exited $st, not 127"
	"$RUN" --no-such-option -- true 2>/dev/null; st=$?
	[ $st -eq 125 ] || fail "a bad option: rte-run exited $st, not 125"
	[ "$(leftovers)" -eq 0 ] || fail "temporary directories left: $(ls "$TMPDIR")"
}

# ---- output streams, temp dir, --keep, -d --------------------------------------

test_output() {
	begin "the command's output is untouched, the summary goes to stderr"
	echo hello | "$RUN" -- sh -c 'cat; echo err >&2' >"$W/out" 2>"$W/err"
	st=$?
	[ $st -eq 0 ] || fail "exit $st"
	[ "$(cat "$W/out")" = hello ] || fail "stdout is '$(cat "$W/out")', not the command's 'hello'"
	grep -q '^err$' "$W/err" || fail "the command's stderr is missing"
	grep -Eq '^process ([0-9]|tree: )' "$W/err" || fail "no summary on stderr: $(cat "$W/err")"
	grep -q '^total: ' "$W/err" || fail "summary has no total line"
}

test_keep() {
	begin "temporary directory removed, kept with --keep, -d DIR"
	"$RUN" -q -- true || fail "true failed"
	[ "$(leftovers)" -eq 0 ] || fail "temporary directory not removed"
	"$RUN" -q --keep -- true 2>"$W/keep.err" || fail "--keep: exit $?"
	kept=$(sed -n 's/^rte-run: ring files kept in //p' "$W/keep.err")
	[ -n "$kept" ] && [ -d "$kept" ] || fail "--keep did not say where: $(cat "$W/keep.err")"
	[ "$(leftovers)" -eq 1 ] || fail "--keep: $(leftovers) directories, not 1"
	"$READ" -f summary-json -o "$W/keep.json" "$kept" || fail "rte-read cannot read the kept directory"
	json_check "$W/keep.json" 'len(d["processes"]) == 1' || fail "kept directory content"
	rm -rf "$kept"

	"$RUN" -q -d "$W/mine" -- true || fail "-d: exit $?"
	set -- "$W/mine"/*.events
	[ -e "$1" ] || fail "-d DIR: no ring file in DIR"
	[ "$(leftovers)" -eq 0 ] || fail "-d DIR also made a temporary directory"
	"$RUN" -q -d "$W/mine" -- touch "$W/ran" 2>"$W/again.err"; st=$?
	[ $st -eq 125 ] || fail "-d DIR with old ring files: exit $st, not 125"
	[ ! -e "$W/ran" ] || fail "-d DIR with old ring files still ran the command"
	grep -q 'already holds ring files' "$W/again.err" || fail "no reason given: $(cat "$W/again.err")"
}

test_badfile() {
	begin "an unreadable ring file: exit 125, directory kept"
	printf 'not a ring' >"$W/garbage"
	"$RUN" -- sh -c 'cp "$1" "$OCAML_RUNTIME_EVENTS_DIR/1.events"' sh "$W/garbage" \
		2>"$W/bad.err"; st=$?
	[ $st -eq 125 ] || fail "a garbage ring file: exit $st, not 125"
	grep -q 'rte-read: .*1\.events' "$W/bad.err" || fail "rte-read's reason is missing: $(cat "$W/bad.err")"
	[ "$(leftovers)" -eq 1 ] || fail "the directory with the bad file was not kept"
	rm -rf "$TMPDIR"/rte-run.*
}

test_formats() {
	begin "-f/-o write the requested format, -s adds the summary"
	"$RUN" -f jsonl -o "$W/t.jsonl" -- sh -c 'echo $$ >"$1"' sh "$W/pid" 2>"$W/f.err" ||
		fail "jsonl: exit $?"
	[ ! -s "$W/f.err" ] || fail "-o FILE still printed on stderr: $(cat "$W/f.err")"
	python3 - "$W/t.jsonl" "$(cat "$W/pid")" <<'EOF' || fail "the JSONL file does not hold the command's events"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pids = {l.get("pid") for l in lines}
sys.exit(0 if lines and int(sys.argv[2]) in pids else 1)
EOF
	"$RUN" -s -f chrome -o "$W/t.json" -- true 2>"$W/s.err" || fail "chrome: exit $?"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d else 1)' "$W/t.json" ||
		fail "the chrome file is not JSON"
	grep -q '^process [0-9]' "$W/s.err" || fail "-s printed no summary"
	"$RUN" -f summary-json -o - -- true >"$W/stdout.json" 2>/dev/null || fail "-o -: exit $?"
	json_check "$W/stdout.json" 'len(d["processes"]) == 1' || fail "-o - did not write to stdout"
}

# ---- the process tree ------------------------------------------------------------

test_tree() {
	begin "a command that forks and execs three processes: all in the summary"
	"$RUN" --fail-on-crash -f summary-json -o "$W/tree.json" -- "$B/tests/run/tree" >"$W/kids" ||
		fail "tree: exit $?"
	[ "$(wc -l <"$W/kids")" -eq 3 ] || fail "tree printed $(wc -l <"$W/kids") children"
	k=0
	for kid in $(cat "$W/kids"); do
		# Each child: one file, its post-exec image's (a fork child that
		# never wrote and execs a traced image makes none of its own:
		# doc/USAGE.md), its leaf event with the number it was given, and
		# the tree's parent for it.
		json_check "$W/tree.json" "len(procs) == 4 and $kid in procs and \
len(procs[$kid]['files']) == 1 and procs[$kid]['lifecycle']['fork_child'] == 0 and \
user_int(procs[$kid], 'tree.leaf') is not None and user_int(procs[$kid], 'tree.leaf')['last'] == $k and \
[t['parent_pid'] for t in d['tree'] if t['pid'] == $kid] == \
[q for q in procs if procs[q]['lifecycle']['fork_parent'] == 3]" ||
			fail "child $kid (leaf $k) is not in the summary as expected"
		k=$((k + 1))
	done
	json_check "$W/tree.json" 'sum(p["lifecycle"]["fork_parent"] for p in d["processes"]) == 3' ||
		fail "the parent's three fork_parent events are missing"
}

# A tree whose children are SIGKILLed (their files lack ring_stop): the
# report names them, and rte-run leaves nothing of the tree behind.
test_killed_tree() {
	begin "SIGKILLed children: reported, nothing left in TMPDIR"
	[ -x "$B/tests/shim/hostfd" ] || { echo "  skip: no $B/tests/shim/hostfd"; return; }
	before=$(leftovers)
	"$RUN" -- "$B/tests/shim/hostfd" killed 30 >"$W/killed.out" 2>"$W/killed.err"; st=$?
	[ $st -eq 0 ] || fail "rte-run exited $st: $(tail -3 "$W/killed.err")"
	grep -q "^total: 31 processes" "$W/killed.err" ||
		fail "the report does not count the 30 killed children: $(tail -2 "$W/killed.err")"
	[ "$(leftovers)" = "$before" ] || fail "rte-run left a directory in $TMPDIR"
}

# A process that outlives the command (a daemon's child, a background job)
# and warns once it can no longer make its file leaves nothing in TMPDIR.
test_late_process() {
	begin "a process outliving the command leaves nothing behind"
	before=$(leftovers)
	"$RUN" -q -- sh -c '(sleep 0.3; /bin/true) & exit 0' 2>"$W/late.err"; st=$?
	[ $st -eq 0 ] || fail "rte-run exited $st: $(cat "$W/late.err")"
	sleep 1 # the late /bin/true has run (and found no directory)
	[ "$(leftovers)" = "$before" ] ||
		fail "left in $TMPDIR: $(ls "$TMPDIR" | grep '^rte-run[.-]')"
}

# rte-run itself SIGKILLed (an OOM kill, a CI job's timeout) cannot clean
# up: its temporary directories stay until the next rte-run of this user
# and TMPDIR removes them (their owner is gone from this /proc); a live
# run's, a kept one and a SIGKILLed --keep run's are left alone.

# killed_run OPTION...: rte-run OPTION... of a command that sleeps,
# SIGKILLed (and the command too) once the command runs.
killed_run() {
	rm -f "$W/victim.pid"
	# (the pid file appears whole: lib.sh's wait_for waits for a name)
	"$RUN" -q "$@" -- sh -c 'echo $$ >"$1.t"; mv "$1.t" "$1"; exec sleep 30' sh \
		"$W/victim.pid" &
	_run=$!
	wait_for "$W/victim.pid" || fail "the command did not start"
	kill -KILL $_run
	wait $_run 2>/dev/null
	kill -KILL "$(cat "$W/victim.pid")" 2>/dev/null
}

test_killed_run() {
	begin "a SIGKILLed rte-run's directories: removed by the next run"
	before=$(leftovers)
	# every run sweeps as it starts: first what must stay
	killed_run --keep
	[ "$(leftovers)" -eq $((before + 2)) ] ||
		fail "a SIGKILLed --keep run left $(($(leftovers) - before)) directories, not 2"
	"$RUN" -q --keep -- true 2>"$W/kept.err" || fail "--keep: exit $?"
	kept=$(sed -n 's/^rte-run: ring files kept in //p' "$W/kept.err")
	: >"$W/hold"
	"$RUN" -q -- sh -c 'echo x >"$1"; while [ -e "$2" ]; do sleep 0.1; done' sh \
		"$W/live.flag" "$W/hold" &
	live=$!
	wait_for "$W/live.flag" || fail "the live run did not start"
	killed_run
	[ "$(leftovers)" -eq $((before + 7)) ] ||
		fail "before the sweep: $(ls "$TMPDIR" | grep '^rte-run[.-]' | tr '\n' ' ')"
	# stamps of a pid that is gone: of this /proc, and of another one (a
	# container's, another host's: the same pid means nothing here)
	id=$(python3 -c 'import sys
b = open("/proc/sys/kernel/random/boot_id").read().strip()
st = open("/proc/1/stat").read()
print("%s/%s" % (b, st[st.rindex(")") + 2:].split()[19]))')
	mkdir "$TMPDIR/rte-run.stale1" "$TMPDIR/rte-run.other1" "$TMPDIR/rte-run-priv.stale1"
	echo "999999999 $TMPDIR/rte-run-priv.stale1 $id" >"$TMPDIR/rte-run.stale1/.rte-run"
	echo "999999999 $TMPDIR/rte-run-priv.other1 00000000-0000-0000-0000-000000000000/${id#*/}" >"$TMPDIR/rte-run.other1/.rte-run"
	"$RUN" -q -- true || fail "the sweeping run failed"
	[ -d "$TMPDIR/rte-run.other1" ] || fail "a directory of another /proc's run was removed"
	[ ! -e "$TMPDIR/rte-run.stale1" ] && [ ! -e "$TMPDIR/rte-run-priv.stale1" ] ||
		fail "a stale stamp of this /proc was not swept"
	rm -rf "$TMPDIR/rte-run.other1"
	[ -d "$kept" ] || fail "the kept directory $kept was removed"
	[ "$(leftovers)" -eq $((before + 5)) ] ||
		fail "after the sweep: $(ls "$TMPDIR" | grep '^rte-run[.-]' | tr '\n' ' '), want the kept one, the SIGKILLed --keep run's two and the live run's two"
	rm -f "$W/hold"
	wait $live || fail "the live run failed: exit $?"
	[ "$(leftovers)" -eq $((before + 3)) ] || fail "the live run left its directories"
	for d in "$TMPDIR"/rte-run.* "$TMPDIR"/rte-run-priv.*; do
		[ -e "$d" ] && [ ! -e "$d/.rte-run" ] && rm -rf "$d"
	done
	[ "$(leftovers)" -eq "$before" ] || fail "cleaning up after the test: $(leftovers) left"
}

# ---- signals -----------------------------------------------------------------------

test_signals() {
	begin "SIGTERM and SIGINT are forwarded, the directory still removed"
	# (The loop ends by itself after ~30 s, so that a broken forward
	# fails the test instead of hanging it.)
	# It says it is ready once its trap is set (its ring file appears
	# earlier, at start-up, when a TERM would still kill it).
	"$RUN" -q -- sh -c 'trap "exit 7" TERM; : >"$1"; i=0
		while [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' sh "$W/ready" &
	pid=$!
	wait_for "$W/ready" || fail "the command never started"
	kill -TERM $pid
	wait $pid; st=$?
	[ $st -eq 7 ] || fail "SIGTERM: exit $st, not the command's own 7"
	[ "$(leftovers)" -eq 0 ] || fail "SIGTERM: temporary directory left"

	# A background job of a script ignores SIGINT; undo that, as a
	# harness starting rte-run would not have it ignored.
	env --default-signal=INT "$RUN" -- sleep 30 2>"$W/int.err" &
	pid=$!
	# (Its ring file, live in the drain's directory, names it; then it is
	# asleep in clock_nanosleep: a SIGINT during its start-up, under
	# ThreadSanitizer, was once lost, and sleep ran its 30 s.)
	wait_for "$TMPDIR/rte-run.*/.rte-live/*.events" || fail "the command never started"
	for f in "$TMPDIR"/rte-run.*/.rte-live/*.events; do spid=${f##*/} spid=${spid%%.*}; done
	i=0
	while [ $i -lt 200 ]; do
		n=
		read -r n _ <"/proc/$spid/syscall" 2>/dev/null
		case $n in 35 | 230) break ;; esac # nanosleep, clock_nanosleep (x86-64)
		sleep 0.05
		i=$((i + 1))
	done
	kill -INT $pid
	wait $pid; st=$?
	[ $st -eq 130 ] || fail "SIGINT: exit $st, not 130 (sleep killed by SIGINT)"
	grep -q '^process [0-9]' "$W/int.err" || fail "SIGINT: no summary of the interrupted run"
	[ "$(leftovers)" -eq 0 ] || fail "SIGINT: temporary directory left"
}

test_tty() {
	begin "Ctrl-C at a terminal ends the command, rte-run reports it"
	# rte-run in its own pseudo-terminal, as in an interactive shell: the
	# terminal sends SIGINT to the whole foreground group (rte-run does
	# not send it again), the command dies of it, rte-run says 130.
	st=$(python3 - "$RUN" <<'EOF'
import os, pty, select, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    # As in a terminal: SIGINT not ignored (it is when make test itself
    # was started in the background by a script).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.execv(sys.argv[1], [sys.argv[1], "--", "sh", "-c", "echo ready; exec sleep 30"])
buf, end = b"", time.time() + 30
while b"ready" not in buf and time.time() < end:
    if select.select([fd], [], [], 0.5)[0]:
        try:
            buf += os.read(fd, 4096)
        except OSError:
            break
os.write(fd, b"\x03")
out = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, st = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(st), b"total:" in out)
EOF
)
	[ "$st" = "130 True" ] || fail "Ctrl-C in a terminal: '$st', not '130 True' (status, summary printed)"
	[ "$(leftovers)" -eq 0 ] || fail "Ctrl-C: temporary directory left"
}

# ---- lost events, crashes ------------------------------------------------------------

test_lost() {
	begin "--fail-on-lost fails on a tiny ring flooded with events"
	OCAMLRUNPARAM=e=8 "$RUN" -q --fail-on-lost -- "$B/tests/run/flood" 20000 2>"$W/lost.err"
	st=$?
	[ $st -eq 121 ] || fail "tiny ring: exit $st, not 121"
	grep -q 'events were lost' "$W/lost.err" || fail "no lost message: $(cat "$W/lost.err")"
	# The same flood fits the default ring (2^16 words): no loss, exit 0.
	"$RUN" -q --fail-on-lost -- "$B/tests/run/flood" 20000 2>"$W/nolost.err"; st=$?
	[ $st -eq 0 ] || fail "default ring: exit $st, not 0: $(cat "$W/nolost.err")"
	# Without the option, a loss does not change the status.
	OCAMLRUNPARAM=e=8 "$RUN" -q -- "$B/tests/run/flood" 20000; st=$?
	[ $st -eq 0 ] || fail "tiny ring without --fail-on-lost: exit $st"
	# Fewer rings than threads: the shim drops the extra thread's events
	# and counts them (rte.dropped), which is a loss too.
	RTE_RINGS=1 "$RUN" -q --fail-on-lost -- "$B/tests/run/flood" 1000 2 2>"$W/drop.err"
	st=$?
	[ $st -eq 121 ] || fail "one ring, two threads: exit $st, not 121"
	grep -q ' [1-9][0-9]* events dropped by the shim' "$W/drop.err" ||
		fail "dropped events not reported: $(cat "$W/drop.err")"
	# A failing command keeps its own status.
	OCAMLRUNPARAM=e=8 "$RUN" -q --fail-on-lost -- sh -c '"$1" 20000; exit 4' sh \
		"$B/tests/run/flood" 2>/dev/null; st=$?
	[ $st -eq 4 ] || fail "failing command with losses: exit $st, not its own 4"
}

test_crash() {
	begin "--fail-on-crash fails when a child process crashed"
	"$RUN" -q --fail-on-crash -- sh -c 'sh -c "kill -KILL \$\$"; exit 0' 2>"$W/crash.err"
	st=$?
	[ $st -eq 122 ] || fail "killed child: exit $st, not 122"
	grep -Eq 'was killed by SIGKILL|ended without ring_stop' "$W/crash.err" ||
		fail "no crash message: $(cat "$W/crash.err")"
	# A subshell that never wrote a file of its own, SIGKILLed (as the
	# OOM killer does): the model's tree has it from its parent's reap.
	"$RUN" -q --fail-on-crash -- bash -c '( while :; do :; done ) & p=$!
		sleep 0.3; kill -9 $p; wait $p 2>/dev/null; exit 0' 2>"$W/sub.err"
	st=$?
	[ $st -eq 122 ] || fail "SIGKILLed subshell: exit $st, not 122: $(cat "$W/sub.err")"
	grep -Eq 'process [0-9]+ was killed by SIGKILL' "$W/sub.err" ||
		fail "no message for the SIGKILLed subshell: $(cat "$W/sub.err")"
	# Stopped on purpose (SIGTERM) or a pipeline's writer (SIGPIPE): not
	# crashes, though the tree marks the first failed.
	"$RUN" -q --fail-on-crash -- sh -c 'yes | head -1 >/dev/null
		sleep 5 & p=$!; sleep 0.2; kill -TERM $p; wait $p; exit 0' \
		2>"$W/term.err"
	st=$?
	[ $st -eq 0 ] || fail "SIGTERM and SIGPIPE counted as crashes: exit $st: $(cat "$W/term.err")"
	"$RUN" -q -- sh -c 'sh -c "kill -KILL \$\$"; exit 0' 2>/dev/null; st=$?
	[ $st -eq 0 ] || fail "killed child without --fail-on-crash: exit $st"
	# A child that dies of SIGSEGV (recorded as rte.crash when the shim
	# has its crash recorder, else seen as a file without ring_stop).
	"$RUN" -q --fail-on-crash -- sh -c 'sh -c "kill -SEGV \$\$"; exit 0' 2>"$W/segv.err"
	st=$?
	[ $st -eq 122 ] || fail "child killed by SIGSEGV: exit $st, not 122"
	grep -Eq 'process [0-9]+ (crashed|ended without ring_stop)' "$W/segv.err" ||
		fail "no crash message: $(cat "$W/segv.err")"
	# A signal the program handles and survives is said, not counted.
	"$RUN" -q --fail-on-crash -- "$B/tests/run/recover" 2>"$W/recover.err"; st=$?
	[ $st -eq 0 ] || fail "a survived SIGSEGV with --fail-on-crash: exit $st: $(cat "$W/recover.err")"
	grep -q 'received SIGSEGV and passed it to its own handler' "$W/recover.err" ||
		fail "the survived SIGSEGV is not reported: $(cat "$W/recover.err")"
	# No false alarm on a clean tree of forks and execs.
	"$RUN" -q --fail-on-crash -- "$B/tests/run/tree" >/dev/null 2>"$W/clean.err"; st=$?
	[ $st -eq 0 ] || fail "clean tree with --fail-on-crash: exit $st: $(cat "$W/clean.err")"
}

# A trace of one process: its tree line (command line, exit, CPU, RSS)
# too, then its block; the same figures as summary-json's tree.
test_single() {
	begin "one process: its tree line and its block"
	"$RUN" -q -d "$W/one" -- sh -c 'exit 3' 2>/dev/null; st=$?
	[ $st -eq 3 ] || fail "sh -c 'exit 3' under rte-run: exit $st"
	"$B/rte-read" -f summary "$W/one" >"$W/one.txt" || fail "summary of one process"
	"$B/rte-read" -f summary-json "$W/one" >"$W/one.json" || fail "summary-json of one process"
	grep -q '^process tree: 1 process$' "$W/one.txt" ||
		fail "no tree header: $(head -3 "$W/one.txt")"
	line=$(grep "sh -c 'exit 3'" "$W/one.txt")
	want=$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["tree"]
assert len(t) == 1, t
print(t[0]["pid"], t[0]["exit"]["status"])' "$W/one.json") || fail "summary-json tree"
	set -- $line
	[ "$1 $2 $6" = "! $want" ] || fail "tree line '$line', summary-json says '$want'"
	grep -q "^process $2\$" "$W/one.txt" || fail "no block for the one process"
	grep -q "^critical path" "$W/one.txt" && fail "a critical path of one process"
	return 0
}

# ---- environment -------------------------------------------------------------------------

test_env() {
	begin "caller's LD_PRELOAD kept, tracing variables replaced"
	cat >"$W/marker.c" <<'EOF'
#include <unistd.h>
__attribute__((constructor)) static void marker(void)
{
	if (write(2, "marker-loaded\n", 14) < 0)
		_exit(99);
}
EOF
	"$CC" $SAN -shared -fPIC -o "$W/libmarker.so" "$W/marker.c" || { fail "cannot build the marker"; return; }
	# (In an ASan build the caller's list starts with the ASan runtime, as
	# it must for rte-run's own processes to start at all. In a TSan build
	# it starts with the TSan runtime, which rte-run moves after librte.so,
	# and holds no librte.so, which would need it after itself.)
	if [ -n "$TSAN_RT" ]; then
		pre="$TSAN_RT $W/libmarker.so"
	else
		pre="${ASAN_RT:+$ASAN_RT }$W/libmarker.so $B/librte.so"
	fi
	LD_PRELOAD=$pre OCAML_RUNTIME_EVENTS_DIR=/nonexistent \
		"$RUN" -f summary-json -o "$W/env.json" -- \
		sh -c 'echo "$LD_PRELOAD"; echo "$OCAML_RUNTIME_EVENTS_DIR"; echo "$OCAML_RUNTIME_EVENTS_PRESERVE"' \
		>"$W/env.out" 2>"$W/env.err" || fail "exit $?"
	pre=$(sed -n 1p "$W/env.out")
	case $pre in
	*"$W/libmarker.so:$B/librte.so${TSAN_RT:+:$TSAN_RT}") ;;
	*) fail "LD_PRELOAD is '$pre': not the caller's entry followed by librte.so once${TSAN_RT:+ and $TSAN_RT}" ;;
	esac
	[ -z "$TSAN_RT" ] || [ "$(echo "$pre" | tr ': ' '\n\n' | grep -c 'libtsan')" -eq 1 ] ||
		fail "the TSan runtime is not in '$pre' once"
	[ "$(echo "$pre" | tr ': ' '\n\n' | grep -c 'librte\.so$')" -eq 1 ] ||
		fail "librte.so appears more than once in '$pre'"
	grep -q marker-loaded "$W/env.err" || fail "the caller's preload did not run"
	[ "$(sed -n 2p "$W/env.out")" != /nonexistent ] || fail "OCAML_RUNTIME_EVENTS_DIR not replaced"
	[ "$(sed -n 3p "$W/env.out")" = 1 ] || fail "OCAML_RUNTIME_EVENTS_PRESERVE not set"
	json_check "$W/env.json" 'len(d["processes"]) >= 1 and d["events"] > 0' ||
		fail "nothing traced with a caller's LD_PRELOAD"

	# rte-run inside rte-run (a traced harness that uses rte-run itself):
	# the inner one traces only its command, the status goes through both.
	"$RUN" -q -- "$RUN" -f summary-json -o "$W/inner.json" -- \
		sh -c 'echo $$ >"$1"; exit 5' sh "$W/inner.pid" 2>"$W/nest.err"; st=$?
	[ $st -eq 5 ] || fail "nested rte-run: exit $st, not 5: $(cat "$W/nest.err")"
	json_check "$W/inner.json" "list(procs) == [$(cat "$W/inner.pid")]" ||
		fail "the inner rte-run traced more than its command"

	RTE_LIB=$W/nothing.so "$RUN" -q -- true 2>"$W/lib.err"; st=$?
	[ $st -eq 125 ] || fail "RTE_LIB pointing nowhere: exit $st, not 125"
	grep -q 'cannot find librte.so' "$W/lib.err" || fail "RTE_LIB: $(cat "$W/lib.err")"
}

test_env_exact() {
	begin "the command gets exactly rte-run's environment plus its documented variables"
	# bash's exported function (BASH_FUNC_f%%), a name with a blank, an
	# empty value: a /bin/sh script drops or rewrites such entries.
	out=$(bash -c 'f() { echo from-f; }; export -f f; exec "$1" -q -- bash -c f' sh "$RUN" 2>"$W/fn.err")
	[ "$out" = from-f ] || fail "an exported bash function did not reach the command: '$out' $(cat "$W/fn.err")"
	env -i "PATH=$PATH" "A=1" "x y=2" "EMPTY=" "BASH_FUNC_g%%=() {  echo g
}" "OCAML_RUNTIME_EVENTS_DIR=/x" "RTE_LOG=/dev/null" ${ASAN_OPTIONS:+"ASAN_OPTIONS=$ASAN_OPTIONS"} \
		${LD_PRELOAD:+"LD_PRELOAD=$LD_PRELOAD"} "$RUN" -q -- env -0 >"$W/env0" 2>"$W/env0.err" ||
		fail "env -0 under rte-run: exit $? $(cat "$W/env0.err")"
	env -i "PATH=$PATH" "A=1" "x y=2" "EMPTY=" "BASH_FUNC_g%%=() {  echo g
}" "OCAML_RUNTIME_EVENTS_DIR=/x" "RTE_LOG=/dev/null" ${ASAN_OPTIONS:+"ASAN_OPTIONS=$ASAN_OPTIONS"} \
		${LD_PRELOAD:+"LD_PRELOAD=$LD_PRELOAD"} env -0 >"$W/env0.plain"
	python3 - "$W/env0.plain" "$W/env0" <<'PY' || fail "the environments differ (see above)"
import sys
def entries(f):
    return [e for e in open(f, "rb").read().split(b"\0") if e]
plain, traced = entries(sys.argv[1]), entries(sys.argv[2])
ours = {b"LD_PRELOAD", b"OCAML_RUNTIME_EVENTS_START", b"OCAML_RUNTIME_EVENTS_DIR",
        b"OCAML_RUNTIME_EVENTS_PRESERVE", b"RTE_LOG"}
name = lambda e: e.split(b"=", 1)[0]
# The drain's ring size, set only where neither OCAMLRUNPARAM nor
# CAMLRUNPARAM is (tools/rte-run/rte-run, ring_env).
if not any(name(e) in (b"OCAMLRUNPARAM", b"CAMLRUNPARAM") for e in plain):
    ours.add(b"OCAMLRUNPARAM")
    if b"OCAMLRUNPARAM=e=18" not in traced:
        print("no OCAMLRUNPARAM=e=18 for the drain", file=sys.stderr)
        sys.exit(1)
keep = [e for e in plain if name(e) not in ours]
got = [e for e in traced if name(e) not in ours]
ok = sorted(keep) == sorted(got) and {name(e) for e in traced} - {name(e) for e in plain} <= ours
ok = ok and len(traced) == len({name(e) for e in traced})
if not ok:
    print("plain: %r\ntraced: %r" % (plain, traced), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	leftenv=$(ls "$TMPDIR" | grep -c '^rte-run-env\.')
	[ "$leftenv" -eq 0 ] || fail "the environment copies were left in TMPDIR: $(ls "$TMPDIR")"
}

test_relative_tmpdir() {
	begin "TMPDIR=. : the directory passed to the command is absolute"
	mkdir -p "$W/rel"
	(cd "$W/rel" && TMPDIR=. "$RUN" -f summary-json -o "$W/rel.json" -- \
		sh -c 'echo "$OCAML_RUNTIME_EVENTS_DIR" >"$1"; echo "$RTE_LOG" >>"$1"; cd / && exec "$2" 10' \
		sh "$W/rel.dirs" "$B/tests/run/flood") 2>"$W/rel.err" || fail "exit $?: $(cat "$W/rel.err")"
	for d in $(cat "$W/rel.dirs"); do
		case $d in /*) ;; *) fail "rte-run passed a relative path: $d" ;; esac
	done
	# The program exec'd after the cd made its file: the process has the
	# file of sh and the file of the new image.
	json_check "$W/rel.json" 'len(d["processes"]) == 1 and len(d["processes"][0]["files"]) == 2' ||
		fail "the program started after 'cd /' was not traced"
	[ -z "$(ls "$W/rel")" ] || fail "rte-run left files in TMPDIR=.: $(ls "$W/rel")"
}

test_default_tmpdir() {
	begin "TMPDIR unset: the temporary directory is in librte.so's default root, and goes"
	# The rule, said again here from the file systems (common/format/rundir.c):
	# /dev/shm where /tmp is on a disk and /dev/shm is a writable tmpfs.
	root=/tmp
	if [ "$(stat -f -c %T /tmp)" != tmpfs ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
		[ -w /dev/shm ] && [ -x /dev/shm ]; then
		root=/dev/shm
	fi
	env -u TMPDIR "$RUN" -q -- sh -c 'echo "$OCAML_RUNTIME_EVENTS_DIR" >"$1"' sh "$W/def.dir" \
		2>"$W/def.err" || fail "exit $?: $(cat "$W/def.err")"
	d=$(cat "$W/def.dir")
	case $d in
	"$root"/rte-run.*/.rte-live) ;;
	*) fail "the ring files went to $d, not to a directory in $root" ;;
	esac
	[ ! -e "${d%/.rte-live}" ] || fail "${d%/.rte-live} left behind"
}

test_bad_dir_output() {
	begin "-d FILE and an unusable -o FILE fail before the command runs"
	"$RUN" -d /etc/passwd -- touch "$W/ran-d" 2>"$W/d.err"; st=$?
	[ $st -eq 125 ] || fail "-d /etc/passwd: exit $st, not 125"
	grep -q '/etc/passwd.*not a directory' "$W/d.err" || fail "-d /etc/passwd: '$(cat "$W/d.err")'"
	[ ! -e "$W/ran-d" ] || fail "-d /etc/passwd: the command ran"
	for o in "$W/no/such/dir/out.json" "$W"; do
		rm -f "$W/ran-o"
		"$RUN" -f summary-json -o "$o" -- touch "$W/ran-o" 2>"$W/o.err"; st=$?
		[ $st -eq 125 ] || fail "-o $o: exit $st, not 125"
		[ ! -e "$W/ran-o" ] || fail "-o $o: the command ran before the output was found unusable"
		grep -q "rte-run: $o (-o): " "$W/o.err" || fail "-o $o: '$(cat "$W/o.err")'"
	done
	[ "$(leftovers)" -eq 0 ] || fail "temporary directories left: $(ls "$TMPDIR")"
}

test_log() {
	begin "librte.so's warnings go to rte-run's log (RTE_LOG) and its report, not the command's stderr"
	"$RUN" -q -- sh -c 'case $RTE_LOG in /*) ;; *) exit 9 ;; esac
		[ -f "$RTE_LOG" ] && [ -w "$RTE_LOG" ] || exit 8
		echo "rte: a warning" >>"$RTE_LOG"' >"$W/log.out" 2>"$W/log.err"; st=$?
	[ $st -eq 0 ] || fail "RTE_LOG is not an absolute, writable file (exit $st)"
	grep -q '^rte: a warning$' "$W/log.err" || fail "the log's line is not in rte-run's report: $(cat "$W/log.err")"
	[ "$(ls "$TMPDIR" | grep -c '^rte-run-log\.')" -eq 0 ] || fail "the log file was left: $(ls "$TMPDIR")"
	# A real warning of librte.so (more threads than rings), once the
	# shim knows RTE_LOG: in the report, not in the program's own stderr.
	if ! grep -q RTE_LOG "$B/librte.so"; then
		echo "   (skipped: this librte.so does not read RTE_LOG yet)"
		return
	fi
	RTE_RINGS=1 "$RUN" -q -- sh -c '"$1" 1000 2 2>"$2"' sh "$B/tests/run/flood" "$W/prog.err" \
		2>"$W/real.err" || fail "flood: exit $?"
	grep -q '^rte: all 1 rings' "$W/real.err" || fail "the shim's warning is not in the report: $(cat "$W/real.err")"
	! grep -q '^rte: ' "$W/prog.err" || fail "the shim's warning is in the program's stderr: $(cat "$W/prog.err")"
}

# ---- a reader that went away, -q, checks before the command runs ---------------

# closed_stderr COMMAND [ARG]...: runs it with standard error a pipe whose
# reader is gone (as `rte-run ... 2>&1 | head -1` once head has ended) and
# standard output /dev/null; prints its exit status (-N: killed by N).
closed_stderr() {
	python3 - "$@" <<'EOF'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=w)
print(p.returncode)
EOF
}

# rte-run's log files left in $TMPDIR.
leftlogs() { ls "$TMPDIR" | grep -c '^rte-run-log\.' ; }

test_closed_stderr() {
	begin "standard error's reader gone: documented status, nothing left behind"
	st=$(closed_stderr env RTE_RINGS=1 "$RUN" --fail-on-lost -- "$B/tests/run/flood" 1000 2)
	[ "$st" = 121 ] || fail "--fail-on-lost with losses: exit $st, not 121"
	# (The command's own stderr is elsewhere: sh says "Killed" there.)
	st=$(closed_stderr "$RUN" -q --fail-on-crash -- sh -c 'exec 2>/dev/null; sh -c "kill -KILL \$\$"; exit 0')
	[ "$st" = 122 ] || fail "--fail-on-crash with a crash report: exit $st, not 122"
	st=$(closed_stderr "$RUN" -- sh -c 'exit 3')
	[ "$st" = 3 ] || fail "the summary to a closed pipe: exit $st, not the command's 3"
	st=$(closed_stderr "$RUN" -q -- "$W/no-such-command")
	[ "$st" = 127 ] || fail "a missing command: exit $st, not 127"
	st=$(closed_stderr "$RUN" --no-such-option -- true)
	[ "$st" = 125 ] || fail "a bad option: exit $st, not 125"
	[ "$(leftovers)" -eq 0 ] || fail "temporary directories left: $(ls "$TMPDIR")"
	[ "$(leftlogs)" -eq 0 ] || fail "log files left: $(ls "$TMPDIR")"
	rm -rf "$TMPDIR"/rte-run*
}

test_quiet_output() {
	begin "-q -o FILE writes FILE and prints no trace"
	rm -f "$W/q.json"
	"$RUN" -q -f summary-json -o "$W/q.json" -- sh -c 'echo $$ >"$1"' sh "$W/q.pid" \
		2>"$W/q.err"; st=$?
	[ $st -eq 0 ] || fail "-q -o: exit $st: $(cat "$W/q.err")"
	[ -s "$W/q.json" ] || { fail "-q -o FILE wrote no file"; return; }
	json_check "$W/q.json" "list(procs) == [$(cat "$W/q.pid")]" || fail "-q -o FILE: not the command's trace"
	[ ! -s "$W/q.err" ] || fail "-q -o FILE printed: $(cat "$W/q.err")"
	"$RUN" -q -s -- true 2>"$W/qs.err"; st=$?
	[ $st -eq 125 ] || fail "-q with -s: exit $st, not 125"
	# The -o FILE is checked before the command runs with -q too.
	"$RUN" -q -o "$W/no/such/dir/q.json" -- touch "$W/ran-q" 2>/dev/null; st=$?
	[ $st -eq 125 ] || fail "-q -o in a missing directory: exit $st, not 125"
	[ ! -e "$W/ran-q" ] || fail "-q -o in a missing directory: the command ran"
}

# not_run WHAT RTE-RUN-OPTION...: rte-run with these options must refuse
# with 125 and a reason, before running its command.
not_run() {
	what=$1
	shift
	rm -f "$W/ran"
	"$RUN" "$@" -- touch "$W/ran" 2>"$W/nr.err"; st=$?
	[ $st -eq 125 ] || fail "$what: exit $st, not 125"
	[ ! -e "$W/ran" ] || fail "$what: the command ran before the usage error"
	grep -q '^rte-run: ' "$W/nr.err" || fail "$what: no reason given: $(cat "$W/nr.err")"
}

test_early_checks() {
	begin "--push, --label, --job, -o in the trace directory: refused before the command runs"
	not_run "--push=ftp://x" --push=ftp://x
	not_run "--push=http://" --push=http://
	not_run "--push=http://h:port" --push=http://h:port
	not_run "a label without a value" --push=http://h --label=a
	not_run "a label name starting with a digit" --push=http://h --label=1a=b
	not_run "a label named job" --push=http://h --label=job=x
	not_run "an empty job" --push=http://h --job=
	not_run "--label without --push" --label=a=b
	not_run "--instance without --push" --instance=x
	not_run "a label named instance" --push=http://h --label=instance=x
	not_run "-o in the -d directory" -d "$W/od" -o "$W/od/trace.txt"
	[ ! -e "$W/od" ] || fail "-o in the -d directory: the directory was made all the same"
	mkdir -p "$W/od2"
	not_run "-o in an existing -d directory" -d "$W/od2" -f summary-json -o "$W/od2/../od2/t.json"
	# -o in a directory that -d makes: fine.
	"$RUN" -d "$W/new/rings" -f summary-json -o "$W/new/t.json" -- true 2>"$W/new.err" ||
		fail "-o in a parent that -d makes: exit $?: $(cat "$W/new.err")"
	json_check "$W/new/t.json" 'len(d["processes"]) == 1' || fail "-o in a parent that -d makes: no file"
	[ "$(leftovers)" -eq 0 ] || fail "temporary directories left: $(ls "$TMPDIR")"
}

# rte-run checks --push, --job and --label with rte-read's rules
# (common/push/pushgw.c): each set of options below is refused by both
# tools or by neither, a refused URL for the same reason. Taken ones push
# to 127.0.0.1 port 1, which refuses the connection: nothing leaves the
# machine.
test_push_rules() {
	begin "--push, --job, --label: rte-run refuses what rte-read --push refuses, for the same reason"
	long=$(printf '%0300d' 0)
	set -f
	for args in --push=ftp://x --push=https://127.0.0.1:1 --push=HTTP://h \
		--push=http:// --push=http://:1 --push=http://h: --push=http://h:x \
		--push=http://h:1:2 --push=http://[::1 --push=http://[::1]x \
		"--push=http://$long" --push=http://[$long] \
		--push=http://127.0.0.1:123456789012345 --push=http://h:1234567890123456 \
		--push=http://127.0.0.1:1/a/b/ --push=http://[::1]:1 \
		"--push=http://127.0.0.1:1 --label=a=b --label=_x= --label=A_9==" \
		"--push=http://h --label=a" "--push=http://h --label==b" \
		"--push=http://h --label=1a=b" "--push=http://h --label=job=x" \
		"--push=http://h --label=a-b=c" "--push=http://h --label=a.b=c" \
		"--push=http://127.0.0.1:1 --label=jobs=x --job=j" "--push=http://h --job=" \
		"--push=http://h --label=instance=x" "--push=http://h --label=exe=x" \
		"--push=http://h --label=__a=x" "--push=http://h --instance=" \
		"--push=http://127.0.0.1:1 --instance=i1 --label=run=7"; do
		"$READ" $args "$W/none" >/dev/null 2>"$W/pr.read"; rst=$?
		rm -f "$W/ran"
		"$RUN" -q $args -- touch "$W/ran" >/dev/null 2>"$W/pr.run"; st=$?
		if [ $rst = 1 ] && grep -q "^Try 'rte-read --serve --help'" "$W/pr.read"; then
			[ $st = 125 ] && [ ! -e "$W/ran" ] || {
				fail "$args: rte-read refuses it, rte-run did not (exit $st): $(head -1 "$W/pr.read")"
				continue
			}
			case $args in *--label* | *--job* | *--instance*) continue ;; esac
			why=$(sed -n '1s/^rte-read: //p' "$W/pr.read")
			[ "$(head -1 "$W/pr.run")" = "rte-run: --push: $why" ] ||
				fail "$args: rte-run says '$(head -1 "$W/pr.run")', rte-read '$why'"
		else
			[ -e "$W/ran" ] ||
				fail "$args: rte-read takes it (exit $rst), rte-run refused it: $(head -1 "$W/pr.run")"
			(set +f; rm -rf "$TMPDIR"/rte-run.*) # kept: the push failed
		fi
	done
	set +f
	# Control characters in a value (a newline, which rte-run's own list of
	# labels cannot hold, and a tab): refused by both, with the one rule
	# (common/push/pushgw.h RTE_PUSHGW_LABEL_RULE).
	nl='a=x
y'
	for l in "$nl" "$(printf 'a=x\ty')" "b=1
--label=c=2"; do
		"$READ" --push=http://127.0.0.1:1 --label "$l" "$W/none" >/dev/null 2>"$W/pr.read"; rst=$?
		rm -f "$W/ran"
		"$RUN" -q --push=http://127.0.0.1:1 --label "$l" -- touch "$W/ran" >/dev/null 2>"$W/pr.run"; st=$?
		[ $rst = 1 ] && grep -q 'without control characters' "$W/pr.read" ||
			fail "rte-read --label with a control character: exit $rst: $(cat "$W/pr.read")"
		[ $st = 125 ] && [ ! -e "$W/ran" ] && grep -q 'without control characters' "$W/pr.run" ||
			fail "rte-run --label with a control character: exit $st: $(cat "$W/pr.run")"
	done
	"$READ" --push=http://127.0.0.1:1 --job "$nl" "$W/none" >/dev/null 2>"$W/pr.read"
	grep -q 'without control characters' "$W/pr.read" || fail "rte-read --job with a newline: $(cat "$W/pr.read")"
	"$RUN" -q --push=http://127.0.0.1:1 --job "$nl" -- touch "$W/ran" >/dev/null 2>"$W/pr.run"
	grep -q 'without control characters' "$W/pr.run" || fail "rte-run --job with a newline: $(cat "$W/pr.run")"
	"$READ" --push=http://127.0.0.1:1 --instance "$nl" "$W/none" >/dev/null 2>"$W/pr.read"
	grep -q 'without control characters' "$W/pr.read" || fail "rte-read --instance with a newline: $(cat "$W/pr.read")"
	rm -f "$W/ran"
	"$RUN" -q --push=http://127.0.0.1:1 --instance "$nl" -- touch "$W/ran" >/dev/null 2>"$W/pr.run"; st=$?
	[ $st = 125 ] && [ ! -e "$W/ran" ] && grep -q 'without control characters' "$W/pr.run" ||
		fail "rte-run --instance with a newline: exit $st (not refused before the command): $(cat "$W/pr.run")"
}

test_profile_options() {
	begin "--profile's rate and the profile formats: checked before the command runs"
	not_run "--profile=200000" --profile=200000
	not_run "--profile=0" --profile=0
	not_run "--profile=00" --profile=00
	not_run "--profile=99999999999999999999999" --profile=99999999999999999999999
	not_run "-f pprof without -o" --alloc -f pprof
	"$RUN" -q --profile=100000 -- true || fail "--profile=100000 (the maximum): exit $?"
	"$RUN" --profile=0100 -f summary-json -o "$W/p.json" -- sh -c 'echo "$RTE_PROFILE" >"$1"' sh "$W/hz" ||
		fail "--profile=0100: exit $?"
	[ "$(cat "$W/hz")" = 100 ] || fail "--profile=0100 set RTE_PROFILE=$(cat "$W/hz"), not 100"
	# The profile asked for is the one written and warned about.
	"$RUN" --profile -f pprof -o "$W/p.pb.gz" -- true 2>"$W/p.err" || fail "--profile -f pprof: exit $?"
	grep -q 'allocation' "$W/p.err" && fail "--profile -f pprof warns about allocations: $(cat "$W/p.err")"
	grep -q 'no CPU' "$W/p.err" || fail "--profile -f pprof on a run without CPU samples says nothing: $(cat "$W/p.err")"
	"$RUN" --alloc -f folded -o "$W/a.folded" -- true 2>"$W/a.err" || fail "--alloc -f folded: exit $?"
	grep -q 'CPU' "$W/a.err" && fail "--alloc -f folded warns about CPU samples: $(cat "$W/a.err")"
	# pprof is binary: not onto a terminal.
	st=$(python3 - "$RUN" <<'EOF'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "--alloc", "-f", "pprof", "-o", "-", "--", "true"])
while True:
    try:
        if not os.read(fd, 4096):
            break
    except OSError:
        break
_, st = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(st))
EOF
)
	[ "$st" = 125 ] || fail "-f pprof -o - onto a terminal: exit $st, not 125"
	[ "$(leftovers)" -eq 0 ] || fail "temporary directories left: $(ls "$TMPDIR")"
}

test_not_traced() {
	begin "a command that writes no ring file with --fail-on-lost: 125, nothing kept"
	printf 'int rte_run_test_nothing;\n' >"$W/nothing.c"
	"$CC" $SAN -shared -fPIC -o "$W/nothing.so" "$W/nothing.c" || { fail "cannot build a library"; return; }
	RTE_LIB=$W/nothing.so "$RUN" --fail-on-lost -- true 2>"$W/nt.err"; st=$?
	[ $st -eq 125 ] || fail "no ring file with --fail-on-lost: exit $st, not 125"
	grep -q 'no ring files' "$W/nt.err" || fail "no reason given: $(cat "$W/nt.err")"
	grep -q 'kept' "$W/nt.err" && fail "says something was kept: $(cat "$W/nt.err")"
	[ "$(leftovers)" -eq 0 ] || fail "temporary directories left: $(ls "$TMPDIR")"
	# A command whose loader fails (a library gone): not "statically
	# linked": its own status and error, and why there is no file.
	printf 'int gone(void) { return 0; }\n' >"$W/gone.c"
	printf 'int gone(void);\nint main(void) { return gone(); }\n' >"$W/usegone.c"
	"$CC" $SAN -shared -fPIC -o "$W/libgone.so" "$W/gone.c" &&
		"$CC" $SAN -o "$W/usegone" "$W/usegone.c" -L"$W" -lgone -Wl,-rpath,"$W" ||
		{ fail "cannot build the program"; return; }
	rm -f "$W/libgone.so"
	"$RUN" -- "$W/usegone" 2>"$W/gone.err"; st=$?
	[ $st -eq 127 ] || fail "a program whose library is gone: exit $st, not 127"
	grep -q 'exited 127 before it was traced' "$W/gone.err" ||
		fail "no reason given: $(cat "$W/gone.err")"
	grep -q 'statically linked' "$W/gone.err" && fail "says statically linked: $(cat "$W/gone.err")"
	# The same under a shell that forked it: its line is the fork's,
	# marked so (its argv is the shell's).
	"$RUN" -q -d "$W/gone.d" -- bash -c "'$W/usegone'; true" 2>/dev/null
	"$B/rte-read" -f summary "$W/gone.d" >"$W/gone.txt" 2>&1
	grep -q '^!.* 127 .*(fork) bash -c' "$W/gone.txt" ||
		fail "the failed fork child is not marked: $(cat "$W/gone.txt")"
}

test_doc_refs() {
	begin "the sections --help and rte-run(1) point to exist"
	"$RUN" --help >"$W/help.txt" || fail "--help: exit $?"
	python3 - "$TOP" "$W/help.txt" "$TOP/doc/rte-run.1" <<'EOF' || fail "a reference to a missing section (above)"
import os, re, sys
top = sys.argv[1]
bad = 0
for src in sys.argv[2:]:
    text = open(src).read().replace("\\-", "-").replace("\\(dq", '"')
    text = re.sub(r"\s+", " ", text)
    refs = re.findall(r'(README(?:\.md)?|doc/[A-Za-z-]+\.md),? "([^"]+)"', text)
    if not refs:
        print("%s: no references found" % src, file=sys.stderr)
        bad = 1
    for f, sec in refs:
        path = os.path.join(top, f if f.endswith(".md") else f + ".md")
        if not os.path.exists(path):
            print("%s: %s does not exist" % (src, f), file=sys.stderr)
            bad = 1
            continue
        heads = [l.lstrip("#").strip().lower() for l in open(path) if l.startswith("#")]
        if not any(h.startswith(sec.lower()) for h in heads):
            print('%s: %s has no section "%s"' % (src, f, sec), file=sys.stderr)
            bad = 1
sys.exit(bad)
EOF
}

# ---- the build's first command -------------------------------------------------

test_make_order() {
	begin "make demo and make bench on a fresh build folder name every part they run"
	# A prerequisite naming a variable of a fragment read later expands
	# to nothing: make demo then ran build/rte-run before anything made it.
	fresh=$W/fresh-build
	$MAKE -s -n -C "$TOP" BUILD="$fresh" demo >"$W/demo.n" 2>&1 ||
		fail "make -n demo failed: $(tail -3 "$W/demo.n")"
	for part in "cp tools/rte-run/rte-run $fresh/rte-run" "-o $fresh/rte-run-exec " \
		"-o $fresh/rte-read " "-o $fresh/librte.so " "-o $fresh/demo/rte-demo "; do
		grep -qF -- "$part" "$W/demo.n" || fail "make demo on a fresh clone does not build: $part"
	done
	$MAKE -s -n -C "$TOP" BUILD="$fresh" bench >"$W/bench.n" 2>&1 ||
		fail "make -n bench failed: $(tail -3 "$W/bench.n")"
	for part in "-o $fresh/rte-read " "-o $fresh/librte.so "; do
		grep -qF -- "$part" "$W/bench.n" || fail "make bench on a fresh clone does not build: $part"
	done
	[ ! -e "$fresh" ] || fail "make -n created $fresh"
}

test_make_no_apt() {
	begin "make never runs apt-get: it stops with the missing packages and the command"
	# dpkg-query says nothing is installed; apt-get and sudo only leave a mark.
	fake=$W/fakebin fresh=$W/noapt-build
	mkdir -p "$fake"
	printf '#!/bin/sh\nexit 1\n' >"$fake/dpkg-query"
	printf '#!/bin/sh\necho "$0 $*" >>"%s"\n' "$W/apt.calls" >"$fake/apt-get"
	cp "$fake/apt-get" "$fake/sudo"
	chmod +x "$fake/dpkg-query" "$fake/apt-get" "$fake/sudo"
	PATH="$fake:$PATH" $MAKE -s -C "$TOP" BUILD="$fresh" "$fresh/librte.so" \
		>"$W/noapt.out" 2>&1 && fail "make succeeded with packages missing"
	[ ! -e "$W/apt.calls" ] || fail "make ran: $(cat "$W/apt.calls")"
	grep -q 'missing Debian packages: gcc' "$W/noapt.out" ||
		fail "no list of missing packages: $(head -3 "$W/noapt.out")"
	grep -q 'sudo sh scripts/install-deps.sh' "$W/noapt.out" ||
		fail "no command to install them: $(head -3 "$W/noapt.out")"
	rm -rf "$fresh"
}

# ---- install -----------------------------------------------------------------------------

test_install() {
	begin "make install into a DESTDIR, then pkg-config, build, run, read back"
	stage=$W/stage
	prefix=/opt/rte
	root=$stage$prefix
	$MAKE -s -C "$TOP" BUILD="$B" SAN="$SAN" PREFIX=$prefix DESTDIR="$stage" \
		INSTALL_DEPS= install \
		>"$W/install.log" 2>&1 || { cat "$W/install.log"; fail "make install failed"; return; }
	for f in bin/rte-run bin/rte-read lib/librte.so lib/librteconsumer.a \
		lib/librteconsumer.so libexec/rte/rte-run-exec include/rte/rte.h \
		include/rte/consumer.h include/rte/format.h include/rte/error.h \
		lib/pkgconfig/rte.pc lib/pkgconfig/rteconsumer.pc \
		$(cd "$TOP" && ls doc/*.1 | sed 's|^doc/|share/man/man1/|'); do
		[ -f "$root/$f" ] || fail "not installed: $prefix/$f"
	done
	command -v pkg-config >/dev/null || { fail "pkg-config is missing (scripts/install-deps.sh installs it)"; return; }
	export PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_LIBDIR="$root/lib/pkgconfig"
	# shellcheck disable=SC2046
	"$CC" $SAN -o "$W/app" "$TOP/tests/run/app.c" $(pkg-config --cflags --libs rte) ||
		{ fail "cannot build a program with pkg-config rte"; return; }
	# shellcheck disable=SC2046
	"$CC" $SAN -o "$W/readback" "$TOP/tests/run/readback.c" $(pkg-config --cflags --libs rteconsumer) ||
		{ fail "cannot build a consumer with pkg-config rteconsumer"; return; }
	unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR

	# The installed rte-run, through a symlink elsewhere, from another
	# directory: it must find the installed librte.so, rte-read and helper.
	mkdir -p "$W/bin" "$W/elsewhere"
	ln -s "$root/bin/rte-run" "$W/bin/rte-run"
	(cd "$W/elsewhere" && LD_LIBRARY_PATH="$root/lib" PATH="$W/bin:/usr/bin:/bin" \
		rte-run --keep -d "$W/inst" -f summary-json -o "$W/inst.json" -- \
		sh -c 'echo "$LD_PRELOAD" >"$1"; exec "$2"' sh "$W/inst.preload" "$W/app") \
		>"$W/app.out" 2>"$W/app.err" || { cat "$W/app.err"; fail "the app under the installed rte-run failed"; }
	case $(cat "$W/inst.preload") in
	*"$root/lib/librte.so${TSAN_RT:+:$TSAN_RT}") ;;
	*) fail "the installed rte-run preloaded '$(cat "$W/inst.preload")', not $root/lib/librte.so" ;;
	esac
	json_check "$W/inst.json" "any(e['name'] == 'app.step' and e['count'] == 5 \
for p in d['processes'] for e in p['spans'])" || fail "app.step spans missing from the summary"
	path=$(cat "$W/app.out")
	# The drain moved what the app wrote into its capture, DIR/NAME.
	case $path in */.rte-live/*) path=${path%/.rte-live/*}/${path##*/} ;; esac
	[ -f "$path" ] || { fail "the app's ring file '$path' is not there"; return; }
	got=$(LD_LIBRARY_PATH="$root/lib" "$W/readback" "$path") || fail "readback failed"
	[ "$got" = "spans 5 value 42 phases 1" ] ||
		fail "readback through the installed consumer: '$got'"

	$MAKE -s -C "$TOP" BUILD="$B" SAN="$SAN" PREFIX=$prefix DESTDIR="$stage" uninstall \
		>"$W/uninstall.log" 2>&1 || fail "make uninstall failed: $(cat "$W/uninstall.log")"
	left=$(find "$stage" -type f -o -type l | head -5)
	[ -z "$left" ] || fail "make uninstall left: $left"
}

# Arguments: the tests to run (test_env ...); none: all of them.
if [ $# -gt 0 ]; then
	for t in "$@"; do "$t"; done
else
	test_status
	test_output
	test_keep
	test_badfile
	test_formats
	test_tree
	test_killed_tree
	test_killed_run
	test_late_process
	test_signals
	test_tty
	test_lost
	test_crash
	test_single
	test_env
	test_env_exact
	test_relative_tmpdir
	test_default_tmpdir
	test_bad_dir_output
	test_log
	test_closed_stderr
	test_quiet_output
	test_early_checks
	test_push_rules
	test_profile_options
	test_not_traced
	test_doc_refs
	test_make_order
	test_make_no_apt
	test_install
fi

report
