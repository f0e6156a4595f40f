#!/bin/sh
# tests/reader/nav.sh [TEST...] - rte-read's Perfetto output and navigation
# options on real files: real programs (tests/reader/traced.c with threads
# and a fork, outprog.c with threads reusing a ring, sh exec'ing env
# exec'ing true, execvp's PATH search) run under librte.so by rte-run, and
# the OCaml 5.2 fixtures. What each option must print is computed again,
# independently, from --format=jsonl of the same files
# (tests/reader/nav_check.py); the chrome output is checked against the
# trace format's rules (tests/reader/chrome_check.py). Each test prints
# "== nav: ..." and its failures; none: all tests.
#
# Environment: RTE_BUILD (the absolute build folder; set by mk/reader.mk).
set -u
RTE_TEST_NAME=nav
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.sh"
RUN=$B/rte-run
TRACED=$B/tests/reader/traced
PROG=$B/tests/reader/outprog
FIX=$HERE/../fixtures/ocaml-5.2
NC="python3 $HERE/nav_check.py"
CC_="python3 $HERE/chrome_check.py"

# The real runs, made once: $W/tr (threads, fork), $W/il (threads reusing
# ring 1), $W/ex (sh -> env -> true, with execvp's failed attempts).
setup() {
	[ -d "$W/tr" ] && return
	"$RUN" -q -d "$W/tr" -- "$TRACED" 400 20 fork || fail "traced: exit $?"
	"$RUN" -q -d "$W/il" -- "$PROG" interleave 6 || fail "outprog: exit $?"
	"$RUN" -q -d "$W/ex" -- sh -c 'ls / >/dev/null; exec env true' || fail "sh: exit $?"
	for s in tr il ex; do
		"$RR" -f jsonl -o "$W/$s.jsonl" "$W/$s" || fail "jsonl $s: exit $?"
	done
	for d in "$FIX"/*/; do
		s=$(basename "$d")
		mkdir -p "$W/fix/$s"
		for gz in "$d"*.events.gz; do
			gzip -dc "$gz" >"$W/fix/$s/$(basename "$gz" .gz)"
		done
		"$RR" -f jsonl -o "$W/fix/$s.jsonl" "$W/fix/$s" 2>/dev/null
	done
	for s in tr il ex fix/basic fix/domains fix/fork fix/gc fix/gc-lossy fix/pause fix/wrap; do
		"$RR" -f chrome -o "$W/$s.chrome" "$W/$s" 2>/dev/null || fail "chrome $s: exit $?"
	done
}

test_chrome_rules() {
	begin "chrome: nesting, monotonic tracks, flows with both ends, one name a track, no bookkeeping"
	setup
	for s in tr il ex fix/basic fix/domains fix/fork fix/gc fix/gc-lossy fix/pause fix/wrap; do
		$CC_ "$W/$s.chrome" >/dev/null || fail "chrome $s breaks the rules"
	done
	"$RR" -f chrome --all -o "$W/all.chrome" "$W/tr" || fail "chrome --all: exit $?"
	$CC_ "$W/all.chrome" --all >/dev/null || fail "chrome --all breaks the rules"
	grep -q '"name":"rte.thread.tid"' "$W/all.chrome" || fail "--all does not show rte.thread.tid"
	grep -q '"name":"rte.exec_failed"' "$W/ex.chrome" && fail "exec_failed shown without --all"
	"$RR" -f chrome --all -o "$W/exall.chrome" "$W/ex" || fail "chrome --all ex: exit $?"
	grep -q '"name":"rte.exec_failed"' "$W/exall.chrome" || fail "--all does not show rte.exec_failed"
	# execvp's PATH search: the failed tries are bookkeeping too; the
	# execs that worked (a next image followed) stay, with their arrows
	python3 - "$W/ex.jsonl" "$W/ex.chrome" "$W/exall.chrome" <<'PY' || fail "failed exec tries shown, or execs lost"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
tries = sum(1 for e in ev if e.get("event") == "rte.exec")
failed = sum(1 for e in ev if e.get("event") == "rte.exec_failed")
def n(p): return sum(1 for e in json.load(open(p))["traceEvents"] if e.get("name") == "rte.exec")
arrows = sum(1 for e in json.load(open(sys.argv[2]))["traceEvents"] if e["ph"] == "s" and e["name"] == "exec")
sys.exit(not (failed > 0 and n(sys.argv[2]) == tries - failed == arrows and n(sys.argv[3]) == tries))
PY
}

test_chrome_threads_flows() {
	begin "chrome: a track per thread (tid), fork and exec arrows, processes named across exec"
	setup
	for s in tr il ex; do
		$NC flows "$W/$s.jsonl" "$W/$s.chrome" >/dev/null || fail "$s: tracks or arrows"
	done
	# outprog's opener and hang threads took ring 1 one after the other
	python3 - "$W/il.jsonl" "$W/il.chrome" <<'PY' || fail "ring 1 reused: not two tracks"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
tids = {e["value"] for e in ev if e.get("event") == "rte.thread.tid" and e["ring"] == 1}
d = json.load(open(sys.argv[2]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in d if e["ph"] == "M" and e["name"] == "thread_name"}
sys.exit(not (len(tids) == 2 and all(names.get(t, "").endswith("(tid %d)" % t) for t in tids)))
PY
	# names taken between written events (by hidden rte.thread.name
	# records) are names the thread took: all on its one record
	"$RUN" -q -d "$W/rn" -- "$PROG" renames || fail "outprog renames: exit $?"
	"$RR" -f chrome -o "$W/rn.chrome" "$W/rn" || fail "chrome rn: exit $?"
	python3 - "$W/rn.chrome" <<'PY' || fail "a thread renamed twice between events: not both names"
import json, sys
d = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in d if e["ph"] == "M" and e["name"] == "thread_name"]
sys.exit(not any("first, second (tid " in n for n in names))
PY
	grep -q '"name":"pid [0-9]*: true (sh \\u2192 env \\u2192 true)"' "$W/ex.chrome" ||
		fail "process not named 'sh → env → true'"
	# the lost-data markers and the counters of the fixtures are kept
	python3 - "$W/fix/wrap.jsonl" "$W/fix/wrap.chrome" "$W/fix/gc.jsonl" "$W/fix/gc.chrome" <<'PY' || fail "lost markers or counters"
import json, sys
def jl(p): return [json.loads(l) for l in open(p)]
def ch(p): return json.load(open(p))["traceEvents"]
lost = [e for e in jl(sys.argv[1]) if e["kind"] == "lost"]
clost = [e for e in ch(sys.argv[2]) if e.get("cat") == "lost"]
cnt = [e for e in jl(sys.argv[3]) if e["kind"] in ("counter", "user_int")]
ccnt = [e for e in ch(sys.argv[4]) if e["ph"] == "C"]
sys.exit(not (lost and len(lost) == len(clost) and cnt and len(cnt) == len(ccnt)))
PY
}

test_window() {
	begin "--since/--until: relative (both spellings) and @NS absolute, on every format"
	setup
	"$RR" --since 1ms --until=2500us "$W/fix/domains" >"$W/w1" || fail "exit $?"
	$NC window "$W/fix/domains.jsonl" "$W/w1" 1000000 2500000 >/dev/null || fail "window text"
	"$RR" --since=1ms --until 2.5ms "$W/fix/domains" >"$W/w2" || fail "exit $?"
	cmp -s "$W/w1" "$W/w2" || fail "--since 1ms and --since=1ms differ"
	t0=$(python3 -c "import json,sys; print(min(json.loads(l)['ts'] for l in open(sys.argv[1]) if '\"ts\"' in l))" "$W/fix/domains.jsonl")
	"$RR" --since "@$((t0 + 1000000))" --until "@$((t0 + 2500000))" "$W/fix/domains" >"$W/w3" || fail "exit $?"
	cmp -s "$W/w1" "$W/w3" || fail "@NS does not give the same window"
	"$RR" -f summary-json --since 1ms --until 2.5ms "$W/fix/domains" >"$W/w.json" || fail "summary exit $?"
	python3 - "$W/fix/domains.jsonl" "$W/w.json" <<'PY' || fail "summary-json in the window: span counts"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
t0 = min(e["ts"] for e in ev if "ts" in e)
n = sum(1 for e in ev if e["kind"] == "user_span" and e["span"] == "end" and e["event"] == "app.work"
        and t0 + 1000000 <= e["ts"] <= t0 + 2500000)
d = json.load(open(sys.argv[2]))
got = sum(s["count"] + s.get("unmatched_ends", 0) for p in d["processes"] for s in p["spans"] if s["name"] == "app.work")
sys.exit(not (n and got == n))
PY
	"$RR" -f gc-stats-json --until 1us "$W/fix/gc" >"$W/g.json" || fail "gc-stats exit $?"
	"$RR" -f gc-stats-json "$W/fix/gc" >"$W/g0.json" || fail "gc-stats exit $?"
	cmp -s "$W/g.json" "$W/g0.json" && fail "gc-stats ignores --until"
}

test_pid_thread() {
	begin "--pid and --thread (tid or name) on text, summary and gc-stats"
	setup
	child=$(python3 -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if 'fork_parent' in l][0]['data'])" "$W/tr.jsonl")
	"$RR" --pid "$child" "$W/tr" >"$W/p" || fail "exit $?"
	$NC pid "$W/tr.jsonl" "$W/p" "$child" >/dev/null || fail "--pid text"
	"$RR" -f summary-json --pid "$child" "$W/tr" >"$W/p.json" || fail "exit $?"
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit([p['pid'] for p in d['processes']] != [int(sys.argv[2])])" \
		"$W/p.json" "$child" || fail "summary-json --pid lists other processes"
	# outprog interleave leaves 3 unfinished spans: not those of another pid
	mkdir -p "$W/two" && cp "$W"/il/*.events "$W"/tr/*.events "$W/two/"
	"$RR" --pid "$child" "$W/two" >"$W/p2" || fail "exit $?"
	grep -q unfinished "$W/p2" && fail "--pid: another process's unfinished spans counted"
	"$RR" -f gc-stats --pid 1 "$W/fix/gc" >"$W/p.txt" || fail "exit $?"
	grep -q '^process' "$W/p.txt" && fail "gc-stats --pid 1 shows a process"
	tid=$(python3 -c "
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
names = {}
print([e['value'] for e in ev if e.get('event') == 'rte.thread.tid' and e['ring'] != 0][0])" "$W/tr.jsonl")
	"$RR" --thread "$tid" "$W/tr" >"$W/t" || fail "exit $?"
	$NC thread "$W/tr.jsonl" "$W/t" "$tid" >/dev/null || fail "--thread TID"
	"$RR" --thread worker-1 "$W/tr" >"$W/tn" || fail "exit $?"
	awk '!/^#/ && !/TIME/ && $5 != "worker-1" { bad = 1 } END { exit bad }' "$W/tn" ||
		fail "--thread worker-1 printed another thread"
	grep -q ' worker-1 ' "$W/tn" || fail "--thread worker-1 printed nothing"
}

test_text_timebase() {
	begin "text: one time base across processes, deltas, --wall-clock"
	setup
	"$RR" "$W/tr" >"$W/tb" || fail "exit $?"
	$NC timebase "$W/tr.jsonl" "$W/tb" >/dev/null || fail "time base or deltas"
	# Wrapped rings start with a loss record, which has no time: the
	# trace still starts at the first event (not at 0 ns).
	for s in gc-lossy wrap; do
		"$RR" "$W/fix/$s" >"$W/tb-$s" 2>/dev/null || fail "$s: exit $?"
		$NC timebase "$W/fix/$s.jsonl" "$W/tb-$s" >/dev/null || fail "$s: time base after a loss"
		"$RR" --until 10ms "$W/fix/$s" >"$W/w-$s" 2>/dev/null || fail "$s: --until exit $?"
		$NC window "$W/fix/$s.jsonl" "$W/w-$s" 0 10000000 >/dev/null || fail "$s: --until 10ms after a loss"
		[ -s "$W/w-$s" ] || fail "$s: --until 10ms keeps nothing"
	done
	"$RR" --wall-clock "$W/tr" >"$W/wc" || fail "exit $?"
	python3 - "$W/wc" <<'PY' || fail "--wall-clock: not the time the file was written"
import datetime, sys, time
l = [l for l in open(sys.argv[1]) if l[:2] == "20"]
t = datetime.datetime.strptime(l[0].split()[0][:26], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
sys.exit(not (abs(t.timestamp() - time.time()) < 600))
PY
}

test_top() {
	begin "--top N: the longest phases and spans, text and json, found in chrome"
	setup
	for s in fix/gc fix/domains tr; do
		"$RR" --top 7 -f json "$W/$s" >"$W/top.json" || fail "top $s: exit $?"
		$NC top "$W/$s.jsonl" "$W/top.json" "$W/$s.chrome" 7 >/dev/null || fail "top $s"
	done
	"$RR" --top 3 -k phase "$W/fix/gc" >"$W/top.txt" || fail "exit $?"
	[ "$(grep -c ' phase ' "$W/top.txt")" -eq 3 ] || fail "top text -k phase: not 3 GC phases"
	"$RR" --top 3 -f json "$W/fix/gc" >"$W/top3.json" || fail "exit $?"
	python3 - "$W/top.txt" "$W/top3.json" <<'PY' || fail "top text and json disagree on the longest"
import json, sys
rows = [l.split() for l in open(sys.argv[1]) if l[:1] == " "]
j = json.load(open(sys.argv[2]))["top"]
sys.exit(not (len(rows) == 3 and all(r[-1] == "major" or r[-2] == "phase" for r in rows)
              and j[0]["dur_ns"] >= j[1]["dur_ns"] >= j[2]["dur_ns"]))
PY
	"$RR" --top 3 --since 100s "$W/fix/gc" >"$W/top0.txt" || fail "exit $?"
	grep -q ' phase ' "$W/top0.txt" && fail "--top ignores --since"
	for bad in "--top 0" "--top x" "--since -5ms" "--since 5m" "--until @x" "--pid 0" "--top 3 -f chrome" "--since 5ms --until 2ms" "--span= -f folded"; do
		# shellcheck disable=SC2086
		"$RR" $bad "$W/tr" >/dev/null 2>&1
		[ $? -eq 1 ] || fail "'$bad' is not a usage error"
	done
}

if [ $# -gt 0 ]; then
	for t in "$@"; do "$t"; done
else
	test_chrome_rules
	test_chrome_threads_flows
	test_window
	test_pid_thread
	test_text_timebase
	test_top
fi
if [ $fails -ne 0 ]; then
	echo "nav: $fails failure(s) in $tests tests" >&2
	exit 1
fi
echo "nav: all $tests tests passed"
