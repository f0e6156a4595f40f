#!/bin/sh
# tests/reader/consistency.sh - the cross-output consistency test: on
# every OCaml fixture (tests/fixtures, and ../shared/fixtures when it is
# there) and on traces of real programs run under librte.so by rte-run (a
# C program with threads and forks, tests/reader/consistprog.c; Python
# threads + multiprocessing + subprocess; `make -j2` of a small makefile),
# every count two outputs both show is recounted from --format=jsonl by
# tests/reader/consistency.py and must be equal in summary, summary-json,
# gc-stats, gc-stats-json, chrome (slices, durations, lifetimes, lost
# words, processes: those without a file of their own too), rte-read
# diff and the Prometheus exposition (per process with
# --per-process, and the default exposition's totals over its label
# sets: prom-totals).
#
# Checks another change is still fixing may be listed as expected to
# fail (RTE_CONSISTENCY_XFAIL, consistency.py); none is now.
# (chrome-threads, one Chrome track per tenancy of a ring, is fixed: the
# shim's rte.proc, written before the thread's tid, waits for it as the
# ring's first lifecycle events do.)
#
# Environment: RTE_BUILD (the absolute build folder; set by mk/reader.mk).
set -u
RTE_TEST_NAME=consistency
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.sh"
CHECK="python3 $HERE/consistency.py $RR $W"
: "${RTE_CONSISTENCY_XFAIL=}"
RTE_CONSISTENCY_TALLY=$W/tally
export RTE_CONSISTENCY_XFAIL RTE_CONSISTENCY_TALLY

seen=
for d in "$HERE"/../fixtures/*/*/ "$HERE"/../../../shared/fixtures/*/*/ /work/shared/fixtures/*/*/; do
	[ -d "$d" ] || continue
	ls "$d"*.events.gz >/dev/null 2>&1 || continue
	name=$(basename "$(dirname "$d")")/$(basename "$d")
	case " $seen " in *" $name "*) continue ;; esac
	seen="${seen:-} $name"
	begin "fixture $name"
	mkdir -p "$W/fix/$name"
	for gz in "$d"*.events.gz; do
		gzip -dc "$gz" >"$W/fix/$name/$(basename "$gz" .gz)" || fail "gunzip $gz"
	done
	$CHECK "$W/fix/$name" || fail "$name"
done

# Several files read one after another: a process is written out (and
# its rings forgotten) as soon as the next file begins, so the process
# tree must take its figures (lost words, first and last times) from what
# the model kept. The lossy file is named to be read first.
begin "files read one after another: a lossy OCaml process written out early"
mkdir -p "$W/early"
for d in "$HERE"/../fixtures/ocaml-5.2/basic "$HERE"/../fixtures/ocaml-5.2/domains; do
	for gz in "$d"/*.events.gz; do
		gzip -dc "$gz" >"$W/early/$(basename "$gz" .gz)" || fail "gunzip $gz"
	done
done
for gz in "$HERE"/../fixtures/ocaml-5.2/gc-lossy/*.events.gz; do
	gzip -dc "$gz" >"$W/early/10001.events" || fail "gunzip $gz"
done
$CHECK "$W/early" || fail "early"

begin "a C program: three waves of threads on reused rings, two forks"
RTE_ALLOC=1 "$B/rte-run" -q -d "$W/c" -- "$B/tests/reader/consistprog" || fail "consistprog: exit $?"
$CHECK "$W/c" || fail "consistprog"

begin "python3: threads, multiprocessing, subprocess"
cat >"$W/prog.py" <<'PY'
import multiprocessing, subprocess, sys, threading
def work(n):
    return sum(i * i for i in range(n))
if __name__ == "__main__":
    ts = [threading.Thread(target=work, args=(20000,)) for _ in range(6)]
    for t in ts: t.start()
    for t in ts: t.join()
    with multiprocessing.Pool(2) as p:
        p.map(work, [1000] * 8)
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    subprocess.run(["sh", "-c", "true"], check=True)
PY
"$B/rte-run" -q -d "$W/py" -- /usr/bin/python3 "$W/prog.py" || fail "python3: exit $?"
$CHECK "$W/py" || fail "python3"

begin "make -j2 of a small makefile"
mkdir -p "$W/mk"
printf 'all: a b c\na b c:\n\t@sh -c "echo $@ > $@.out"\n' >"$W/mk/Makefile"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$B/rte-run" -q -d "$W/make" -- make -s -j2 -C "$W/mk" >/dev/null || fail "make: exit $?"
$CHECK "$W/make" || fail "make -j2"

# Processes without a file of their own (a fork child its traced parent
# reaps: summary-json's tree has it as reaped_only from the parent's
# rte.reap): chrome shows every one, its exit in its lifetime slice
# (consistency.py, chrome-processes). tree_has checks that the run has
# the fileless child the case is about (EXIT: its summary-json "exit").
tree_has() {
	"$RR" -f summary-json "$1" | python3 -c '
import json, sys
want = json.loads(sys.argv[1])
t = json.load(sys.stdin)["tree"]
sys.exit(not any(e["reaped_only"] and e["exit"] == want for e in t))' "$2"
}
begin "bash -c 'false | true; true': a pipeline's stages, one failed, without files"
"$B/rte-run" -q -d "$W/pipe" -- bash -c 'false | true; true' || fail "pipe: exit $?"
tree_has "$W/pipe" '{"status": 1}' || fail "pipe: no reaped-only child with exit 1"
$CHECK "$W/pipe" || fail "pipe"

begin "a SIGKILLed subshell without a file"
"$B/rte-run" -q -d "$W/kill" -- bash -c '( while :; do :; done ) & p=$!; sleep 0.3; kill -9 $p; wait' 2>/dev/null ||
	fail "kill: exit $?"
tree_has "$W/kill" '{"signal": "SIGKILL"}' || fail "kill: no reaped-only child killed by SIGKILL"
$CHECK "$W/kill" || fail "SIGKILLed subshell"

# An expected failure that no longer fails anywhere is a failure: take
# it out of the list.
for f in $RTE_CONSISTENCY_XFAIL; do
	awk -v f="$f" '$1 == f { c += $2; x += $3 } END { exit !(c > 0 && x == 0) }' \
		"$W/tally" 2>/dev/null && fail "XPASS: every $f check passed: take it out of RTE_CONSISTENCY_XFAIL"
done
echo "consistency: $tests tests, $fails failures"
[ "$fails" -eq 0 ]
