#!/bin/sh
# views.sh - tests of the CPU profile's views (rte-read over real
# profiled programs): --by exe over a process tree, and the top functions
# against perf record's on the same program.
#
# Usage: views.sh [TEST...] (all by default). Environment as run.sh's
# (mk/tests-prof.mk): RTE_BUILD, RTE_ASAN_RT, RTE_TSAN.
set -u

B=${RTE_BUILD:?RTE_BUILD is not set}
CPU=$B/tests/prof/cpu
READ=$B/rte-read
LIB=$B/librte.so
PRELOAD="${RTE_ASAN_RT:+$RTE_ASAN_RT }$LIB"
TMO="timeout 120"
PY=/usr/bin/python3
TSAN=${RTE_TSAN:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rte-views.XXXXXX") || exit 1
. "$(dirname "$0")/../harness.sh"

# prof DIR HZ CMD...: as run.sh's.
prof() {
	_d=$1 _hz=$2
	shift 2
	mkdir -p "$_d"
	$TMO env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$_d" OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		RTE_PROFILE="$_hz" "$@" 2>"$_d/err"
	ST=$?
}

# bash running two cpu processes and a python3: --by exe gives one root
# per executable, each the sum of its processes' samples (the same
# numbers as the per-pid roots, grouped by the summary's names).
test_by_exe() {
	begin by_exe
	[ -z "$TSAN" ] || { skip by_exe "a ThreadSanitizer build (uninstrumented bash)"; return; }
	prof "$D" 997 /bin/bash -c "$CPU tree 300; $CPU tree 300; $PY -c 'x = 0
for i in range(2000000): x += i'"
	[ "$ST" = 0 ] || fail "status $ST ($(head -3 "$D/err"))"
	"$READ" -f folded "$D"/*.events >"$D/pid" 2>"$D/rerr"
	"$READ" --by exe -f folded "$D"/*.events >"$D/exe" 2>>"$D/rerr"
	"$READ" -f summary-json "$D"/*.events >"$D/sum.json" 2>>"$D/rerr"
	$PY - "$D/pid" "$D/exe" "$D/sum.json" >"$D/check" 2>&1 <<'PY' || fail "$(cat "$D/check")"
import json, os, sys
def roots(path):
    r = {}
    for line in open(path):
        stack, n = line.rsplit(" ", 1)
        top = stack.split(";")[0]
        r.setdefault(top, [0, set()])
        r[top][0] += int(n)
        r[top][1].update(stack.split(";"))
    return r
per_pid, per_exe = roots(sys.argv[1]), roots(sys.argv[2])
exe_of = {}
for p in json.load(open(sys.argv[3]))["tree"]:
    if p.get("argv"):
        exe_of["pid %d" % p["pid"]] = os.path.basename(p["argv"][0])
want = {}
for root, (n, _) in per_pid.items():
    want[exe_of.get(root, "?")] = want.get(exe_of.get(root, "?"), 0) + n
got = {k: v[0] for k, v in per_exe.items()}
assert not any(k.startswith("pid ") for k in got), got
assert got == want, (got, want)
assert sum(1 for r in per_pid if exe_of.get(r) == "cpu") == 2, exe_of
assert "leaf_hot" in per_exe["cpu"][1] and "leaf_hot" not in per_exe.get("python3", [0, set()])[1]
assert got.get("python3", 0) > 0, got
print(got)
PY
	finish
}

TESTS="by_exe"
[ $# -gt 0 ] && TESTS="$*"
for t in $TESTS; do
	"test_$t"
done
echo "prof view tests: $NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]
