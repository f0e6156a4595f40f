#!/bin/sh
# host.sh - the shim never hurts its host, part 2 (issue 22): descriptors,
# identity changes and SIGKILLed processes, with real programs (C and
# /usr/bin/python3) under the real LD_PRELOAD shim, compared with the same
# program run plain. doc/DESIGN.md "Never hurting the host" names these
# tests. One test: RTE_BUILD=$PWD/build sh tests/shim/host.sh test_NAME.
set -u

B=${RTE_BUILD:?RTE_BUILD is not set}
T=$B/tests/shim
LIB=$B/librte.so
PRELOAD="${RTE_ASAN_RT:+$RTE_ASAN_RT }$LIB"
TMO="timeout 300"
PY=/usr/bin/python3
WORK=$(mktemp -d "$T/work.XXXXXX") || exit 1
chmod 755 "$WORK" # test_setuid's child (nobody) must reach its directory
. "$(dirname "$0")/../harness.sh"

# run DIR [VAR=value...] CMD...: CMD traced into DIR, not preserved.
run() {
	_d=$1
	shift
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$_d" "$@"
}

expect_eq() { # what got want
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
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
	for mode in "" RTE_PROFILE=997 RTE_ALLOC=1; do
		run "$D" $mode $PY -m test -j1 test_subprocess \
			-m test_pass_fds_redirected >"$D/out" 2>&1 ||
			fail "test_pass_fds_redirected with '$mode': $(tail -5 "$D/out")"
	done
	code='import os, threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
print(sorted(os.listdir("/proc/self/fd")), os.open("/dev/null", 0))'
	plain=$($TMO $PY -c "$code")
	got=$(run "$D" RTE_PROFILE=997 $PY -c "$code")
	expect_eq "python descriptors" "$got" "$plain"
	finish
}

# A daemon-style program closes every descriptor and reuses the numbers
# while the profiler samples code without unwind information: its pipe
# and its log are its own.
test_daemon_fds() {
	begin daemon_fds
	for mode in RTE_PROFILE=997 RTE_ALLOC=1; do
		out=$(run "$D" $mode "$T/hostfd" daemon 2>&1)
		expect_eq "daemon with $mode" "$out" "pipe hello log ok"
	done
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
}

run_all "$@"
echo "host: $NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]
