# tests/shim/lib.sh - what the shim's scripts (run.sh, isolation.sh,
# host.sh) share: the build's paths, a private work directory under
# build/tests/shim (then tests/harness.sh), and programs run under the real
# shim (traced) with their files decoded by tests/shim/dump (dump,
# nfiles).
#
# Environment (mk/shim.mk): RTE_BUILD, the build folder (absolute);
# RTE_ASAN_RT, the ASan runtime to preload first (empty without ASan).
# The sourcing script may set TMO (the timeout every program runs under)
# first: timeout 120 by default.

B=${RTE_BUILD:?RTE_BUILD is not set}
T=$B/tests/shim
LIB=$B/librte.so
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

nfiles() { # DIR: number of *.events files
	ls "$1" | grep -c '\.events$'
}
