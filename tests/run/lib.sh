# tests/run/lib.sh - what tests/run/run.sh and drain.sh share: their work
# directory (with $TMPDIR inside it, so that rte-run's temporary
# directories can be counted), a caller's tracing settings kept out, one
# line a test (begin), failures counted (fail), summary-json checks
# (json_check), waiting for a file (wait_for) and the final tally (report).
#
# The sourcing script sets NAME (run, drain) first. A test that mounts a
# tmpfs sets $small to it: it is unmounted at exit.

W=$(mktemp -d "${TMPDIR:-/tmp}/rte-test-$NAME.XXXXXX") || exit 1
small=
. "$(dirname "$0")/../watchdog.sh"
h_watchdog "$W"
trap 'h_watchdog_stop "$W"; [ -n "$small" ] && umount "$small" 2>/dev/null; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
export TMPDIR="$W/tmp"
mkdir -p "$TMPDIR"
# The caller's tracing settings must not leak into the tests.
unset OCAML_RUNTIME_EVENTS_START OCAML_RUNTIME_EVENTS_DIR \
	OCAML_RUNTIME_EVENTS_PRESERVE OCAMLRUNPARAM CAMLRUNPARAM RTE_LIB \
	RTE_READ RTE_RUN_EXEC LD_PRELOAD

fails=0
tests=0
current=

fail() {
	echo "FAIL [$current]: $*" >&2
	fails=$((fails + 1))
}

begin() {
	current=$1
	h_watchdog_test "$W" "$1"
	tests=$((tests + 1))
	echo "== $NAME: $1"
}

# json_check FILE PYTHON-EXPR-ON-d: fails the test unless the expression
# over the parsed summary-json document d is true; prints the python error.
# Helpers for the expression: procs (pid -> process), user_int(p, name),
# spans(name) (the count of spans of that name in every process).
json_check() {
	python3 - "$1" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
procs = {p["pid"]: p for p in d["processes"]}
def user_int(p, name):
    for e in p["user_ints"]:
        if e["name"] == name:
            return e
    return None
def spans(name):
    return sum(s["count"] for p in d["processes"] for s in p["spans"] if s["name"] == name)
ok = eval(sys.argv[2])
if not ok:
    print("check failed: " + sys.argv[2], file=sys.stderr)
    print(json.dumps(d)[:3000], file=sys.stderr)
sys.exit(0 if ok else 1)
PYEOF
}

# wait_for GLOB: until a file matching GLOB exists (at most ~30 s).
wait_for() {
	i=0
	while [ $i -lt 600 ]; do
		for f in $1; do [ -e "$f" ] && return 0; done
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# report: the tally; exit 1 if a test failed.
report() {
	if [ $fails -ne 0 ]; then
		echo "$NAME: $fails failure(s) in $tests tests" >&2
		exit 1
	fi
	echo "$NAME: all $tests tests passed"
}
