#!/bin/sh
# tests/reader/many.sh BUILD - rte-read on a directory of 20,000 small ring
# files, each the file of a process of its own (issue 12, item 13): the
# summary reads them all, in order, with a peak RSS far below what one
# state per file of the old reader took (about 1 GiB here), and below
# what a cursor and the per-ring state kept for each file written out
# took (about 74 MiB here: a process written out is forgotten, its files
# closed, issue 23; about 48 MiB now, and 2 KiB a file is what keeps
# 100,000 files under 200 MiB, a `make bench` row), and its output
# is the same whether finished processes are written early to a temporary
# file or kept in memory to the end (no usable TMPDIR). No timing: the
# time is a `make bench` row. The same files merged by time (jsonl) map
# a bounded number at once.
set -u
BUILD=${1:-build}
RR=$BUILD/rte-read
GEN=$BUILD/bench/gen
N=20000
LIMIT_KIB=61440 # 60 MiB
mkdir -p "$BUILD/tests/reader" &&
	T=$(mktemp -d "$BUILD/tests/reader/many.XXXXXX") || exit 1
FAILS=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }

# N copies of a finished file of 20 events (bench/run.py's many_files:
# each with its own pid in ring_start), and one killed process among them
# (no ring_stop, one event less: written at the end, still in its place).
"$GEN" "$T/fin.events" 20 1 && "$GEN" "$T/stale.events" 20 1 nostop ||
	{ echo "FAIL: bench/gen"; exit 1; }
python3 - "$T" "$N" <<'EOF' || { echo "FAIL: copies"; exit 1; }
import os, sys
sys.path.insert(0, "bench")
import run
t, n = sys.argv[1], int(sys.argv[2])
run.many_files(os.path.join(t, "fin.events"), os.path.join(t, "d"), n)
# the killed one: pid 100000 + n/2 in its ring_start, as many_files does
data = bytearray(open(os.path.join(t, "stale.events"), "rb").read())
at = int.from_bytes(data[48:56], "little") + 16
data[at:at + 8] = (100000 + n // 2).to_bytes(8, "little")
with open(os.path.join(t, "d", "%d.events" % (100000 + n // 2)), "wb") as f:
    f.write(data)
EOF

# peak RSS (KiB) and exit status of rte-read ARGS..., stdout to $T/out
rss_of() {
	python3 -c '
import os, resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    p = subprocess.Popen(sys.argv[2:], stdout=out)
    _, st, ru = os.wait4(p.pid, 0)
print(ru.ru_maxrss, os.waitstatus_to_exitcode(st))' "$T/out" "$@"
}

set -- $(rss_of "$RR" -f summary "$T/d")
rss=$1 rc=$2
if [ "$rc" != 0 ]; then
	fail "summary of $N files exited $rc"
elif ! tail -1 "$T/out" | grep -q "^total: $N processes, $((N * 22 - 1)) events, 0 lost words"; then
	fail "summary of $N files: $(tail -1 "$T/out")"
else
	ok "summary of $N files: $(tail -1 "$T/out")"
fi
if grep -qa __asan_init "$RR"; then
	echo "skip: peak RSS bound (AddressSanitizer build: its shadow counts)"
elif [ "$rss" -ge "$LIMIT_KIB" ]; then
	fail "summary of $N files: peak RSS $rss KiB (bound $LIMIT_KIB)"
else
	ok "summary of $N files: peak RSS $rss KiB < $LIMIT_KIB"
fi
# processes in order, the killed one in its place
first=$(grep -m1 '^process ' "$T/out") last=$(grep '^process ' "$T/out" | tail -1)
mid=$(grep -n "^process $((100000 + N / 2))\$" "$T/out" | cut -d: -f1)
prev=$(grep -n "^process $((100000 + N / 2 - 1))\$" "$T/out" | cut -d: -f1)
if [ "$first" = "process 100000" ] && [ "$last" = "process $((100000 + N - 1))" ] &&
	[ -n "$mid" ] && [ -n "$prev" ] && [ "$prev" -lt "$mid" ] &&
	grep -q "$((100000 + N / 2)).events (no ring_stop" "$T/out"; then
	ok "processes in order, the one without ring_stop in its place"
else
	fail "order: first '$first', last '$last', killed at line '$mid' after '$prev'"
fi
cp "$T/out" "$T/spooled"
# the same without a temporary file: every process kept to the end
TMPDIR=$T/none "$RR" -f summary "$T/d" >"$T/kept" 2>/dev/null
if cmp -s "$T/spooled" "$T/kept"; then
	ok "summary: the same with and without the temporary file"
else
	fail "summary differs without the temporary file"
fi
"$RR" -f summary-json "$T/d" >"$T/j1" 2>/dev/null
TMPDIR=$T/none "$RR" -f summary-json "$T/d" >"$T/j2" 2>/dev/null
if cmp -s "$T/j1" "$T/j2" && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["processes"]) == int(sys.argv[2]) and d["complete"] is True
assert [p["pid"] for p in d["processes"]] == list(range(100000, 100000 + int(sys.argv[2])))
' "$T/j1" "$N"; then
	ok "summary-json of $N files: every process, in order, the same kept"
else
	fail "summary-json of $N files"
fi

# Merged by time (jsonl), the N files all overlap: at most a bounded
# number is mapped (the old reader mapped all, N MiB of address space, and
# failed under this bound); events read ahead from a file released since
# keep their payloads (every custom event's bytes are "payload").
if grep -qa __asan_init "$RR"; then
	echo "skip: jsonl under ulimit -v (AddressSanitizer reserves more)"
else
	(ulimit -v 1048576 && exec "$RR" -f jsonl "$T/d") >"$T/jl" 2>"$T/jl.err"
	rc=$?
	lines=$(grep -c '' "$T/jl") pay=$(grep -c '"event":"gen.msg","hex":"7061796c6f6164"}$' "$T/jl")
	if [ "$rc" = 0 ] && [ "$lines" = $((N * 22 - 1)) ] && [ "$pay" = $((N * 2)) ]; then
		ok "jsonl of $N overlapping files in 1 GiB of address space, payloads kept"
	else
		fail "jsonl of $N files under ulimit -v: exit $rc, $lines events, $pay payloads: $(head -c 300 "$T/jl.err")"
	fi
fi

if [ "$FAILS" -ne 0 ]; then
	echo "$FAILS failure(s); files kept in $T" >&2
	exit 1
fi
rm -rf "$T"
echo "reader many-files tests passed"
