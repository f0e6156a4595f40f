#!/bin/sh
# host.sh - the shim never hurts its host, part 2 (issue 22): descriptors,
# identity changes and SIGKILLed processes, with real programs (C and
# /usr/bin/python3) under the real LD_PRELOAD shim, compared with the same
# program run plain. doc/DESIGN.md "Never hurting the host" names these
# tests. One test: RTE_BUILD=$PWD/build sh tests/shim/host.sh test_NAME.
set -u

TMO="timeout 300"
PY=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
chmod 755 "$WORK" # test_setuid's child (nobody) must reach its directory

# run DIR [VAR=value...] CMD...: CMD traced into DIR, not preserved.
run() {
	_d=$1
	shift
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$_d" "$@"
}

# The descriptors a program sees (/proc/self/fd, and what open() returns
# after a pthread_create) are those it has without the shim, in every
# mode that loads libunwind.
test_fds() {
	begin fds
	plain=$($TMO "$T/hostfd" list)
	for mode in "" RTE_PROFILE=997 RTE_ALLOC=1 RTE_BACKTRACE=thread; do
		got=$(run "$D" $mode "$T/hostfd" list)
		expect_eq "descriptors with '$mode'" "$got" "$plain"
	done
	# The wall-clock sampler's /proc descriptors are in a table of its
	# own: not in the program's /proc/self/fd.
	got=$(run "$D" RTE_PROFILE=997 RTE_PROFILE_MODE=wall "$T/hostfd" list)
	expect_eq "descriptors with RTE_PROFILE_MODE=wall" "$got" "$plain"
	# The same where close_range() fails (a kernel before 5.9): the
	# sampler's table is a copy, emptied at once.
	got=$(run "$D" RTE_PROFILE=997 RTE_PROFILE_MODE=wall "$T/oldkernel" \
		"$T/hostfd" list)
	expect_eq "descriptors with RTE_PROFILE_MODE=wall, no close_range" \
		"$got" "$plain"
	ls "$D"/*.events >/dev/null 2>&1 && fail "files left: $(ls "$D")"
	finish
}

# CPython's own test of pass_fds (it lists /proc/self/fd), and the
# descriptors a Python process sees, traced as plain.
test_fds_python() {
	begin fds_python
	[ -x "$PY" ] || { skip fds_python "no $PY"; return; }
	if ! $PY -c 'import test.test_subprocess' 2>/dev/null; then
		skip fds_python "no CPython test suite"
		return
	fi
	modes='"" RTE_PROFILE=997 RTE_ALLOC=1'
	# Under ASan its allocator comes first: RTE_ALLOC stands aside aloud.
	[ -n "${RTE_ASAN_RT:-}" ] && modes='"" RTE_PROFILE=997'
	eval "set -- $modes"
	for mode in "$@"; do
		run "$D" $mode ${RTE_ASAN_RT:+ASAN_OPTIONS=detect_leaks=0} $PY -m test -j1 test_subprocess \
			-m test_pass_fds_redirected >"$D/out" 2>&1 ||
			fail "test_pass_fds_redirected with '$mode': $(tail -5 "$D/out")"
	done
	code='import os, threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
print(sorted(os.listdir("/proc/self/fd")), os.open("/dev/null", 0))'
	plain=$($TMO $PY -c "$code")
	got=$(run "$D" RTE_PROFILE=997 ${RTE_ASAN_RT:+ASAN_OPTIONS=detect_leaks=0} $PY -c "$code")
	expect_eq "python descriptors" "$got" "$plain"
	finish
}

# A daemon-style program closes every descriptor and reuses the numbers
# while the profiler samples code without unwind information (CPU and
# wall mode): its pipe and its log are its own.
test_daemon_fds() {
	begin daemon_fds
	modes="RTE_PROFILE=997 RTE_ALLOC=1"
	# Under ASan its allocator comes first: RTE_ALLOC stands aside aloud.
	[ -n "${RTE_ASAN_RT:-}" ] && modes=RTE_PROFILE=997
	for mode in $modes; do
		out=$(run "$D" $mode "$T/hostfd" daemon 2>&1)
		expect_eq "daemon with $mode" "$out" "pipe hello log ok"
	done
	# wall mode: the sampler's /proc descriptors are closed and their
	# numbers reused by the program: never read or closed by us
	out=$(run "$D" RTE_PROFILE=997 RTE_PROFILE_MODE=wall "$T/hostfd" daemon 2>&1)
	expect_eq "daemon with RTE_PROFILE_MODE=wall" "$out" "pipe hello log ok"
	# The same race a thousand times over: the sampler opens a new
	# thread's /proc file while the program closes every descriptor and
	# makes a pipe (before the sampler had a table of its own, its open
	# took the number and its move above RTE_FD_MIN closed the pipe: one
	# run in three failed here, as CI's daemon test did once).
	out=$(run "$D" RTE_PROFILE=997 RTE_PROFILE_MODE=wall "$T/hostfd" churn 1000 2>&1)
	expect_eq "churn with RTE_PROFILE_MODE=wall" "$out" "churn ok"
	out=$(run "$D" RTE_PROFILE=997 RTE_PROFILE_MODE=wall "$T/oldkernel" \
		"$T/hostfd" churn 1000 2>&1)
	expect_eq "churn with RTE_PROFILE_MODE=wall, no close_range" "$out" "churn ok"
	finish
}

# A child that switches user (setuid(nobody) then exec, as a root daemon
# that drops privileges; Python's subprocess.run(user='nobody')) cannot
# make its file in root's directory: it stands aside without a word on
# its stderr, with the program's own output and status; RTE_LOG's file
# records the miss.
test_setuid() {
	begin setuid
	is_root || { skip setuid "needs root to switch user"; return; }
	nobody=$(id -u nobody 2>/dev/null) || { skip setuid "no user nobody"; return; }
	chmod 755 "$D"
	# The child, as nobody, loads the shim and writes in $D: a build under
	# a private directory (a clone in `mktemp -d`) is out of its reach
	# (ld.so then says so on stderr: doc/USAGE.md, Install).
	if command -v setpriv >/dev/null &&
	   ! setpriv --reuid="$nobody" --regid="$nobody" --clear-groups \
		sh -c 'test -r "$1" && test -x "$2"' sh "$LIB" "$D"; then
		skip setuid "nobody cannot reach $LIB or $D (the build is under a private directory)"
		return
	fi
	modes='"" RTE_PROFILE=997 RTE_ALLOC=1'
	# Under ASan its allocator comes first: RTE_ALLOC stands aside aloud.
	[ -n "${RTE_ASAN_RT:-}" ] && modes='"" RTE_PROFILE=997'
	eval "set -- $modes"
	for mode in "$@"; do
		rm -f "$D"/*.events
		: >"$D/log" && chmod 666 "$D/log" # nobody appends to it
		run "$D" $mode RTE_LOG="$D/log" "$T/hostfd" setuid "$nobody" \
			/bin/echo hi >"$D/out" 2>"$D/err"
		expect_eq "status with '$mode'" $? 0
		expect_eq "stdout with '$mode'" "$(cat "$D/out")" hi
		run "$D" $mode "$T/hostfd" setuid "$nobody" /bin/echo hi \
			>"$D/out" 2>"$D/err"
		expect_eq "stderr with '$mode'" "$(cat "$D/err")" ""
		grep -q 'Permission denied\|may not use' "$D/log" 2>/dev/null ||
			fail "RTE_LOG has no record of the miss with '$mode'"
		# The profilers make the child's file at once, as root: it
		# must be gone before the child can no longer remove it.
		expect_eq "files left with '$mode'" \
			"$(ls "$D" | grep events)" ""
	done
	rm -f "$D"/*.events
	# From a vfork child, which shares its parent's memory: the parent
	# keeps tracing into its own file (PRESERVE keeps it to be read).
	out=$(OCAML_RUNTIME_EVENTS_PRESERVE=1 run "$D" "$T/hostfd" vsetuid \
		"$nobody" /bin/echo hi 2>&1)
	expect_eq "vfork child's setuid: output" "$out" "hi
parent ok"
	f=$(ls "$D" | grep events)
	expect_eq "vfork child's setuid: files (the parent's)" \
		"$(echo "$f" | grep -c .)" 1
	[ -n "$f" ] && { "$T/dump" "$D/$f" | grep -q domain_spawn ||
		fail "the parent's thread after the vfork child's setuid is not in $f"; }
	rm -f "$D"/*.events
	[ -x "$PY" ] && {
		run "$D" ${RTE_ASAN_RT:+ASAN_OPTIONS=detect_leaks=0} $PY -c 'import subprocess
subprocess.run(["/bin/echo", "py"], user="nobody", check=True)' \
			>"$D/out" 2>"$D/err"
		expect_eq "python status" $? 0
		expect_eq "python stdout" "$(cat "$D/out")" py
		expect_eq "python stderr" "$(cat "$D/err")" ""
		expect_eq "python files left" "$(ls "$D" | grep events)" ""
	}
	finish
}

# names NAME...: the pid each ring file name starts with, sorted.
names() { ls "$D" | grep '^[0-9].*\.events$' | sort; }

# SIGKILLed processes leave their files; a later traced start in the
# directory (past the sweep period, shim/sweep.h) removes those of
# processes that are gone and were not preserved, by --clean's rule
# (rte-read --clean --dry-run names each of them too), and never a
# preserved file, a live writer's, or the file of a process that may
# still be its writer (a pid alive since before the file was made).
test_killed() {
	begin killed
	sleep 600 & old=$! # alive before the files are made
	BG="$BG $old"
	# A crashed process's file holds its crash record: kept (as by
	# --clean), without PRESERVE too.
	run "$D" sh -c 'kill -SEGV $$' 2>/dev/null
	crashed=$(names)
	[ -n "$crashed" ] || fail "the crashed process left no file"
	run "$D" "$T/hostfd" killed 200 >/dev/null || fail "hostfd killed 200"
	OCAML_RUNTIME_EVENTS_PRESERVE=1 run "$D" "$T/hostfd" killed 5 \
		>/dev/null || fail "hostfd killed 5 with PRESERVE"
	kept=$(for f in "$D"/*.events; do [ -k "$f" ] || basename "$f"; done |
		sort)
	left=$(for f in "$D"/*.events; do [ -k "$f" ] && basename "$f"; done |
		sort)
	[ -n "$left" ] || fail "no file left by the killed children"
	[ "$(echo "$kept" | wc -l)" -ge 6 ] ||
		fail "preserved files missing: $kept"
	one=$(echo "$left" | head -1)
	# A pid now used by an untraced process started after the file last
	# changed (cp -p keeps the time): not the writer, stale.
	sleep 600 & new=$!
	BG="$BG $new"
	cp -p "$D/$one" "$D/$new.events"
	# A pid alive since before the file changed: may be its writer.
	cp -p "$D/$one" "$D/$old.events"
	"$B/rte-read" --clean --dry-run "$D" >"$D.clean" 2>&1
	# A live traced writer (its start may sweep already).
	env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D" sleep 600 & live=$!
	BG="$BG $live"
	i=0
	while [ ! -e "$D/$live.events" ] && [ $i -lt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	[ -e "$D/$live.events" ] || fail "the live writer made no file"
	# A live writer whose file names a pid that is not its own (as in a
	# pid namespace of its own): that pid's process started after the
	# file, but the writer still maps it.
	sleep 0.2 # the process below starts after the file last changed
	sleep 600 & other=$!
	BG="$BG $other"
	mv "$D/$live.events" "$D/$other.events"
	sleep 3 # past RTE_SWEEP_PERIOD_S since the children's own sweeps
	run "$D" /bin/true || fail "the traced start failed"
	for f in $left $new.events; do
		[ -e "$D/$f" ] && fail "$f was left (its writer is gone)"
		grep -q "would remove $D/$f:" "$D.clean" ||
			fail "rte-read --clean would keep $f, removed"
	done
	for f in $kept $crashed $old.events $other.events; do
		[ -e "$D/$f" ] || fail "$f was removed (preserved or live)"
	done
	kill "$live" "$new" "$old" "$other" 2>/dev/null
	finish
}

# The sweep runs at most once per RTE_SWEEP_PERIOD_S (2 s) in a
# directory: its stamp in the directory's access time outlives its own
# listing (which, under relatime, once reset the access time to the real
# time, so that every traced start listed and swept the directory).
# strace counts the starts that list it.
test_sweep_gate() {
	begin sweep_gate
	command -v strace >/dev/null || { skip sweep_gate "no strace"; return; }
	mkdir "$D/g"
	# LeakSanitizer refuses to run under ptrace
	san=${RTE_ASAN_RT:+-E ASAN_OPTIONS=detect_leaks=0}
	t0=$(date +%s)
	for i in 1 2 3 4 5; do
		$TMO strace -qq -f -e trace=getdents64 -o "$D/st.$i" \
			-E LD_PRELOAD="$PRELOAD" -E OCAML_RUNTIME_EVENTS_START=1 \
			-E OCAML_RUNTIME_EVENTS_DIR="$D/g" $san /bin/true ||
			fail "traced /bin/true $i failed"
	done
	t1=$(date +%s)
	listed=$(for i in 1 2 3 4 5; do
		grep -q getdents64 "$D/st.$i" && echo $i
	done | tr '\n' ' ')
	# The gate compares whole seconds (a period of 1 to 2 s): judged when
	# every start fell in the first start's second or the next.
	if [ $((t1 - t0)) -le 1 ]; then
		expect_eq "starts that listed the directory" "$listed" "1 "
		expect_eq "its stamp (atime nanoseconds)" \
			"$(stat -c %x "$D/g" | sed 's/.*\.\([0-9]*\).*/\1/')" 271828182
	else
		echo "  (sweep_gate: the starts spanned $((t1 - t0)) s: the gate not judged)"
	fi
	finish
}

# A user who cannot read librte.so (the build in a private directory): a
# process that switched to that user and execs gets an LD_PRELOAD without
# it (shim/hooks/execenv.c), so ld.so says nothing on the new image's
# stderr ("cannot be preloaded") and the other preloaded objects stay,
# with their separators. setpriv keeps its capabilities across its
# setresuid, which exec drops: the check is the new image's view. From a
# fork child and from a vfork child too (hostfd).
test_user_unreadable() {
	begin user_unreadable
	is_root || { skip user_unreadable "needs root to switch user"; return; }
	command -v setpriv >/dev/null || { skip user_unreadable "no setpriv"; return; }
	# The libm the programs here load (not another architecture's).
	libm=$(ldd "$T/hostfd" | awk '$1 ~ /^libc\.so/ { sub(/libc\.so\.6$/, "libm.so.6", $3); print $3 }')
	[ -r "$libm" ] || { skip user_unreadable "no libm.so.6 to preload beside"; return; }
	u=$((61000 + $$ % 4000))
	setpriv --reuid="$u" --regid="$u" --clear-groups true 2>/dev/null ||
		{ skip user_unreadable "cannot switch to uid $u here"; return; }
	priv=$D/private
	mkdir -m 700 "$priv" && cp "$LIB" "$priv/librte.so" || { fail "copy"; finish; return; }
	chmod 755 "$D"
	# RTE_LOG's file, where the new user can reach it (the build may be
	# under a private directory).
	log=$(mktemp /tmp/rte-user-log.XXXXXX) && chmod 666 "$log" || { fail "log"; finish; return; }
	pre="${RTE_ASAN_RT:+$RTE_ASAN_RT }$priv/librte.so:$libm"
	want="${RTE_ASAN_RT:+$RTE_ASAN_RT:}$libm"
	hows="setpriv fork vfork"
	# posix_spawn and system() after a switch (Python's os.setuid, then
	# os.posix_spawn and os.system: libc's functions, ours).
	[ -x "$PY" ] && hows="$hows spawn system"
	cat >"$D/spawn.py" <<'PY'
import os, sys
u = int(sys.argv[1]); os.setgid(u); os.setuid(u)
os.waitpid(os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ), 0)
PY
	cat >"$D/system.py" <<'PY'
import os, shlex, sys
u = int(sys.argv[1]); os.setgid(u); os.setuid(u)
os.system(shlex.join(sys.argv[2:]))
PY
	for how in $hows; do
		tail=""
		: >"$log"
		case $how in
		setpriv) cmd="setpriv --reuid=$u --regid=$u --clear-groups" ;;
		fork) cmd="$T/hostfd setuid $u" ;;
		vfork) cmd="$T/hostfd vsetuid $u" tail="
parent ok" ;;
		spawn | system) cmd="$PY $D/$how.py $u" ;;
		esac
		$TMO env LD_PRELOAD="$pre" OCAML_RUNTIME_EVENTS_START=1 RTE_LOG="$log" \
			OCAML_RUNTIME_EVENTS_DIR="$D" ${RTE_ASAN_RT:+ASAN_OPTIONS=detect_leaks=0} \
			$cmd /bin/sh -c 'echo "[$LD_PRELOAD]"' >"$D/out" 2>"$D/err"
		expect_eq "status ($how)" $? 0
		expect_eq "stdout ($how): the new image's LD_PRELOAD" "$(cat "$D/out")" "[$want]$tail"
		expect_eq "stderr ($how)" "$(cat "$D/err")" ""
		# RTE_LOG says so, except from a vfork child (nothing of its
		# parent's may change: it writes nothing of ours).
		n=$(grep -c "cannot read .*left out of LD_PRELOAD" "$log")
		[ "$how" = vfork ] && expect_eq "RTE_LOG lines ($how)" "$n" 0
		[ "$how" != vfork ] && expect_eq "RTE_LOG lines ($how)" "$n" 1
	done
	# Readable: passed as it is.
	$TMO env LD_PRELOAD="$PRELOAD:$libm" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D" /bin/sh -c 'exec /bin/sh -c "echo \"[\$LD_PRELOAD]\""' \
		>"$D/out" 2>"$D/err"
	expect_eq "readable: LD_PRELOAD" "$(cat "$D/out")" "[$PRELOAD:$libm]"
	rm -f "$D"/*.events "$log"
	finish
}

run_all() {
	if [ $# -gt 0 ]; then
		for t in "$@"; do "$t"; done
		return
	fi
	test_fds
	test_fds_python
	test_daemon_fds
	test_setuid
	test_user_unreadable
	test_killed
	test_sweep_gate
}

run_all "$@"
h_report host
