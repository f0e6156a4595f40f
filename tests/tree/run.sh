#!/bin/sh
# run.sh - the process tree rte records is the one the kernel made: the
# same commands traced at once by `strace -f -e trace=process` (Debian's)
# and by librte.so give the same processes, parents, argv and exit
# statuses or signals (compare.py), for every way of making a child:
# fork, posix_spawnp, vfork, system(), daemon(), bash, make -j2, Python's
# subprocess, multiprocessing and os.system, SIGPIPE, SIGKILL; and odd
# argv (newlines, non-UTF-8 bytes, 100,000 arguments, rewritten in place)
# and a reused pid are shown as they were.
#
#   RTE_BUILD=$PWD/build sh tests/tree/run.sh [test_NAME...]
set -u

B=${RTE_BUILD:?RTE_BUILD is not set}
T=$B/tests/tree
SRC=$(cd "$(dirname "$0")" && pwd)
LIB=$B/librte.so
PRELOAD="${RTE_ASAN_RT:+$RTE_ASAN_RT }$LIB"
TMO="timeout 300"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rte-tree.XXXXXX") || exit 1
. "$SRC/../harness.sh"

# both CMD...: run CMD under strace -f and the shim at once (the pids
# are then the same in both), into $D/strace and $D/ev/; status in $rc.
# Under ASan, without LeakSanitizer: it cannot run under ptrace.
both() {
	mkdir -p "$D/ev"
	$TMO strace -f -s 1000000 -e trace=process -o "$D/strace" \
		env LD_PRELOAD="$PRELOAD" OCAML_RUNTIME_EVENTS_START=1 \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		OCAML_RUNTIME_EVENTS_DIR="$D/ev" OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		"$@" >"$D/out" 2>"$D/err"
	rc=$?
	"$B/rte-read" -f jsonl "$D/ev" >"$D/ev.jsonl" 2>"$D/read.err" ||
		fail "rte-read: $(cat "$D/read.err")"
}

# compare [--lost-images]: compare.py of $D's two views must find no
# difference.
compare() {
	python3 "$SRC/compare.py" "$D/strace" "$D/ev.jsonl" "$@" >"$D/cmp" 2>&1 ||
		fail "$(grep -v ' 0 differences' "$D/cmp" | head -20)"
}

# tree_check [summary_check.py options]: rte-read's process tree of $D/ev
# (summary, summary-json, chrome) against strace and the JSONL records.
tree_check() {
	COLUMNS=100 "$B/rte-read" -f summary "$D/ev" >"$D/sum.txt" 2>"$D/sum.err" ||
		fail "rte-read -f summary: $(cat "$D/sum.err")"
	"$B/rte-read" -f summary-json "$D/ev" >"$D/sum.json" 2>"$D/sum.err" ||
		fail "rte-read -f summary-json: $(cat "$D/sum.err")"
	"$B/rte-read" -f chrome "$D/ev" >"$D/chrome.json" 2>"$D/sum.err" ||
		fail "rte-read -f chrome: $(cat "$D/sum.err")"
	python3 "$SRC/summary_check.py" "$D/strace" "$D/ev.jsonl" "$D/sum.json" \
		"$D/sum.txt" "$D/chrome.json" "$@" >"$D/tcmp" 2>&1 ||
		fail "$(grep -v ' 0 differences' "$D/tcmp" | head -20)"
	python3 "$SRC/../reader/summary_schema.py" "$SRC/../../doc/SUMMARY-JSON.md" \
		"$D/sum.json" >"$D/schema" 2>&1 || fail "$(head -5 "$D/schema")"
}

expect_eq() { # what got want
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# jq_count FILTER: JSONL lines of $D/ev.jsonl for which the Python
# expression FILTER (on `e`) is true.
py_count() {
	python3 -c 'import json, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(line)
    if '"$1"':
        n += 1
print(n)' "$D/ev.jsonl"
}

test_spawns() {
	begin spawns
	both "$T/spawns" all
	expect_eq "exit status" "$rc" 2
	compare
	# Each way is there: the kill, the daemon's exec, the spawn links.
	expect_eq "SIGKILL reaped" "$(py_count 'e.get("event") == "rte.reap" and e["exit"].get("signal") == "SIGKILL"')" 1
	expect_eq "rte.spawn events" "$(py_count 'e.get("event") == "rte.spawn"')" 3
	tree_check
	# the SIGKILLed child: its end from its parent's reap, marked failed
	grep -q '^!.* SIGKILL ' "$D/sum.txt" || fail "no failed SIGKILL line: $(cat "$D/sum.txt")"
	finish
}

# popen(3): glibc spawns the shell with its internal posix_spawn, out of
# the hooks' sight; each child must still have its parent, argv and exit,
# and the parent's ring must name both children (rte.spawn or rte.reap).
test_popen() {
	begin popen
	both "$T/spawns" popen
	expect_eq "exit status" "$rc" 2
	compare
	tree_check
	root=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "rte.proc" and e["proc"]["argv"][1:] == ["popen"]:
        print(e["pid"])' "$D/ev.jsonl")
	expect_eq "rte.spawn in the parent" "$(py_count 'e["pid"] == '"${root:-0}"' and e.get("event") == "rte.spawn"')" 2
	expect_eq "rte.reap in the parent" "$(py_count 'e["pid"] == '"${root:-0}"' and e.get("event") == "rte.reap" and e["exit"]["status"] in (8, 9)')" 2
	finish
}

test_bash_pipeline() {
	begin bash_pipeline
	both bash -c 'yes | head -1; exit 7'
	expect_eq "exit status" "$rc" 7
	expect_eq "output" "$(cat "$D/out")" "y"
	compare
	expect_eq "yes ends by SIGPIPE" "$(py_count 'e.get("event") == "rte.exit" and e["exit"].get("signal") == "SIGPIPE"')" 1
	tree_check
	grep -q '^  *[0-9]* .* SIGPIPE  *yes$' "$D/sum.txt" || fail "yes: $(cat "$D/sum.txt")"
	finish
}

test_exit_status() {
	begin exit_status
	both sh -c 'sh -c "exit 7"; exit 7'
	expect_eq "exit status" "$rc" 7
	compare
	tree_check
	expect_eq "failed lines" "$(grep -c '^!.* 7  *sh -c' "$D/sum.txt")" 2
	finish
}

test_python() {
	begin python
	both /usr/bin/python3 "$SRC/progs/pyspawn.py"
	expect_eq "exit status" "$rc" 0
	compare
	tree_check
	finish
}

test_make() {
	begin make
	both make -s -j2 -f "$SRC/progs/Makefile.small" -C "$D"
	expect_eq "exit status" "$rc" 0
	compare
	tree_check
	finish
}

# make -j2 of 110 compiler runs (and their cc1, as, collect2, ld): the
# tree folds them and fits in 60 lines; --by exe counts them.
test_make_big() {
	begin make_big
	mkdir -p "$D/src"
	for i in $(seq 1 110); do echo "int f$i(void) { return $i; }" >"$D/src/f$i.c"; done
	echo 'int main(void) { return 0; }' >"$D/src/main.c"
	printf 'OBJS = $(patsubst %%.c,%%.o,$(wildcard *.c))\nprog: $(OBJS)\n\tcc -o $@ $(OBJS)\n%%.o: %%.c\n\tcc -O0 -c $< -o $@\n' >"$D/src/Makefile"
	both make -s -j2 -C "$D/src"
	expect_eq "exit status" "$rc" 0
	compare
	tree_check --max-lines 60 --fold
	[ "$(py_count 'e.get("event") == "rte.proc" and not e["proc"].get("fork") and e["proc"]["argv"][0] == "cc"')" -ge 111 ] ||
		fail "fewer than 111 cc runs"
	"$B/rte-read" -f summary --by exe "$D/ev" >"$D/byexe" || fail "--by exe"
	expect_eq "cc row" "$(awk '$1 == "cc" { print $2 }' "$D/byexe")" \
		"$(py_count 'e.get("event") == "rte.proc" and not e["proc"].get("fork") and e["proc"]["argv"][0] == "cc"')"
	"$B/rte-read" -f summary --all "$D/ev" >"$D/all" || fail "--all"
	# --all: the tree, then a block for every process with a file
	grep -q "^process tree" "$D/all" || fail "--all shows no tree"
	expect_eq "--all blocks" "$(grep -c '^process [0-9]' "$D/all")" \
		"$(ls "$D/ev" | sed -n 's/^\([0-9]*\)\..*events$/\1/p' | sort -u | wc -l)"
	finish
}

test_argv() {
	begin argv
	both "$T/spawns" argv
	expect_eq "exit status" "$rc" 0
	compare
	# The exec'd image shows its argv as exec gave it; its fork child,
	# made after the image rewrote argv[2] in place, what memory holds.
	# JSON: UTF-8 as it is, other bytes as \udcXX (never \u00XX, a real
	# character)
	expect_eq "exec'd argv" "$(py_count 'e.get("event") == "rte.proc" and not e["proc"].get("fork") and e["proc"]["argv"][2:] == ["line one\nline two", "\udcff\udcfe bytes \udcc3", "", "a \"quote\" and \\", "ü-file.c € \U0001d11e"]')" 1
	expect_eq "rewritten argv" "$(py_count 'e.get("event") == "rte.proc" and e["proc"].get("fork") and e["proc"]["argv"][2] == "Z" * 17')" 1
	# Text: the same escapes, one line.
	"$B/rte-read" -f text "$D/ev" >"$D/text" 2>&1 || fail "rte-read -f text"
	python3 - "$D/text" <<'PY' || fail "text: no such argv line"
import sys
want = r'"argv", "line one\u000aline two", "\udcff\udcfe bytes \udcc3", "", "a \"quote\" and \\", "ü-file.c € 𝄞"]'
sys.exit(0 if any(want in l for l in open(sys.argv[1], encoding="utf-8")) else 1)
PY
	tree_check
	# the tree's line: escaped, on one line
	COLUMNS=400 "$B/rte-read" -f summary "$D/ev" >"$D/wide.txt" || fail "rte-read"
	grep -qF "'line one\x0aline two' '\xff\xfe bytes \xc3' '' 'a \"quote\" and \x5c' 'ü-file.c € 𝄞'" "$D/wide.txt" ||
		fail "tree argv: $(cat "$D/wide.txt")"
	finish
}

test_many_args() {
	begin many_args
	both sh -c '"$0" many 100000; true' "$T/spawns"
	expect_eq "exit status" "$rc" 0
	compare
	expect_eq "cut argv" "$(py_count 'e.get("event") == "rte.proc" and e["proc"].get("argv_cut") and e["proc"]["argc"] == 100001')" 1
	tree_check
	python3 -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > 100 for l in open(sys.argv[1], encoding="utf-8")))' "$D/sum.txt" ||
		fail "a line wider than COLUMNS=100"
	grep -q '…$' "$D/sum.txt" || fail "no cut mark"
	finish
}

test_vfork_child() {
	begin vfork_child
	both "$T/spawns" vforkfail
	expect_eq "exit status" "$rc" 2
	compare
	# The vfork children (which share the parent's memory) noted no end
	# of theirs there: the parent's rte.exit is its own.
	expect_eq "parent's end" "$(py_count 'e.get("event") == "rte.exit" and e["exit"].get("status") == 2')" 1
	finish
}

# A posix_spawn that cannot exec (a program nowhere on PATH: ENOENT; a
# file that is not executable: EACCES): glibc's child fails its execs,
# exits 127 and is reaped inside the call, its pid never given. strace
# sees that child; rte has its parent's rte.spawn_failed (its error and
# argv): the tree shows it under its parent, failed, with no pid.
test_spawn_failed() {
	begin spawn_failed
	both "$T/spawns" spawnfail
	expect_eq "exit status" "$rc" 2
	compare
	expect_eq "rte.spawn_failed events" \
		"$(py_count 'e.get("event") == "rte.spawn_failed" and e["spawn_failed"]["error"] in ("ENOENT", "EACCES")')" 2
	tree_check
	grep -q '^!.* ENOENT .*rte-no-such-program .an arg. (spawn failed: No such file or directory)$' \
		"$D/sum.txt" || fail "no ENOENT line: $(cat "$D/sum.txt")"
	grep -q '^!.* EACCES .*/dev/null x (spawn failed: Permission denied)$' \
		"$D/sum.txt" || fail "no EACCES line: $(cat "$D/sum.txt")"
	# rte-run's report of a failed command names both, and the parent
	"$B/rte-run" -- "$T/spawns" spawnfail >/dev/null 2>"$D/run.err"
	expect_eq "rte-run's status" $? 2
	sed -n '/^rte-run: processes that failed/,$p' "$D/run.err" >"$D/failed"
	for want in "pid - (ENOENT): rte-no-such-program 'an arg' (spawn failed: No such file or directory)" \
		"pid - (EACCES): /dev/null x (spawn failed: Permission denied)" \
		" (2): $T/spawns spawnfail"; do
		grep -qF -- "$want" "$D/failed" || fail "rte-run's failed list lacks '$want': $(cat "$D/run.err")"
	done
	finish
}

# A shell's subshells (fork children that never write and are reaped by
# their parent) make no file, with PRESERVE too: only the shell's own
# file is there, yet every subshell is in the tree, as strace saw it,
# with its status from the parent's rte.reap, the shell's argv (the image
# it runs) and a wall from its fork to its reap.
test_subshells() {
	begin subshells
	both /bin/sh -c 'for i in 1 2 3; do x=$(echo $i); done; (exit 3); [ $? = 3 ] && exit 5'
	expect_eq "exit status" "$rc" 5
	compare
	tree_check
	expect_eq "files" "$(ls "$D/ev" | wc -l)" 1
	expect_eq "forks in strace" "$(grep -c 'clone(' "$D/strace")" 4
	python3 - "$D/sum.json" >"$D/py" 2>&1 <<'PY' || fail "$(cat "$D/py")"
import json, sys
t = json.load(open(sys.argv[1]))["tree"]
root = [e for e in t if e["parent_pid"] is None]
kids = [e for e in t if e["parent_pid"] is not None]
assert len(root) == 1 and len(kids) == 4, t
for e in kids:
    assert e["forked_only"] and e["reaped_only"], e
    assert e["argv"] == root[0]["argv"], (e["argv"], root[0]["argv"])
    assert 0 < e["wall_ns"] < root[0]["wall_ns"], e
    assert e["cpu_user_ns"] is not None, e
assert sorted(e["exit"]["status"] for e in kids) == [0, 0, 0, 3], kids
PY
	finish
}

# Fork children that never wrote, whose parent cannot tell their end
# (paused, SIGCHLD ignored, an exec before the reap) or that exec: each
# still in the tree once, with its end, as strace saw it.
test_quiet_edges() {
	begin quiet_edges
	both "$T/spawns" quiet
	expect_eq "exit status" "$rc" 0
	compare
	tree_check
	python3 - "$D/sum.json" >"$D/py" 2>&1 <<'PY' || fail "$(cat "$D/py")"
import json, sys
t = json.load(open(sys.argv[1]))["tree"]
ends = sorted(e["exit"]["status"] for e in t if e["exit"] and "status" in e["exit"])
assert ends == [0, 0, 11, 12, 13, 14], ends
assert len(t) == 6, t
true = [e for e in t if e["argv"] and e["argv"][0] == "true"]
assert len(true) == 1 and not true[0]["reaped_only"], true
PY
	finish
}

test_pid_reuse() {
	begin pid_reuse
	both "$T/spawns" reuse
	expect_eq "exit status" "$rc" 0
	if grep -q "^reused" "$D/out"; then
		# The second life's file name is still taken by the first's
		# kept file (PRESERVE): it has none, and says so.
		compare --lost-images
		tree_check --lost-images
		grep -q "rte: " "$D/err" || fail "no warning for the taken name"
		expect_eq "two lives" "$(py_count 'e.get("event") == "rte.reap" and e["exit"]["pid"] == '"$(awk '{print $2}' "$D/out")")" 2
	else
		skip pid_reuse "no pid could be reused here (needs root and a quiet pid range)"
		CUR_OK=skip
	fi
	[ "$CUR_OK" = skip ] || finish
}

# Files whose process records lie (progs/hostile.c): every output reads
# them, the tree has no cycle, each parent is a process that began first
# or was named by a spawn made after, odd bytes are escaped, records cut
# short or of another version ignored.
test_hostile() {
	begin hostile
	mkdir -p "$D/ev"
	"$T/hostile" "$D/ev" || fail "hostile: exit $?"
	for f in summary summary-json chrome gc-stats gc-stats-json jsonl; do
		COLUMNS=300 "$B/rte-read" -f "$f" --by exe "$D/ev" >"$D/$f" 2>"$D/$f.err" ||
			fail "-f $f: exit $?: $(head -3 "$D/$f.err")"
	done
	python3 - "$D/summary-json" "$D/summary" <<'PY' || fail "$(cat "$D/py.err")"
import json, sys
err = open(sys.argv[1].rsplit("/", 1)[0] + "/py.err", "w")
t = json.load(open(sys.argv[1]))["tree"]
bad = []
by = {}
for e in t:
    by.setdefault(e["pid"], []).append(e)
for e in t:
    seen, p = set(), e
    while p and p["parent_pid"] is not None:
        if id(p) in seen:
            bad.append("cycle at %d" % e["pid"]); break
        seen.add(id(p))
        p = by[p["parent_pid"]][0] if p["parent_pid"] in by else None
pp = {e["pid"]: e["parent_pid"] for e in t if not e["reaped_only"]}
if pp.get(10) is not None and pp.get(20) is not None:
    bad.append("10 and 20 each other's parent")
if pp.get(30) == 30:
    bad.append("30 its own parent")
if pp.get(10) is not None or pp.get(20) != 10:
    # 10 began first: neither 20 (its ppid, begun later) nor 30 (whose
    # rte.spawn of 10 came after 10 began) is its parent
    bad.append("10: parent %r, 20: parent %r, want None and 10" % (pp.get(10), pp.get(20)))
if pp.get(36) != 35:
    bad.append("36: parent %r, want 35" % pp.get(36))
r40 = sorted(str(e["exit"]) for e in t if e["pid"] == 40)
if r40 != ["{'signal': 'SIGKILL'}", "{'status': 3}"] or not all(e["reaped_only"] for e in by[40]):
    bad.append("40: %r" % r40)
if any(e["pid"] <= 0 for e in t if e["reaped_only"]):
    bad.append("a reaped pid <= 0 kept")
sf = sorted((e["spawn_failed"]["error"], e["argv"], e["parent_pid"], e["pid"])
            for e in t if e["spawn_failed"])
if sf != [("E99999", ["y"], 30, None), ("ENOENT", ["m\nx"], 30, None)]:
    bad.append("spawns that failed: %r" % sf)
odd = [e for e in t if e["pid"] == 34][0]
if odd["argv"][:2] != ["l1\nl2", "it's \"q\" \\"] or odd["exit"] != {"signal": "signal 200"}:
    bad.append("34: %r %r" % (odd["argv"][:2], odd["exit"]))
for p in (31, 32, 33):
    if [e["argv"] for e in by[p]] != [None]:
        bad.append("%d: argv %r from a bad record" % (p, [e["argv"] for e in by[p]]))
if [e["exit"] for e in by[35]] != [None] or by[30][0]["exit"] is not None:
    bad.append("a bad rte.exit was read")
txt = open(sys.argv[2], encoding="utf-8").read()
if "l1\\x0al2" not in txt or "\\x80" not in txt or "m\\x0ax (spawn failed:" not in txt:
    bad.append("text: not escaped")
print("\n".join(bad), file=err)
sys.exit(1 if bad else 0)
PY
	finish
}

command -v strace >/dev/null || { echo "tests/tree: strace not installed"; exit 1; }
TESTS=${*:-$(sed -n 's/^\(test_[a-z_]*\)() {$/\1/p' "$0")}
for t in $TESTS; do
	$t
done
echo "tests/tree: $NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]
