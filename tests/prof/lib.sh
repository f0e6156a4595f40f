# tests/prof/lib.sh - what the CPU profiler's scripts (run.sh, views.sh)
# share: the build's paths, a private work directory (then
# tests/harness.sh), and prof, which runs a program profiled under the
# real shim.
#
# Environment (mk/tests-prof.mk): RTE_BUILD, the build folder (absolute);
# RTE_ASAN_RT, the ASan runtime to preload first (empty without ASan);
# RTE_TSAN, 1 for a ThreadSanitizer build. The sourcing script sets
# PROF_WORK, the name of its work directory under $TMPDIR (or /tmp).

B=${RTE_BUILD:?RTE_BUILD is not set}
T=$B/tests/prof
CPU=$T/cpu
READ=$B/rte-read
LIB=$B/librte.so
PRELOAD="${RTE_ASAN_RT:+$RTE_ASAN_RT }$LIB"
TMO="timeout 120"
TSAN=${RTE_TSAN:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/${PROF_WORK:?PROF_WORK is not set}.XXXXXX") || exit 1
. "$(dirname "$0")/../harness.sh"

# prof DIR HZ CMD...: run CMD profiled at HZ into DIR (preserved); its
# stderr goes to DIR/err, its status to $ST.
prof() {
	_d=$1 _hz=$2
	shift 2
	mkdir -p "$_d"
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$_d" OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		RTE_PROFILE="$_hz" "$@" 2>"$_d/err"
	ST=$?
}
