#!/bin/sh
# run.sh - integration tests of librte.so: real programs (tests/shim/progs)
# under the real LD_PRELOAD shim, their files read back with the real
# consumer library (tests/shim/dump.c prints one line per event:
# "<ring> <kind> <name> <value>"), plus the C API from a program linked
# with -lrte (tests/shim/api.c, which checks its own file).
#
# Environment (set by mk/shim.mk): RTE_BUILD, the build folder (absolute);
# RTE_ASAN_RT, the ASan runtime to preload first (empty without ASan).
# Tests that need root (tmpfs mounts) are skipped with a printed reason
# otherwise. Every program runs under `timeout` so that a deadlock fails
# the test instead of hanging the suite.
set -u

. "$(dirname "$0")/lib.sh"

# plain CMD...: the same program without the shim (for comparisons). An
# ASan-built program still needs nothing preloaded: it links libasan.
plain() {
	$TMO "$@"
}

# forkways_child MODE: forkways MODE traced into $D must exit 0 with
# nothing on stderr; then child_file.
forkways_child() {
	traced "$D" "$T/forkways" "$1" >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	child_file
}

# rte_lines FILE: number of "rte: " lines in a stderr capture.
rte_lines() {
	grep -c '^rte: ' "$1"
}

# ---- threads -----------------------------------------------------------------

test_threads() {
	begin threads
	traced "$D" "$T/threads" 100 10 >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stdout" "$(cat "$D/out")" "threads done 100"
	expect_eq "stderr" "$(cat "$D/err")" ""
	expect_eq "files" "$(nfiles "$D")" 1
	f=$(ls "$D"/*.events)
	pid=$(basename "$f" .events)
	dump "$f" "$D/d"
	expect_eq "domain_spawn" "$(count "$D/d" '$3=="domain_spawn" && $4=='"$pid")" 100
	expect_eq "domain_terminate" "$(count "$D/d" '$3=="domain_terminate"')" 100
	expect_eq "ring_start on ring 0" "$(count "$D/d" '$1==0 && $3=="ring_start" && $4=='"$pid")" 1
	expect_eq "ring_stop" "$(count "$D/d" '$3=="ring_stop"')" 1
	expect_eq "values" "$(count "$D/d" '$3=="t.value"')" 1001
	expect_eq "tids" "$(count "$D/d" '$3=="rte.thread.tid"')" 101
	# Every thread's 10 events are on one ring, next to its own name.
	bad=$(awk '$1 == "header" { next }
		$3 == "rte.thread.name" { name[$1] = $4 }
		$3 == "t.value" && $4 >= 0 {
			n[$4]++
			if (!($4 in ring)) ring[$4] = $1
			if (ring[$4] != $1 || name[$1] != "w" $4) bad++
		}
		END { for (i = 0; i < 100; i++) if (n[i] != 10) bad++
			print bad + 0 }' "$D/d")
	expect_eq "events on their thread's ring" "$bad" 0
	# Main renamed each thread it cancels: "<ring>:c<i>" names the ring
	# that thread i wrote on.
	bad=$(awk '$1 == "header" { next }
		$3 == "t.value" && $4 >= 0 && !($4 in ring) { ring[$4] = $1 }
		$3 == "rte.thread.name_of" {
			split($4, p, ":"); i = substr(p[2], 2)
			if (p[2] != "c" i) bad++; named[i] = p[1]; n++
		}
		END { for (i in named) if (ring[i] != named[i]) bad++
			print (n == 33 ? 0 : 100) + bad }' "$D/d")
	expect_eq "renames by another thread" "$bad" 0
	# 100 threads, at most 11 at once: ring indexes are reused.
	maxring=$(awk '$1 != "header" && $1 > m { m = $1 } END { print m + 0 }' "$D/d")
	[ "$maxring" -le 10 ] || fail "ring $maxring used: indexes not reused"
	finish
}

# A program that closes every descriptor (the shim's too): rings are still
# reserved (through the mapping) and the file is still removed at exit.
test_closed_fds() {
	begin closed_fds
	traced "$D" "$T/threads" 20 5 closefds >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	f=$(ls "$D"/*.events)
	dump "$f" "$D/d"
	expect_eq "values" "$(count "$D/d" '$3=="t.value"')" 201
	mkdir "$D/np"
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/np" "$T/threads" 20 5 closefds \
		>/dev/null 2>&1
	expect_eq "files left without PRESERVE" "$(ls -A "$D/np")" ""
	finish
}

test_rings_full() {
	begin rings_full
	traced "$D" RTE_RINGS=3 "$T/threads" 30 10 >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stdout" "$(cat "$D/out")" "threads done 30"
	expect_eq "stderr lines" "$(rte_lines "$D/err")" 1
	grep -q 'all 3 rings' "$D/err" || fail "no report of full rings"
	f=$(ls "$D"/*.events)
	dump "$f" "$D/d"
	grep -q '^header .* rings=3 ' "$D/d" || fail "RTE_RINGS=3 not used"
	dropped=$(awk '$3 == "rte.dropped" { print $4 }' "$D/d")
	[ -n "$dropped" ] && [ "$dropped" -gt 0 ] ||
		fail "rte.dropped missing or zero: '$dropped'"
	finish
}

# ---- fork --------------------------------------------------------------------

# check_child FILE PID: a fork child's file starts with ring_start(pid),
# fork_child on ring 0 and uses ring 0 only.
# check_child_start FILE PID: FILE (dumped to FILE.d) starts as a fork
# child's: ring_start with PID, then fork_child.
check_child_start() {
	dump "$1" "$1.d"
	first=$(awk '$1 != "header" && $2 == "lifecycle" { print $3 "=" $4 }' "$1.d" | head -2 | tr '\n' ' ')
	expect_eq "child $2 starts" "$first" "ring_start=$2 fork_child=0 "
}

check_child() {
	dump "$1" "$1.d"
	first=$(awk '$1 != "header" && $2 == "lifecycle" { print $3 "=" $4 }' "$1.d" | head -2 | tr '\n' ' ')
	expect_eq "child $2 starts" "$first" "ring_start=$2 fork_child=0 "
	expect_eq "child $2 rings" "$(count "$1.d" '$1 != "header" && $1 != 0')" 0
}

test_fork_nested() {
	begin fork_nested
	traced "$D" "$T/forker" nested 3 >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	expect_eq "files" "$(nfiles "$D")" 4
	prev=""
	for lvl in 0 1 2 3; do
		pid=$(awk -v l=$lvl '$4 == l { print $2 }' "$D/out")
		f=$D/$pid.events
		[ -f "$f" ] || { fail "no file for level $lvl"; continue; }
		dump "$f" "$f.d"
		n=$(count "$f.d" '$3 == "f.level" && $4 == '$lvl)
		expect_eq "level $lvl events" "$n" $([ $lvl = 3 ] && echo 1 || echo 2)
		[ $lvl = 0 ] || check_child "$f" "$pid"
		if [ -n "$prev" ]; then
			expect_eq "fork_parent of $lvl" \
				"$(count "$prev.d" '$3 == "fork_parent" && $4 == '"$pid")" 1
		fi
		expect_eq "ring_stop of $lvl" "$(count "$f.d" '$3 == "ring_stop"')" 1
		prev=$f
	done
	finish
}

# A child that writes nothing and that its parent reaps gets no file,
# with PRESERVE too: the parent's fork_parent and rte.reap tell it. With
# SIGCHLD ignored (the kernel reaps it unseen) it makes its file at exit
# (ring_start, fork_child, ring_stop). Without PRESERVE no file ever
# appears.
test_fork_quiet() {
	begin fork_quiet
	traced "$D" "$T/forker" quiet 1 >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	pid=$(awk '{ print $2 }' "$D/out")
	expect_eq "files" "$(nfiles "$D")" 1
	expect_eq "reaped" "$(reaped "$D" "$pid")" "status 0"
	dump "$D/$(ls "$D" | grep '\.events$')" "$D/parent.d"
	expect_eq "fork_parent" "$(count "$D/parent.d" '$3 == "fork_parent" && $4 == '"$pid")" 1
	mkdir "$D/ign"
	traced "$D/ign" "$T/forker" quietign 1 >"$D/out" 2>"$D/err"
	expect_eq "exit status, SIGCHLD ignored" $? 0
	pid=$(awk '{ print $2 }' "$D/out")
	[ -f "$D/ign/$pid.events" ] || { fail "no child file with SIGCHLD ignored"; finish; return; }
	check_child "$D/ign/$pid.events" "$pid"
	expect_eq "child stop" "$(count "$D/ign/$pid.events.d" '$3 == "ring_stop"')" 1
	mkdir "$D/np"
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/np" "$T/forker" quiet 1 >/dev/null
	expect_eq "files left without PRESERVE" "$(ls -A "$D/np")" ""
	finish
}

test_fork_threaded() {
	begin fork_threaded
	traced "$D" "$T/forker" threaded 20 >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	expect_eq "files" "$(nfiles "$D")" 21
	parent=""
	for f in "$D"/*.events; do
		pid=$(basename "$f" .events)
		grep -q "^child $pid\$" "$D/out" || parent=$f
	done
	dump "$parent" "$D/parent.d"
	for pid in $(awk '{ print $2 }' "$D/out"); do
		f=$D/$pid.events
		[ -f "$f" ] || { fail "no file for child $pid"; continue; }
		check_child "$f" "$pid"
		expect_eq "child $pid event" "$(count "$f.d" '$3 == "f.child"')" 1
		expect_eq "fork_parent $pid" \
			"$(count "$D/parent.d" '$3 == "fork_parent" && $4 == '"$pid")" 1
	done
	# The parent's other threads kept writing into the parent's file.
	[ "$(count "$D/parent.d" '$3 == "f.spin"')" -gt 0 ] ||
		fail "no f.spin events in the parent"
	finish
}

# ---- children made every way (forkways.c) --------------------------------------

# A child made without atfork handlers (_Fork, a raw fork or clone system
# call) never writes into its parent's file: it is adopted as a fork child
# and gets its own file (doc/DESIGN.md "Never hurting the host").
test_fork_raw() {
	for way in _Fork sysfork clone; do
		raw_begin "fork_raw_$way" $way || continue
		check_child "$f" "$cpid"
		expect_eq "child's event" "$(count "$f.d" '$3 == "w.child"')" 1
		dump_parent "$f"
		expect_eq "child events in the parent's file" \
			"$(count "$D/parent.d" '$3 == "w.child" || $4 == "child" || $3 == "fork_child"')" 0
		expect_eq "parent's event" "$(count "$D/parent.d" '$3 == "w.parent"')" 1
		expect_eq "parent's ring_stop" "$(count "$D/parent.d" '$3 == "ring_stop"')" 1
		finish
	done
}

# A fork child's threads made before its first event get domain_spawn and
# rings of their own; the thread that forked keeps ring 0.
test_fork_child_threads() {
	begin fork_child_threads
	forkways_child threads || { finish; return; }
	check_child_start "$f" "$cpid"
	expect_eq "ring 0's thread" "$(count "$f.d" '$1 == 0 && $3 == "rte.thread.tid" && $4 == '"$cpid")" 1
	expect_eq "forking thread's event on ring 0" "$(count "$f.d" '$1 == 0 && $3 == "w.main"')" 1
	expect_eq "domain_spawn off ring 0" "$(count "$f.d" '$1 != 0 && $3 == "domain_spawn"')" 2
	expect_eq "domain_spawn" "$(count "$f.d" '$3 == "domain_spawn"')" 2
	expect_eq "thread events off ring 0" "$(count "$f.d" '$1 != 0 && $3 == "w.thread"')" 2
	finish
}

# daemon(3): the parent (which leaves by an _exit inside daemon) gets
# fork_parent and ring_stop, and its file is cleaned up without PRESERVE;
# the child's file is next to the parent's (not in /, where it chdirs).
test_daemon() {
	begin daemon
	# $(...) waits for EOF on stdout: the daemon keeps it (noclose).
	out=$(cd "$D" && traced "$D" "$T/forkways" daemon 2>"$D/err")
	expect_eq "stderr" "$(cat "$D/err")" ""
	dpid=$(echo "$out" | awk '$1 == "daemon" { print $2 }')
	expect_eq "daemon's cwd" "$(echo "$out" | awk '{ print $3 }')" "/"
	f=$D/$dpid.events
	[ -f "$f" ] || { fail "no file for daemon $dpid"; finish; return; }
	[ -e "/$dpid.events" ] && fail "daemon's file in /"
	check_child_start "$f" "$dpid"
	expect_eq "daemon's event" "$(count "$f.d" '$3 == "w.daemon"')" 1
	dump_parent "$f"
	expect_eq "fork_parent" "$(count "$D/parent.d" '$3 == "fork_parent" && $4 == '"$dpid")" 1
	expect_eq "parent's ring_stop" "$(count "$D/parent.d" '$3 == "ring_stop"')" 1
	mkdir "$D/np"
	out=$($TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/np" "$T/forkways" daemon)
	expect_eq "files left without PRESERVE" "$(ls -A "$D/np")" ""
	finish
}

# forkpty(3) forks inside libc: the parent still gets fork_parent.
test_forkpty() {
	begin forkpty
	forkways_child pty || { finish; return; }
	check_child "$f" "$cpid"
	expect_eq "child's event" "$(count "$f.d" '$3 == "w.child"')" 1
	dump_parent "$f"
	expect_eq "fork_parent" "$(count "$D/parent.d" '$3 == "fork_parent" && $4 == '"$cpid")" 1
	finish
}

# A fork child killed by SIGKILL before it wrote leaves no file and no
# temporary, with PRESERVE too: its parent's rte.reap tells its end.
test_fork_killed() {
	begin fork_killed
	traced "$D" "$T/forkways" killed >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	cpid=$(awk '$1 == "child" { print $2 }' "$D/out")
	[ -e "$D/$cpid.events" ] && fail "a file for child $cpid"
	expect_eq "reaped" "$(reaped "$D" "$cpid")" "signal SIGKILL"
	expect_eq "temporary files" "$(ls -A "$D" | grep -c '\.tmp$')" 0
	finish
}

# PRESERVE with multiprocessing.Pool(4): the pool's workers, killed by
# SIGTERM at its end, are in the tree with their ends, and leave no
# half-made file.
test_fork_pool() {
	begin fork_pool
	py=$(command -v python3 2>/dev/null) &&
		py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
	if [ -z "$py" ]; then
		skip fork_pool "python3 is not installed"
		return
	fi
	# python's own allocations at exit are not ours to check (ASan runs).
	traced "$D" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		"$py" -c '
import multiprocessing as mp
if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(4) as p:
        print(sum(p.map(abs, range(-100, 100))))
' >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stdout" "$(cat "$D/out")" 10000
	expect_eq "temporary files" "$(ls -A "$D" | grep -c '\.tmp$')" 0
	# each worker: its own file, or (one that never wrote) the pool's
	# fork_parent and rte.reap; in the tree either way
	"$B/rte-read" -f summary-json "$D" >"$D/sum.json" 2>"$D/rerr" ||
		fail "rte-read: $(cat "$D/rerr")"
	n=$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["tree"]
print(sum(1 for e in t if e["parent_pid"] is not None and e["exit"] is not None))' "$D/sum.json")
	[ "$n" -ge 4 ] || fail "workers in the tree with their end: $n, want at least 4"
	finish
}

# fork() in a signal handler that interrupted rte_register() (which holds
# the registry lock) completes, with tracing on and off. SIGKILL on
# timeout: a deadlocked fork has every signal blocked.
test_fork_in_handler() {
	for start in 1 ""; do
		begin "fork_in_handler${start:+_traced}"
		timeout -s KILL 60 env LD_PRELOAD="$PRELOAD" \
			${start:+OCAML_RUNTIME_EVENTS_START=1} \
			OCAML_RUNTIME_EVENTS_DIR="$D" "$T/forkways" sigfork 300 \
			>"$D/out" 2>"$D/err"
		expect_eq "exit status" $? 0
		expect_eq "stdout" "$(cat "$D/out")" "forks 300"
		finish
	done
}

# The shim's initial-exec TLS (in every thread's stack) is a few words: at
# most 64 bytes in PT_TLS, and a thread on a 16 KiB stack has the room it
# has without the shim, traced or not.
test_tls_room() {
	begin tls_room
	if command -v readelf >/dev/null 2>&1; then
		tls=$(readelf -lW "$LIB" | awk '$1 == "TLS" { print $6 }')
		tls=$((${tls:-0} + 0))
		[ "$tls" -le 64 ] ||
			fail "PT_TLS of librte.so: '$tls' bytes, want at most 64"
	else
		echo "  (tls_room: no readelf; only the stack room is checked)"
	fi
	if [ -n "$RTE_ASAN_RT" ]; then
		# ASan's redzones and checks change the stack use being measured.
		echo "  (tls_room: under ASan only PT_TLS is checked)"
		finish
		return
	fi
	room=$(plain "$T/forkways" room | awk '{ print $2 }')
	use=$((room - 512))
	expect_eq "plain" "$(plain "$T/forkways" use $use)" "used $use"
	for start in 1 ""; do
		out=$($TMO env LD_PRELOAD="$PRELOAD" \
			${start:+OCAML_RUNTIME_EVENTS_START=1} \
			OCAML_RUNTIME_EVENTS_DIR="$D" "$T/forkways" use $use 2>&1)
		expect_eq "traced${start:+ and started}" "$out" "used $use"
	done
	finish
}

# ---- exec --------------------------------------------------------------------

# check_exec MODE STEP: the pre-exec image's file is kept as
# <pid>.exec1.events (step STEP, rte.exec, ring_stop last), the new image
# writes <pid>.events (step 3).
check_exec() {
	begin "exec_$1"
	traced "$D" PATH="$T:$PATH" "$T/execer" "$1" >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stdout" "$(cat "$D/out")" "after"
	expect_eq "stderr" "$(cat "$D/err")" ""
	expect_eq "files" "$(nfiles "$D")" 2
	pre=$(ls "$D"/*.exec1.events 2>/dev/null)
	[ -n "$pre" ] || { fail "no <pid>.exec1.events"; finish; return; }
	post=${pre%.exec1.events}.events
	dump "$pre" "$D/pre"
	dump "$post" "$D/post"
	expect_eq "pre step" "$(count "$D/pre" '$3 == "x.step" && $4 == '"$2")" 1
	expect_eq "pre rte.exec" "$(count "$D/pre" '$3 == "rte.exec"')" 1
	expect_eq "pre last" "$(awk '$1 == 0 { l = $3 } END { print l }' "$D/pre")" ring_stop
	expect_eq "post step" "$(count "$D/post" '$3 == "x.step" && $4 == 3')" 1
	expect_eq "post stop" "$(count "$D/post" '$3 == "ring_stop"')" 1
	# Without PRESERVE nothing is left: not the pre-exec file (moved to a
	# hidden name, removed by the new image), not the new image's.
	mkdir "$D/np"
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/np" PATH="$T:$PATH" \
		"$T/execer" "$1" >"$D/out2" 2>"$D/err2"
	expect_eq "stdout without PRESERVE" "$(cat "$D/out2")" "after"
	expect_eq "files left without PRESERVE" "$(ls -A "$D/np")" ""
	finish
}

# vfork and posix_spawn children run no code of ours before their exec:
# the parent's file is untouched (no rte.exec, no fork_parent, one
# ring_stop), the child's new image has its own <childpid>.events.
check_spawn() {
	begin "exec_$1"
	traced "$D" "$T/execer" "$1" >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	expect_eq "files" "$(nfiles "$D")" 2
	child=$(awk '/^child/ { print $2 }' "$D/out")
	dump_parent "$D/$child.events" "$D/p"
	dump "$D/$child.events" "$D/c"
	expect_eq "parent steps" "$(awk '$3 == "x.step" { printf "%s ", $4 }' "$D/p")" "7 8 "
	expect_eq "parent rte.exec" "$(count "$D/p" '$3 == "rte.exec"')" 0
	expect_eq "parent stops" "$(count "$D/p" '$3 == "ring_stop"')" 1
	expect_eq "child step" "$(count "$D/c" '$3 == "x.step" && $4 == 3')" 1
	finish
}

test_exec_fail() {
	begin exec_fail
	plain "$T/execer" fail >"$D/out0" 2>"$D/err0"
	st0=$?
	traced "$D" "$T/execer" fail >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? $st0
	cmp -s "$D/out0" "$D/out" || fail "stdout differs: $(diff "$D/out0" "$D/out")"
	expect_eq "stderr" "$(cat "$D/err")" ""
	expect_eq "files" "$(nfiles "$D")" 1
	f=$(ls "$D"/*.events)
	dump "$f" "$D/d"
	expect_eq "steps" "$(awk '$3 == "x.step" { printf "%s ", $4 }' "$D/d")" "4 5 "
	expect_eq "failed execs" "$(count "$D/d" '$3 == "rte.exec_failed"')" 6
	expect_eq "last" "$(awk '$1 == 0 { l = $3 } END { print l }' "$D/d")" ring_stop
	# Without PRESERVE the file still disappears at exit after the failed
	# execs (it was unlinked and re-linked each time).
	mkdir "$D/np"
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/np" "$T/execer" fail \
		>"$D/out2" 2>"$D/err2"
	cmp -s "$D/out0" "$D/out2" || fail "stdout differs without PRESERVE"
	expect_eq "stderr without PRESERVE" "$(cat "$D/err2")" ""
	expect_eq "files left without PRESERVE" "$(ls "$D/np" | wc -l)" 0
	finish
}

# ---- exit paths and PRESERVE ------------------------------------------------

test_exits() {
	for how in return exit _exit _Exit quick_exit pthread_exit; do
		begin "exit_$how"
		want=7
		[ $how = pthread_exit ] && want=0
		traced "$D" "$T/exits" $how >"$D/out" 2>"$D/err"
		expect_eq "exit status" $? $want
		expect_eq "stderr" "$(cat "$D/err")" ""
		f=$(ls "$D"/*.events 2>/dev/null)
		[ -n "$f" ] || { fail "no file"; finish; continue; }
		dump "$f" "$D/d"
		expect_eq "ring_stop" "$(count "$D/d" '$3 == "ring_stop"')" 1
		expect_eq "mark" "$(count "$D/d" '$3 == "e.mark" && $4 == 1')" 1
		if [ $how = pthread_exit ]; then
			expect_eq "last thread's mark" \
				"$(count "$D/d" '$3 == "e.mark" && $4 == 2')" 1
		fi
		# Without PRESERVE the file is removed on the same path.
		mkdir "$D/np"
		$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
			OCAML_RUNTIME_EVENTS_DIR="$D/np" "$T/exits" $how \
			>/dev/null 2>&1
		expect_eq "files left without PRESERVE" "$(ls -A "$D/np" | wc -l)" 0
		finish
	done
}

test_preserve() {
	begin preserve
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D" "$T/probe" >"$D/o" 2>"$D/e"
	expect_eq "exit status" $? 3
	expect_eq "files without PRESERVE" "$(ls -A "$D" | grep -vc '^[oe]$')" 0
	mkdir "$D/p"
	traced "$D/p" "$T/probe" >/dev/null 2>&1
	expect_eq "files with PRESERVE (parent, child)" "$(nfiles "$D/p")" 2
	for f in "$D"/p/*.events; do
		[ "$(stat -c %a "$f")" = 600 ] || fail "$f mode $(stat -c %a "$f")"
	done
	finish
}

test_no_start() {
	begin no_start
	plain "$T/probe" >"$D/out0" 2>"$D/err0"
	st0=$?
	(cd "$D" && $TMO env LD_PRELOAD="$PRELOAD" "$T/probe" >"$D/out" 2>"$D/err")
	expect_eq "exit status" $? $st0
	cmp -s "$D/out0" "$D/out" || fail "stdout differs"
	expect_eq "stderr" "$(cat "$D/err")" ""
	expect_eq "files" "$(nfiles "$D")" 0
	finish
}

# ---- never hurt the host ---------------------------------------------------------

# same_as_plain NAME DIR [env...]: probe behaves exactly as without the shim
# while tracing into DIR fails; stderr has exactly LINES "rte: " lines and
# nothing else; no *.events file appears in DIR.
same_as_plain() {
	_lines=$1
	_dir=$2
	shift 2
	plain "$T/probe" >"$D/out0" 2>"$D/err0"
	st0=$?
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$_dir" "$@" "$T/probe" \
		>"$D/out" 2>"$D/err"
	expect_eq "exit status" $? $st0
	cmp -s "$D/out0" "$D/out" || fail "stdout differs: $(diff "$D/out0" "$D/out")"
	expect_eq "rte: lines in '$(cat "$D/err")'" "$(rte_lines "$D/err")" "$_lines"
	expect_eq "other stderr" "$(grep -v '^rte: ' "$D/err")" "$(cat "$D/err0")"
}

test_unwritable() {
	begin unwritable
	if mount_tmpfs "$D/ro" ro,size=64k; then
		same_as_plain 1 "$D/ro"
		grep -q 'Read-only file system' "$D/err" || fail "reason: $(cat "$D/err")"
	else
		mkdir "$D/ro" && chmod 555 "$D/ro"
		same_as_plain 1 "$D/ro"
	fi
	# A "directory" that is a regular file: fails for root as well.
	: >"$D/file"
	same_as_plain 1 "$D/file/sub"
	same_as_plain 1 "$D/missing/dir"
	# A directory name longer than PATH_MAX.
	long=$(printf '%05000d' 0)
	same_as_plain 1 "$D/$long"
	grep -q 'File name too long' "$D/err" || fail "reason: $(cat "$D/err")"
	finish
}

# Publishing never replaces a name already there: with renameat2's
# RENAME_NOREPLACE, and with link() where renameat2 fails (an old kernel
# or a file system without it: a seccomp filter makes it ENOSYS here).
test_symlink() {
	begin symlink
	plain "$T/probe" >"$D/out0" 2>/dev/null
	st0=$?
	for how in rename link; do
		d=$D/$how
		mkdir "$d"
		w=
		[ $how = link ] && w="$T/oldkernel -d renameat2"
		# The shell plants the link at its own pid's name, then execs
		# the probe (same pid) under the shim.
		env D="$d" T="$T" W="$w" sh -c '
			ln -s "$D/victim" "$D/$$.events"
			exec $W env LD_PRELOAD="'"$PRELOAD"'" OCAML_RUNTIME_EVENTS_START=1 \
				OCAML_RUNTIME_EVENTS_DIR="$D" "$T/probe"' \
			>"$d/out" 2>"$d/err"
		expect_eq "exit status ($how)" $? $st0
		cmp -s "$D/out0" "$d/out" || fail "stdout differs ($how)"
		expect_eq "rte: lines ($how)" "$(rte_lines "$d/err")" 1
		grep -q 'already exists' "$d/err" || fail "reason ($how): $(cat "$d/err")"
		[ -e "$d/victim" ] && fail "the symlink was followed ($how)"
		l=$(ls "$d"/*.events)
		[ -L "$l" ] || fail "the symlink was replaced ($how)"
		expect_eq "temporary files left ($how)" "$(ls -A "$d" | grep -c '\.tmp$')" 0
		# A regular file already there is left untouched.
		echo precious >"$d/keep"
		env D="$d" T="$T" W="$w" sh -c '
			cp "$D/keep" "$D/$$.events"
			exec $W env LD_PRELOAD="'"$PRELOAD"'" OCAML_RUNTIME_EVENTS_START=1 \
				OCAML_RUNTIME_EVENTS_DIR="$D" "$T/probe"' \
			>"$d/out2" 2>"$d/err2"
		cmp -s "$D/out0" "$d/out2" || fail "stdout differs (regular file, $how)"
		for f in "$d"/*.events; do
			[ -L "$f" ] || expect_eq "file kept ($how)" "$(cat "$f")" precious
		done
		# A free name: published, read back, no temporary name left.
		rm -f "$d"/*.events
		$w env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
			OCAML_RUNTIME_EVENTS_PRESERVE=1 OCAML_RUNTIME_EVENTS_DIR="$d" \
			"$T/probe" >/dev/null 2>"$d/err3"
		expect_eq "stderr of a free name ($how)" "$(cat "$d/err3")" ""
		n=0
		for f in "$d"/*.events; do
			[ -f "$f" ] && [ ! -L "$f" ] || continue
			n=$((n + 1))
			"$B/rte-read" --format=jsonl "$f" >/dev/null ||
				fail "read back ($how): $f"
		done
		[ $n -ge 1 ] || fail "published ($how): $(ls -A "$d")"
		expect_eq "temporary files left, free name ($how)" \
			"$(ls -A "$d" | grep -c '\.tmp$')" 0
	done
	finish
}

test_full_disk() {
	if ! mount_tmpfs "$WORK/full" size=16k; then
		skip full_disk "not root or cannot mount tmpfs: a full disk needs a small tmpfs"
		return
	fi
	begin full_disk
	# The file's headers and ring 0's first 16 KiB (28 KiB) do not fit:
	# they are reserved before the file is published, so no file is
	# made, one line says why, and the fork child inherits disabled
	# tracing and stays quiet. No SIGBUS, the program runs as without
	# the shim.
	same_as_plain 1 "$WORK/full"
	grep -q 'No space left' "$D/err" || fail "reason: $(cat "$D/err")"
	expect_eq "files left" "$(ls -A "$WORK/full" | wc -l)" 0
	# Room for the headers, ring 0's first part and a page of names
	# but not for a second ring: the parent's file is made, its
	# threads' rings cannot be reserved (their events are dropped and
	# counted, one line); the fork child has no room for its own file
	# (one line). (footprint.sh's test_full: a ring that cannot grow.)
	mount_tmpfs "$WORK/half" size=40k || fail "mount"
	same_as_plain 2 "$WORK/half" OCAML_RUNTIME_EVENTS_PRESERVE=1
	expect_eq "files" "$(ls "$WORK/half" | grep -c '\.events$')" 1
	# A tmpfs too small for the file itself.
	mount_tmpfs "$WORK/tiny" size=8k || fail "mount"
	same_as_plain 1 "$WORK/tiny"
	expect_eq "temporary files left" "$(ls -A "$WORK/tiny" | wc -l)" 0
	finish
}

# ---- never hurt the host: descriptors, stderr, directory --------------------------

# untraced VAR=value... CMD...: run CMD under the shim without PRESERVE.
untraced_run() {
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 "$@"
}

# A program started with fd 0, 1 or 2 closed: no descriptor of ours takes
# the free number (cat would read the ring file, echo write over its
# header, ls write its error into it). Same output and status as without
# the shim, and every ring file left is whole.
test_closed_std() {
	begin closed_std
	i=0
	for c in 'cat <&-' '/bin/echo hi >&-' 'ls /nonexistent 2>&-'; do
		i=$((i + 1))
		mkdir "$D/$i"
		eval "plain $c" >"$D/$i.out0" 2>"$D/$i.err0"
		st0=$?
		eval "traced \"\$D/\$i\" $c" >"$D/$i.out" 2>"$D/$i.err"
		expect_eq "$c: exit status" $? $st0
		cmp -s "$D/$i.out0" "$D/$i.out" ||
			fail "$c: stdout differs ($(wc -c <"$D/$i.out") bytes)"
		cmp -s "$D/$i.err0" "$D/$i.err" ||
			fail "$c: stderr differs: $(head -c 300 "$D/$i.err")"
		[ "$(nfiles "$D/$i")" -ge 1 ] || fail "$c: no ring file"
		for f in "$D/$i"/*.events; do
			dump "$f" "$f.d"
			expect_eq "$c: ring_stop in $f" \
				"$(count "$f.d" '$3 == "ring_stop"')" 1
		done
	done
	finish
}

# A program that closed fd 2 and opened a data file (which got fd 2) never
# finds our warnings in it; RTE_LOG sends them elsewhere.
test_log() {
	begin log
	traced "$D" RTE_RINGS=2 "$T/threads" 30 10 reuse2 "$D/data" \
		>"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "rte: lines in the data file" "$(grep -c 'rte:' "$D/data")" 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	traced "$D" RTE_LOG="$D/log" RTE_RINGS=2 "$T/threads" 30 10 reuse2 \
		"$D/data2" >/dev/null 2>"$D/err2"
	expect_eq "RTE_LOG=PATH: data file" "$(grep -c 'rte:' "$D/data2")" 0
	expect_eq "RTE_LOG=PATH: stderr" "$(cat "$D/err2")" ""
	expect_eq "RTE_LOG=PATH: lines" "$(grep -c '^rte: all 2 rings of ' "$D/log")" 1
	expect_eq "RTE_LOG=PATH: mode" "$(stat -c %a "$D/log")" 600
	traced "$D" RTE_LOG=none RTE_RINGS=2 "$T/threads" 30 10 \
		>/dev/null 2>"$D/err3"
	expect_eq "RTE_LOG=none: stderr" "$(cat "$D/err3")" ""
	traced "$D" RTE_LOG=stderr RTE_RINGS=2 "$T/threads" 30 10 \
		>/dev/null 2>"$D/err4"
	expect_eq "RTE_LOG=stderr: lines" "$(rte_lines "$D/err4")" 1
	# A relative PATH is the working directory's at start, then appended.
	mkdir "$D/rel"
	(cd "$D/rel" && traced "$D" RTE_LOG=rel.log RTE_RINGS=2 \
		"$T/forker" chdir / >/dev/null 2>"$D/err5")
	(cd "$D/rel" && traced "$D" RTE_LOG=rel.log RTE_RINGS=2 \
		"$T/threads" 30 10 >/dev/null 2>>"$D/err5")
	expect_eq "RTE_LOG=relative: stderr" "$(cat "$D/err5")" ""
	expect_eq "RTE_LOG=relative: lines" "$(rte_lines "$D/rel/rel.log")" 1
	finish
}

# default_root (tests/rundir.sh)
. "$(dirname "$0")/../rundir.sh"

# The default directory without XDG_RUNTIME_DIR, <root>/rte-<uid>, for a
# user of its own (root only: setpriv): made mode 0700 and owned by that
# user; taken over by another user (root), or opened to others, it is
# refused with one line, and the program runs as without the shim.
test_default_root() {
	begin default_root
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
		skip default_root "needs root and setpriv (a user of its own)"
		return
	fi
	u=$((60000 + $$ % 5000))
	dir=$(default_root)/rte-$u
	rm -rf "$dir"
	# That user must reach the probe and the shim: a build under a
	# private directory (a clone in `mktemp -d`, mode 0700) is out of its
	# reach, so both are copied to a directory of their own, open to it.
	pub=$(mktemp -d /tmp/rte-default-root.XXXXXX) || fail "mktemp"
	chmod 755 "$pub" && mkdir -m 777 "$pub/u" &&
		cp "$T/probe" "$LIB" "$pub/" || fail "copy the probe to $pub"
	p_probe=$pub/probe
	p_preload="${RTE_ASAN_RT:+$RTE_ASAN_RT }$pub/librte.so"
	as_u() {
		(cd "$pub/u" && $TMO setpriv --reuid=$u --regid=$u --clear-groups \
			env -u OCAML_RUNTIME_EVENTS_DIR -u XDG_RUNTIME_DIR \
			LD_PRELOAD="$p_preload" OCAML_RUNTIME_EVENTS_START=1 "$@")
	}
	plain "$T/probe" >"$D/out0" 2>/dev/null
	st0=$?
	as_u OCAML_RUNTIME_EVENTS_PRESERVE=1 "$p_probe" >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? $st0
	expect_eq "stderr" "$(cat "$D/err")" ""
	expect_eq "owner and mode of $dir" "$(stat -c '%u %a' "$dir")" "$u 700"
	# The probe and its fork child, each its file (PRESERVE).
	expect_eq "files in $dir" "$(nfiles "$dir")" 2
	expect_eq "files in the working directory" "$(nfiles "$pub/u")" 0
	for how in owner open; do
		rm -rf "$dir"
		mkdir -m 700 "$dir"
		if [ $how = owner ]; then
			chown "$u" "$pub/u" # anything: the directory stays root's
		else
			chown "$u" "$dir" && chmod 777 "$dir"
		fi
		as_u "$p_probe" >"$D/out" 2>"$D/err"
		expect_eq "$how: exit status" $? $st0
		expect_eq "$how: rte: lines" "$(rte_lines "$D/err")" 1
		grep -q "default directory $dir" "$D/err" ||
			fail "$how: $(cat "$D/err")"
		expect_eq "$how: files" "$(nfiles "$dir")" 0
	done
	rm -rf "$dir" "$pub"
	finish
}

# Without OCAML_RUNTIME_EVENTS_DIR the file goes to a private per-user
# directory, never the working directory; "." keeps OCaml's behaviour.
test_default_dir() {
	begin default_dir
	mkdir -m 700 "$D/xdg" "$D/empty"
	(cd "$D/empty" && $TMO env -u OCAML_RUNTIME_EVENTS_DIR \
		LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_PRESERVE=1 XDG_RUNTIME_DIR="$D/xdg" \
		ls -A >"$D/ls.out" 2>"$D/ls.err")
	expect_eq "ls in an empty directory" "$(cat "$D/ls.out")" ""
	expect_eq "stderr" "$(cat "$D/ls.err")" ""
	expect_eq "files in \$XDG_RUNTIME_DIR/rte" "$(nfiles "$D/xdg/rte")" 1
	expect_eq "mode of \$XDG_RUNTIME_DIR/rte" "$(stat -c %a "$D/xdg/rte")" 700
	# Not ours: a symlink, or writable by others: refused, one line.
	mkdir "$D/elsewhere"
	for how in symlink open; do
		rm -rf "$D/xdg/rte"
		if [ $how = symlink ]; then
			ln -s "$D/elsewhere" "$D/xdg/rte"
		else
			mkdir -m 777 "$D/xdg/rte" && chmod 777 "$D/xdg/rte"
		fi
		plain "$T/probe" >"$D/out0" 2>/dev/null
		st0=$?
		$TMO env -u OCAML_RUNTIME_EVENTS_DIR LD_PRELOAD="$PRELOAD" \
			OCAML_RUNTIME_EVENTS_START=1 XDG_RUNTIME_DIR="$D/xdg" \
			"$T/probe" >"$D/out" 2>"$D/err"
		expect_eq "$how: exit status" $? $st0
		expect_eq "$how: rte: lines" "$(rte_lines "$D/err")" 1
		grep -q 'default directory' "$D/err" || fail "$how: $(cat "$D/err")"
		expect_eq "$how: files" "$(ls -A "$D/elsewhere" "$D/xdg/rte" | grep -c events)" 0
	done
	rm -rf "$D/xdg/rte"
	(cd "$D/empty" && traced . ls -A >"$D/ls2.out" 2>/dev/null)
	expect_eq "OCAML_RUNTIME_EVENTS_DIR=. lists its file" \
		"$(grep -c '\.events$' "$D/ls2.out")" 1
	finish
}

# The directory is resolved once: a relative OCAML_RUNTIME_EVENTS_DIR and a
# later chdir("/") (a daemon) change nothing for the fork children, nor for
# the image an exec after a cd starts.
test_chdir() {
	begin chdir
	mkdir "$D/tr"
	(cd "$D" && traced tr "$T/forker" chdir / >"$D/out" 2>"$D/err")
	expect_eq "exit status" $? 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	child=$(awk '{ print $2 }' "$D/out")
	expect_eq "files" "$(nfiles "$D/tr")" 2
	[ -f "$D/tr/$child.events" ] || { fail "no child file"; finish; return; }
	dump "$D/tr/$child.events" "$D/c"
	expect_eq "child event" "$(count "$D/c" '$3 == "f.child"')" 1
	[ -e "/$child.events" ] && { rm -f "/$child.events"; fail "file in /"; }
	mkdir "$D/sub" "$D/tr2"
	(cd "$D" && traced tr2 sh -c 'cd sub && exec "$1" after' sh \
		"$T/execer" >"$D/out2" 2>"$D/err2")
	expect_eq "exec after cd: exit status" $? 0
	expect_eq "exec after cd: stdout" "$(cat "$D/out2")" after
	expect_eq "exec after cd: stderr" "$(cat "$D/err2")" ""
	pre=$(ls "$D"/tr2/*.exec1.events 2>/dev/null)
	[ -n "$pre" ] || { fail "no <pid>.exec1.events"; finish; return; }
	dump "${pre%.exec1.events}.events" "$D/post"
	expect_eq "new image's step" "$(count "$D/post" '$3 == "x.step" && $4 == 3')" 1
	expect_eq "files in sub" "$(ls -A "$D/sub")" ""
	finish
}

# exec into an image that is not traced (env -i, a static binary): without
# PRESERVE nothing is left behind; a failed exec still gets its file back,
# whole, and goes on writing into it.
test_exec_untraced() {
	begin exec_untraced
	mkdir "$D/a" "$D/b" "$D/c"
	untraced_run OCAML_RUNTIME_EVENTS_DIR="$D/a" env -i /bin/true
	expect_eq "env -i: exit status" $? 0
	expect_eq "env -i: files left" "$(ls -A "$D/a")" ""
	untraced_run OCAML_RUNTIME_EVENTS_DIR="$D/b" env /sbin/ldconfig -p >/dev/null
	expect_eq "static: exit status" $? 0
	expect_eq "static: files left" "$(ls -A "$D/b")" ""
	plain "$T/execer" fail >"$D/out0" 2>/dev/null
	untraced_run OCAML_RUNTIME_EVENTS_DIR="$D/c" "$T/execer" fail keep \
		>"$D/out" 2>"$D/err"
	expect_eq "failed exec: exit status" $? 0
	cmp -s "$D/out0" "$D/out" || fail "stdout differs: $(diff "$D/out0" "$D/out")"
	expect_eq "failed exec: stderr" "$(cat "$D/err")" ""
	expect_eq "failed exec: files left" "$(ls -A "$D/c" | grep -vc '\.kept$')" 0
	f=$(ls "$D"/c/*.kept 2>/dev/null)
	[ -n "$f" ] || { fail "no kept file"; finish; return; }
	dump "$f" "$D/d"
	expect_eq "steps" "$(awk '$3 == "x.step" { printf "%s ", $4 }' "$D/d")" "4 5 "
	expect_eq "failed execs" "$(count "$D/d" '$3 == "rte.exec_failed"')" 6
	expect_eq "last" "$(awk '$1 == 0 { l = $3 } END { print l }' "$D/d")" ring_stop
	finish
}

# With PRESERVE, a fork child that never wrote and execs an image that
# traces itself into the same directory makes no file before the exec:
# its parent's fork_parent names it, the new image's rte.proc gives its
# argv and parent. One that execs an image we would not trace (a static
# binary, another directory) keeps its <pid>.exec1.events naming the
# image, and one whose exec fails gets its file then, with the failure.
test_exec_fileless() {
	begin exec_fileless
	mkdir "$D/tr" "$D/other"
	printf '#!/bin/sh\nexit 0\n' >"$D/script"
	chmod +x "$D/script"
	cp /bin/true "$D/noexec"
	chmod 644 "$D/noexec"
	# bash's and Python's own leaks at exit are not ours (ASan runs)
	nl="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	traced "$D/tr" "$nl" bash -c '
		echo "bash $$"
		/bin/true & p=$!; wait $p; echo "dyn $p"
		"$1" & p=$!; wait $p; echo "script $p"
		/sbin/ldconfig -p >/dev/null & p=$!; wait $p; echo "static $p"
		"$2" 2>/dev/null & p=$!; wait $p; echo "noexec $p $?"
		OCAML_RUNTIME_EVENTS_DIR="$3" /bin/true & p=$!; wait $p; echo "other $p"
	' bash "$D/script" "$D/noexec" "$D/other" >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	pid_of() { awk -v k="$1" '$1 == k { print $2 }' "$D/out"; }
	bash=$(pid_of bash)
	for k in dyn script static noexec other; do eval "$k=\$(pid_of $k)"; done
	expect_eq "noexec status" "$(awk '$1 == "noexec" { print $3 }' "$D/out")" 126
	# what rte-read says of each pid's files: "file: event ..." lines
	"$B/rte-read" -f jsonl "$D/tr" "$D/other" 2>"$D/rd.err" | python3 -c '
import json, os, sys
for line in sys.stdin:
    e = json.loads(line)
    n = e.get("event") or e.get("name")
    v = ""
    if n == "rte.proc":
        v = "%d %s" % (e["proc"]["ppid"], " ".join(e["proc"]["argv"]))
    elif n == "rte.exec":
        v = bytes.fromhex(e["hex"]).decode()
    elif n in ("rte.exec_failed",):
        v = str(e["value"])
    elif n == "fork_parent":
        v = str(e["data"])
    else:
        continue
    print(e["pid"], n, v)
' >"$D/ev"
	expect_eq "rte-read" "$(cat "$D/rd.err")" ""
	has() { grep -qxF "$1" "$D/ev" || fail "no '$1' in: $(tr '\n' ';' <"$D/ev")"; }
	for p in "$dyn" "$script" "$static" "$noexec" "$other"; do
		has "$bash fork_parent $p"
	done
	# an image that traces itself: no file before its exec
	expect_eq "dyn: files" "$(cd "$D/tr" && ls "$dyn".*)" "$dyn.events"
	has "$dyn rte.proc $bash /bin/true"
	expect_eq "script: files" "$(cd "$D/tr" && ls "$script".*)" "$script.events"
	has "$script rte.proc $bash /bin/sh $D/script"
	# a static image: the child's file names it
	expect_eq "static: files" "$(cd "$D/tr" && ls "$static".*)" "$static.exec1.events"
	has "$static rte.exec /sbin/ldconfig"
	# a failed exec: the child's file, with the exec and its errno
	expect_eq "noexec: files" "$(cd "$D/tr" && ls "$noexec".*)" "$noexec.events"
	has "$noexec rte.exec $D/noexec"
	has "$noexec rte.exec_failed 13"
	# another directory: the child's file here, the new image's there
	expect_eq "other: files" "$(cd "$D/tr" && ls "$other".*)" "$other.exec1.events"
	has "$other rte.exec /bin/true"
	expect_eq "other: its image's file" "$(ls "$D/other")" "$other.events"
	# a child whose effective group is not its real one: the kernel
	# starts any image in secure mode (LD_PRELOAD ignored), so its file
	# names the image
	if [ "$(id -u)" = 0 ]; then
		mkdir "$D/sec"
		traced "$D/sec" "$nl" python3 -c '
import os
p = os.fork()
if p == 0:
    os.setresgid(0, 65534, 0)
    os.execv("/bin/true", ["/bin/true"])
os.waitpid(p, 0)
print(p)' >"$D/out3" 2>"$D/err3"
		p=$(cat "$D/out3")
		expect_eq "secure: stderr" "$(cat "$D/err3")" ""
		expect_eq "secure: files" "$(cd "$D/sec" && ls "$p".* 2>&1)" "$p.exec1.events"
	fi
	finish
}

# ---- configuration, OCaml, API, signals ---------------------------------------------

test_config() {
	begin config
	mkdir -p "$D/a"
	traced "$D/a" OCAMLRUNPARAM=b,e=10,v=0 RTE_RINGS=7 "$T/exits" return \
		>/dev/null 2>"$D/err"
	dump "$(ls "$D"/a/*.events)" "$D/a.d"
	grep -q '^header .* rings=7 words=1024$' "$D/a.d" || fail "e=10/RTE_RINGS=7: $(head -1 "$D/a.d")"
	expect_eq "stderr" "$(cat "$D/err")" ""
	mkdir -p "$D/b"
	traced "$D/b" OCAMLRUNPARAM=e=banana RTE_RINGS=0 RTE_CLOCK=sundial \
		"$T/exits" return >/dev/null 2>"$D/err"
	expect_eq "exit status" $? 7
	dump "$(ls "$D"/b/*.events)" "$D/b.d"
	grep -q '^header .* rings=128 words=65536$' "$D/b.d" || fail "defaults: $(head -1 "$D/b.d")"
	expect_eq "warnings" "$(rte_lines "$D/err")" 3
	finish
}

test_ocaml() {
	begin ocaml
	traced "$D" "$T/fakeocaml" >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stdout" "$(cat "$D/out")" "ocaml-like"
	expect_eq "rte: lines" "$(rte_lines "$D/err")" 1
	grep -q 'OCaml 5' "$D/err" || fail "reason: $(cat "$D/err")"
	expect_eq "files" "$(nfiles "$D")" 0
	traced "$D" RTE_TRACE_OCAML=1 "$T/fakeocaml" >/dev/null 2>"$D/err"
	expect_eq "files with RTE_TRACE_OCAML" "$(nfiles "$D")" 1
	rm -f "$D"/*.events
	# The symbol only in a dynamic symbol table: of a stripped executable
	# linked with -rdynamic, or of a shared runtime it loads.
	for v in fakeocaml-dyn fakeocaml-lib; do
		traced "$D" "$T/$v" >"$D/out" 2>"$D/err"
		expect_eq "$v: exit status" $? 0
		expect_eq "$v: stdout" "$(cat "$D/out")" "ocaml-like"
		grep -q 'OCaml 5' "$D/err" || fail "$v: reason: $(cat "$D/err")"
		expect_eq "$v: files" "$(nfiles "$D")" 0
	done
	finish
}

# The API starts tracing without OCAML_RUNTIME_EVENTS_DIR: the per-user
# default directory, $XDG_RUNTIME_DIR/rte or <root>/rte-<uid>.
test_api() {
	begin api
	mkdir -m 700 "$D/xdg"
	(cd "$D" && $TMO env -u OCAML_RUNTIME_EVENTS_DIR \
		XDG_RUNTIME_DIR="$D/xdg" "$T/api" >"$D/out" 2>"$D/err")
	expect_eq "exit status" $? 0
	grep -q "^ok $D/xdg/rte/[0-9]*\.events\$" "$D/out" || fail "$(cat "$D/out")"
	expect_eq "files left" "$(nfiles "$D")" 0
	expect_eq "files left in the default directory" "$(nfiles "$D/xdg/rte")" 0
	$TMO env -u OCAML_RUNTIME_EVENTS_DIR -u XDG_RUNTIME_DIR "$T/api" \
		>"$D/out2" 2>"$D/err2"
	grep -q "^ok $(default_root)/rte-$(id -u)/[0-9]*\.events\$" "$D/out2" ||
		fail "without XDG_RUNTIME_DIR: $(cat "$D/out2" "$D/err2")"
	$TMO "$T/api" many >"$D/out" 2>&1 || fail "many: $(cat "$D/out")"
	finish
}

test_signals() {
	begin signals
	traced "$D" OCAMLRUNPARAM=e=22 "$T/sigwriter" >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stdout" "$(cat "$D/out")" "done"
	f=$(ls "$D"/*.events)
	dump "$f" "$D/d"
	[ "$(count "$D/d" '$3 == "s.sig"')" -gt 0 ] || fail "no signal events"
	finish
}

echo "shim tests (preload: $PRELOAD)"
# With arguments, run only the named test functions (make check-loop-shim).
if [ $# -gt 0 ]; then
	for t in "$@"; do "$t"; done
	h_report "shim tests"
	exit
fi
test_threads
test_closed_fds
test_rings_full
test_fork_nested
test_fork_quiet
test_fork_threaded
test_fork_raw
test_fork_child_threads
test_daemon
test_forkpty
test_fork_killed
test_fork_pool
test_fork_in_handler
test_tls_room
check_exec execve 1
check_exec execvp 2
check_exec execl 6
check_exec execlp 9
check_exec execle 10
check_spawn vfork
check_spawn spawn
test_exec_fail
test_exits
test_preserve
test_no_start
test_unwritable
test_symlink
test_full_disk
test_closed_std
test_log
test_default_dir
test_default_root
test_chdir
test_exec_untraced
test_exec_fileless
test_config
test_ocaml
test_api
test_signals
h_report "shim tests"
