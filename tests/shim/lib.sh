# tests/shim/lib.sh - what the shim's scripts (run.sh, isolation.sh,
# host.sh) share: the build's paths, a private work directory under
# build/tests/shim (then tests/harness.sh), and programs run under the real
# shim (traced) with their files decoded by tests/shim/dump (dump,
# nfiles), and the children of tests/shim/progs/forkways.c (child_file,
# dump_parent, raw_begin).
#
# Environment (mk/shim.mk): RTE_BUILD, the build folder (absolute);
# RTE_ASAN_RT, the ASan runtime to preload first (empty without ASan).
# The sourcing script may set TMO (the timeout every program runs under)
# first: timeout 120 by default.

B=${RTE_BUILD:?RTE_BUILD is not set}
T=$B/tests/shim
LIB=$B/librte.so
RTE_ASAN_RT=${RTE_ASAN_RT:-}
PRELOAD="${RTE_ASAN_RT:+$RTE_ASAN_RT }$LIB"
TMO=${TMO:-timeout 120}
WORK=$(mktemp -d "$T/work.XXXXXX") || exit 1
. "$(dirname "$0")/../harness.sh"

# traced DIR [VAR=value...] CMD...: run CMD under the shim, tracing into
# DIR, preserved (timeout itself runs without the shim).
traced() {
	_d=$1
	shift
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$_d" OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		"$@"
}

# dump FILE OUT: decode FILE into OUT; fails the test on any error.
dump() {
	"$T/dump" "$1" >"$2" 2>"$2.err" || fail "dump $1: $(cat "$2.err")"
}

# reaped DIR PID: how PID's end is told by the rte.reap records of DIR's
# files ("status N" or "signal NAME", one line per record), read by
# rte-read.
reaped() {
	"$B/rte-read" -f jsonl "$1" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    x = e.get("exit") if e.get("event") == "rte.reap" else None
    if x and x["pid"] == int(sys.argv[1]):
        print("status %d" % x["status"] if "status" in x else "signal " + x["signal"])
' "$2"
}

nfiles() { # DIR: number of *.events files
	ls "$1" | grep -c '\.events$'
}

# child_file: the pid (cpid) of the child "child PID" in $D/out names,
# and its file (f); fails the test and returns 1 if it has none.
child_file() {
	cpid=$(awk '$1 == "child" { print $2 }' "$D/out")
	f=$D/$cpid.events
	[ -f "$f" ] || { fail "no file for child $cpid"; return 1; }
}

# dump_parent CHILD [OUT]: decode the file of $D other than CHILD (with
# two files, the parent's) into OUT ($D/parent.d if not given); $parent
# is its path.
dump_parent() {
	for p in "$D"/*.events; do
		[ "$p" = "$1" ] || parent=$p
	done
	dump "$parent" "${2:-$D/parent.d}"
}

# raw_begin NAME WAY [thread]: begin test NAME: `forkways raw WAY
# [thread]` traced into $D must exit 0, say nothing on stderr and leave
# two files (then child_file: cpid, f). Returns 1 when the test is over
# already: skipped (this libc has no _Fork) or without a child file.
raw_begin() {
	begin "$1"
	traced "$D" "$T/forkways" raw "$2" ${3:+"$3"} >"$D/out" 2>"$D/err"
	_st=$?
	if [ "$2" = _Fork ] && grep -q 'not implemented' "$D/err"; then
		skip "$1" "this libc has no _Fork"
		return 1
	fi
	expect_eq "exit status" $_st 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	expect_eq "files" "$(nfiles "$D")" 2
	child_file || { finish; return 1; }
}
