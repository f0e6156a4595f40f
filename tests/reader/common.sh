# tests/reader/common.sh - what the rte-read test scripts (nav.sh,
# out.sh, profile.sh) share: B (the build folder, from RTE_BUILD) and RR
# (its rte-read), W (a private work directory, removed at exit), an
# environment cleared of the runtime-events variables and LD_PRELOAD, and
# the test bookkeeping: begin NAME starts a test (printing "== NAME: ..."),
# fail MSG counts a failure in it; fails and tests are the counts.
# The sourcing script sets RTE_TEST_NAME (the name begin prints) first.
B=${RTE_BUILD:?set RTE_BUILD}
RR=$B/rte-read
W=$(mktemp -d "${TMPDIR:-/tmp}/rte-test-$RTE_TEST_NAME.XXXXXX") || exit 1
. "$(dirname "$0")/../watchdog.sh"
h_watchdog "$W"
trap 'h_watchdog_stop "$W"; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
unset OCAML_RUNTIME_EVENTS_START OCAML_RUNTIME_EVENTS_DIR \
	OCAML_RUNTIME_EVENTS_PRESERVE OCAMLRUNPARAM CAMLRUNPARAM LD_PRELOAD
fails=0 tests=0 current=

fail() { echo "FAIL [$current]: $*" >&2; fails=$((fails + 1)); }
begin() { current=$1; tests=$((tests + 1)); h_watchdog_test "$W" "$1"; echo "== $RTE_TEST_NAME: $1"; }
