#!/bin/sh
# isolation.sh - what the shim must not do to processes that share
# something with a traced one (doc/DESIGN.md "Never hurting the host"):
# a vfork child (our memory, its parent's), a child made without atfork
# handlers that starts threads (_Fork, raw fork and clone system calls),
# and a program that loads librte.so with dlopen. Real programs
# (tests/shim/progs/isolate.c and forkways.c, /usr/bin/python3) under the
# real shim, their files read back with tests/shim/dump.
#
# Usage: isolation.sh [TEST...] (the test functions' names; all by
# default). Environment (mk/shim.mk): RTE_BUILD, the build folder
# (absolute); RTE_ASAN_RT, the ASan runtime to preload first (empty
# without ASan). Every program runs under `timeout`.
set -u

PY=/usr/bin/python3
# Python's own allocations at exit are not ours to check (ASan runs).
PYASAN="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
. "$(dirname "$0")/lib.sh"

# ---- vfork children --------------------------------------------------------------

# A vfork child resets its handlers (sigaction, signal, sysv_signal) and
# names itself before exec: its parent keeps its handlers (SIGABRT is then
# handled), the child was shown the program's handlers (never ours), and
# the parent's file gets none of the child's names. With the profilers on
# too (their hooks in the child).
test_vfork_signals() {
	begin vfork_signals
	want="child saw h h h
parent has h h h
handled"
	# Under ASan its malloc comes first: RTE_ALLOC would only warn.
	all="RTE_PROFILE=997 RTE_ALLOC=1"
	[ -z "$RTE_ASAN_RT" ] || all="RTE_PROFILE=997"
	for env in "RTE_LOG=" "$all"; do
		rm -rf "$D/t"
		mkdir -p "$D/t"
		# shellcheck disable=SC2086 # $env: the variables, split
		traced "$D/t" $env "$T/isolate" vfork >"$D/out" 2>"$D/err"
		expect_eq "exit status ($env)" $? 0
		expect_eq "stderr ($env)" "$(cat "$D/err")" ""
		expect_eq "stdout ($env)" "$(sed 1d "$D/out")" "$want"
		cpid=$(awk '$1 == "vfork" { print $3 }' "$D/out")
		for f in "$D"/t/*.events; do
			[ "$f" = "$D/t/$cpid.events" ] && continue
			dump "$f" "$D/parent.d"
			expect_eq "vfork child's names in the parent's file ($env)" \
				"$(count "$D/parent.d" '$4 == "vchild"')" 0
			expect_eq "parent's ring_stop ($env)" \
				"$(count "$D/parent.d" '$3 == "ring_stop"')" 1
		done
	done
	finish
}

# CPython's subprocess (vfork, then every handled signal reset in the
# child): a SIGABRT handler set before subprocess.run still runs.
test_vfork_python() {
	begin vfork_python
	prog='import os, signal, subprocess
def h(s, f): print("handled", flush=True)
signal.signal(signal.SIGABRT, h)
subprocess.run(["true"])
os.kill(os.getpid(), signal.SIGABRT)
print("after")'
	$TMO "$PY" -c "$prog" >"$D/plain" 2>&1
	st=$?
	traced "$D" "$PYASAN" "$PY" -c "$prog" >"$D/out" 2>&1
	expect_eq "exit status" $? $st
	expect_eq "output" "$(cat "$D/out")" "$(cat "$D/plain")"
	expect_eq "handled" "$(cat "$D/out")" "handled
after"
	finish
}

# faulthandler's SIGSEGV handler survives a subprocess: the traceback is
# printed, the status is the same as plain.
test_vfork_faulthandler() {
	san_skip address vfork_faulthandler \
		"ASan's own SIGSEGV handler comes first" && return
	begin vfork_faulthandler
	prog='import ctypes, faulthandler, subprocess
faulthandler.enable()
subprocess.run(["/bin/true"])
ctypes.string_at(0)'
	$TMO "$PY" -c "$prog" >/dev/null 2>"$D/plain"
	st=$?
	traced "$D" "$PY" -c "$prog" >/dev/null 2>"$D/err"
	expect_eq "exit status" $? $st
	for pat in 'Fatal Python error: Segmentation fault' 'File "<string>", line 4'; do
		grep -q "$pat" "$D/plain" || fail "plain run lacks '$pat'"
		grep -q "$pat" "$D/err" ||
			fail "traced run lacks '$pat': $(head -5 "$D/err")"
	done
	finish
}

# ---- children made without atfork handlers, with threads -----------------------------

# The child names itself, starts a thread that names itself and writes,
# renames it: all of it in the child's own file, none in the parent's.
test_raw_threads() {
	for way in _Fork sysfork clone; do
		raw_begin "raw_threads_$way" $way thread || continue
		dump "$f" "$D/child.d"
		expect_eq "child's thread event" "$(count "$D/child.d" '$3 == "w.thread"')" 1
		expect_eq "child's own event" "$(count "$D/child.d" '$3 == "w.child"')" 1
		expect_eq "child's thread's own name" \
			"$(count "$D/child.d" '$3 == "rte.thread.name" && $4 == "childthr"')" 1
		dump_parent "$f"
		expect_eq "child's events in the parent's file" \
			"$(count "$D/parent.d" '$4 ~ /child/ || $3 == "w.thread" || $3 == "w.child" || $3 == "fork_child" || $3 == "domain_spawn"')" 0
		expect_eq "parent's event" "$(count "$D/parent.d" '$3 == "w.parent"')" 1
		expect_eq "parent's ring_stop" "$(count "$D/parent.d" '$3 == "ring_stop"')" 1
		finish
	done
}

# ---- librte.so by dlopen ----------------------------------------------------------

# Loaded with dlopen while OCAML_RUNTIME_EVENTS_START is set, librte.so
# stands aside: one warning, no file, the program's output and status
# unchanged (its API calls do nothing). Without START, not a word.
# Preloaded, the same dlopen finds it loaded and everything is traced.
test_dlopen() {
	begin dlopen
	mkdir -p "$D/a" "$D/b" "$D/c"
	$TMO env OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$D/a" \
		OCAML_RUNTIME_EVENTS_PRESERVE=1 ${RTE_ASAN_RT:+LD_PRELOAD=$RTE_ASAN_RT} \
		"$T/isolate" dlopen "$LIB" >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	grep -q '^child [0-9]*$' "$D/out" || fail "stdout: $(cat "$D/out")"
	expect_eq "stderr lines" "$(grep -c '^rte: ' "$D/err")" 1
	grep -q 'dlopen' "$D/err" || fail "no word of dlopen: $(cat "$D/err")"
	expect_eq "files" "$(ls -A "$D/a")" ""
	$TMO env OCAML_RUNTIME_EVENTS_DIR="$D/b" \
		${RTE_ASAN_RT:+LD_PRELOAD=$RTE_ASAN_RT} \
		"$T/isolate" dlopen "$LIB" >"$D/out" 2>"$D/err"
	expect_eq "exit status without START" $? 0
	expect_eq "stderr without START" "$(cat "$D/err")" ""
	expect_eq "files without START" "$(ls -A "$D/b")" ""
	traced "$D/c" "$T/isolate" dlopen "$LIB" >"$D/out" 2>"$D/err"
	expect_eq "exit status preloaded" $? 0
	expect_eq "stderr preloaded" "$(cat "$D/err")" ""
	expect_eq "files preloaded" "$(nfiles "$D/c")" 2
	cpid=$(awk '$1 == "child" { print $2 }' "$D/out")
	for p in "$D"/c/*.events; do
		[ "$p" = "$D/c/$cpid.events" ] && continue
		dump "$p" "$D/parent.d"
		expect_eq "fork_parent" "$(count "$D/parent.d" '$3 == "fork_parent" && $4 == '"$cpid")" 1
		expect_eq "ring_stop" "$(count "$D/parent.d" '$3 == "ring_stop"')" 1
	done
	finish
}

echo "isolation tests (preload: $PRELOAD)"
TESTS="test_vfork_signals test_vfork_python test_vfork_faulthandler test_raw_threads test_dlopen"
[ $# -gt 0 ] && TESTS="$*"
for t in $TESTS; do
	"$t"
done
h_report "isolation tests"
