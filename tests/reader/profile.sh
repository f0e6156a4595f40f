#!/bin/sh
# tests/reader/profile.sh [TEST...] - rte-read's profiles (folded, pprof,
# flamegraph, the summary's profile sections, chrome's sample instants, --span, --profile,
# malformed records) on the files of a real program under librte.so,
# tests/reader/profprog.c, whose stacks are real return addresses of its
# own functions in known proportions (see that file). go tool pprof
# (golang-go) and headless chromium read the pprof and SVG files; a test
# that needs one prints why it is skipped when it is absent.
#
# Environment: RTE_BUILD (the absolute build folder; set by mk/reader.mk).
set -u
RTE_TEST_NAME=profile
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.sh"
PROG=$B/tests/reader/profprog
DOC=$HERE/../../doc/SUMMARY-JSON.md

# run_prog DIR [hostile]: run profprog traced into DIR, then rename its
# rtx.* name slots to the rte.* names the shim's profilers will write (the
# public API refuses rte.* names); prints the file.
run_prog() {
	mkdir -p "$1"
	(cd "$1" && OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		OCAML_RUNTIME_EVENTS_DIR="$1" "$PROG" ${2:-}) || {
		fail "profprog exited $?"
		return 1
	}
	f=$(ls "$1"/*.events)
	python3 - "$f" <<'PY' || return 1
import sys
p = sys.argv[1]
d = open(p, "rb").read()
for n in (b"sample", b"alloc.sample", b"alloc.free", b"alloc.calls",
          b"alloc.bytes", b"alloc.frees", b"alloc.freed"):
    old = b"rtx." + n + b"\0"
    if d.count(old) != 1:
        sys.exit(f"{p}: {old!r} is not in the name table once")
    d = d.replace(old, b"rte." + n + b"\0")
open(p, "wb").write(d)
PY
	echo "$f"
}

# folded_check FILE PYEXPR: PYEXPR over s, a dict {stack suffix after
# "prof_work..." frames: count} built from the folded lines, is true.
folded_check() {
	python3 - "$1" "$2" <<'PY'
import sys
lines = [l.rsplit(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
full = {k: int(v) for k, v in lines}
if len(full) != len(lines):
    sys.exit("a stack is on two lines")
s = {}
for k, v in full.items():
    fr = k.split(";")
    # from the first of the program's own frames on
    i = min([j for j, f in enumerate(fr) if f.startswith("prof_")] or [0])
    s[";".join(fr[i:])] = s.get(";".join(fr[i:]), 0) + v
total = sum(full.values())
ok = eval(sys.argv[2])
if not ok:
    print("check failed:", sys.argv[2], "on", s, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

pycheck() {
	python3 - "$1" "$2" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
p = d["processes"][0]
c = p["cpu_profile"]
a = p["alloc_profile"]
def est(size, n, period=1024):
    q = -math.expm1(-size / period)
    return n * size / q
ok = eval("(" + sys.argv[2] + ")")
if not ok:
    print("check failed: " + sys.argv[2], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

F=$(run_prog "$W/ok") || { echo "profile: cannot run $PROG" >&2; exit 1; }
FH=$(run_prog "$W/bad" hostile) || { echo "profile: cannot run $PROG hostile" >&2; exit 1; }

# ---- folded ------------------------------------------------------------------

test_folded_cpu() {
	begin "folded: the CPU stacks and their exact counts"
	"$RR" -f folded -o "$W/cpu.folded" "$F" || fail "exit $?"
	folded_check "$W/cpu.folded" 's == {"prof_work;prof_mid;prof_leaf_a": 60, "prof_work;prof_mid;prof_leaf_b": 10, "prof_work_b;prof_leaf_b": 30} and total == 100' ||
		fail "counts"
	grep -q '^_start;.*;main;prof_work;prof_mid;prof_leaf_a 60$' "$W/cpu.folded" ||
		fail "the root is not _start ... main"
}

test_folded_alloc() {
	begin "folded --profile=alloc|inuse: estimated bytes of each stack"
	"$RR" -f folded --profile=alloc -o "$W/alloc.folded" "$F" || fail "alloc: exit $?"
	"$RR" -f folded --profile=inuse -o "$W/inuse.folded" "$F" || fail "inuse: exit $?"
	# size / (1 - exp(-size / period)) per sample (rte/profile.h)
	folded_check "$W/alloc.folded" 'set(s) == {"prof_work_alloc;prof_alloc_big", "prof_work_alloc;prof_alloc_small"} and abs(s["prof_work_alloc;prof_alloc_big"] - round(10 * 4096 / -__import__("math").expm1(-4))) <= 1 and abs(s["prof_work_alloc;prof_alloc_small"] - round(20 * 64 / -__import__("math").expm1(-64 / 1024))) <= 1' ||
		fail "alloc values"
	folded_check "$W/inuse.folded" 'list(s) == ["prof_work_alloc;prof_alloc_big"] and abs(total - round(5 * 4096 / -__import__("math").expm1(-4))) <= 1' ||
		fail "inuse values: only the 5 big blocks never freed"
	"$RR" -f folded --profile=heap "$F" >/dev/null 2>&1
	[ $? -eq 1 ] || fail "--profile=heap: not a usage error"
}

test_span() {
	begin "--span NAME: only the samples taken inside NAME (nested spans too)"
	"$RR" -f folded --span app.hot -o "$W/hot.folded" "$F" || fail "exit $?"
	folded_check "$W/hot.folded" 's == {"prof_work;prof_mid;prof_leaf_a": 60}' ||
		fail "app.hot: the 60 leaf_a samples"
	"$RR" -f folded --span=app.inner -o "$W/inner.folded" "$F" || fail "exit $?"
	folded_check "$W/inner.folded" 's == {"prof_work;prof_mid;prof_leaf_a": 20}' ||
		fail "app.inner: 20 samples"
	"$RR" -f folded --span app.none -o "$W/none.folded" "$F" 2>"$W/none.err" ||
		fail "exit $?"
	[ ! -s "$W/none.folded" ] || fail "samples outside any app.none"
	grep -q "no CPU (rte.sample) samples in the input inside span app.none" "$W/none.err" ||
		fail "no warning: $(cat "$W/none.err")"
}

test_by_thread() {
	begin "--by-thread: each thread is a root frame"
	"$RR" -f folded --by-thread -o "$W/thr.folded" "$F" || fail "exit $?"
	[ "$(cut -d';' -f1 "$W/thr.folded" | sort -u | grep -c '^thread [0-9]')" = 2 ] ||
		fail "two thread roots: $(cut -d';' -f1 "$W/thr.folded" | sort -u)"
}

test_two_procs() {
	begin "two processes: a pid root frame each (folded), pid labels (pprof)"
	mkdir -p "$W/two"
	cp "$F" "$FH" "$W/two/"
	"$RR" -f folded -o "$W/two.folded" "$W/two" 2>/dev/null || fail "exit $?"
	python3 - "$W/two.folded" "$(basename "$F" .events)" "$(basename "$FH" .events)" <<'PY' || fail "roots: $(cut -d';' -f1 "$W/two.folded" | sort | uniq -c)"
import sys
roots = {}
for l in open(sys.argv[1]):
    k, v = l.rsplit(" ", 1)
    roots[k.split(";")[0]] = roots.get(k.split(";")[0], 0) + int(v)
sys.exit(0 if roots == {"pid " + sys.argv[2]: 100, "pid " + sys.argv[3]: 100} else 1)
PY
	have_go || return 0
	"$RR" -f pprof -o "$W/two.pb.gz" "$W/two" 2>/dev/null || fail "pprof: exit $?"
	gotop "$W/two.pb.gz" -sample_index=samples -tagfocus="pid=$(basename "$F" .events)" >"$W/two.top" ||
		fail "pprof: $(cat "$W/go.err")"
	grep -q 'accounting for 100, 50.00% of 200 total' "$W/two.top" &&
		grep -Eq '^ +60 30\.00% .* prof_leaf_a$' "$W/two.top" || fail "pid label: $(cat "$W/two.top")"
}

# ---- summary ---------------------------------------------------------------------

test_summary_json() {
	begin "summary-json: threads, top functions, spans, histogram, sites, leaks"
	"$RR" -f summary-json -o "$W/s.json" "$F" || fail "exit $?"
	pycheck "$W/s.json" 'c["samples"] == 100 and c["cpu_ns"] == 10**9 and c["malformed"] == 0 and sorted(t["samples"] for t in c["threads"]) == [30, 70] and all(t["hz"] == 100 and abs(t["effective_hz"] - 100) < 0.01 for t in c["threads"])' ||
		fail "cpu totals and threads"
	pycheck "$W/s.json" '[(f["function"], f["samples"]) for f in c["top_self"]] == [("prof_leaf_a", 60), ("prof_leaf_b", 40)] and c["top_total"][0]["samples"] == 70 and {f["function"]: f["samples"] for f in c["top_total"]}["prof_mid"] == 70' ||
		fail "top functions"
	pycheck "$W/s.json" '[(s["name"], s["samples"], s["top_self"][0]["function"]) for s in c["spans"]] == [("app.hot", 40, "prof_leaf_a"), ("app.inner", 20, "prof_leaf_a")]' ||
		fail "spans (innermost) and their top function"
	# file:line of the top functions: where their samples were, as the
	# source has it (the lines found in profprog.c, not written here):
	# prof_leaf_a's self samples at its STACK() line, prof_mid's total
	# ones mostly (60 of 70) at its call of prof_leaf_a, leaf_b's at its
	# own STACK() line in spans' lists too
	la=$(grep -n 'STACK(pcs, n, prof_leaf_a);' "$HERE/profprog.c" | cut -d: -f1)
	ca=$(grep -n '^		prof_leaf_a();$' "$HERE/profprog.c" | cut -d: -f1)
	[ -n "$la" ] && [ -n "$ca" ] || fail "profprog.c: no STACK line or call of prof_leaf_a"
	pycheck "$W/s.json" 'all(f["file"].endswith("tests/reader/profprog.c") for f in c["top_self"]) and {f["function"]: f["line"] for f in c["top_self"]}["prof_leaf_a"] == '"${la:-0}"' and {f["function"]: f["line"] for f in c["top_total"]}["prof_mid"] == '"${ca:-0}"' and c["spans"][0]["top_self"][0]["line"] == '"${la:-0}" ||
		fail "top functions file:line (want prof_leaf_a at $la, prof_mid at $ca): $(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["processes"][0]["cpu_profile"]; print([(f["function"], f["file"], f["line"]) for f in c["top_self"] + c["top_total"]])' "$W/s.json")"
	pycheck "$W/s.json" '{h["words"]: h["count"] for h in a["histogram"] if h["count"]} == {"1": 3, "8": 20, "100+": 10} and len(a["histogram"]) == 20 and a["alloc_events"] == 2' ||
		fail "histogram"
	pycheck "$W/s.json" 'a["calls"] == sum(h["count"] for h in a["histogram"]) == 33 and a["bytes"] == 42240 and a["frees"] == 25 and a["freed_bytes"] == 21760 and a["samples"] == 30 and a["calls_per_s"] > 0' ||
		fail "alloc counts"
	pycheck "$W/s.json" '[x["function"] for x in a["sites"]] == ["prof_alloc_big", "prof_alloc_small"] and abs(a["sites"][0]["est_bytes"] - est(4096, 10)) < 0.01 and abs(a["sites"][1]["rel_error"] - math.sqrt(math.exp(-64 / 1024) / 20)) < 0.001 and abs(a["sites"][0]["rel_error"] - math.sqrt(math.exp(-4096 / 1024) / 10)) < 0.001' ||
		fail "sites"
	pycheck "$W/s.json" 'len(a["live"]) == 1 and a["live"][0]["samples"] == 5 and a["live"][0]["sampled_bytes"] == 5 * 4096 and a["live"][0]["stack"][0].startswith("prof_alloc_big (") and "profprog.c:" in a["live"][0]["stack"][0] and abs(a["live_est_bytes"] - est(4096, 5)) < 0.01' ||
		fail "leak candidates"
	python3 "$HERE/summary_schema.py" "$DOC" "$W/s.json" >"$W/schema.out" ||
		fail "schema: $(cat "$W/schema.out")"
	"$RR" -f summary --span app.hot "$F" >"$W/s.txt" || fail "summary: exit $?"
	grep -q "60 samples, 0.600 s CPU, inside span app.hot (40 outside)" "$W/s.txt" ||
		fail "text summary with --span: $(grep 'CPU profile' "$W/s.txt")"
	"$RR" -f summary "$F" >"$W/s.txt" || fail "summary: exit $?"
	grep -Eq "^ +60 +60\.00%  prof_leaf_a \(.*tests/reader/profprog\.c:${la:-0}\)$" "$W/s.txt" ||
		fail "text summary: prof_leaf_a (profprog.c:$la): $(grep prof_leaf_a "$W/s.txt")"
	grep -q "still live at the end (leak candidates): 1 stack" "$W/s.txt" ||
		fail "no leak candidates in the text summary"
}

test_no_profile() {
	begin "a file without profiler records: no CPU section, empty profile, warning"
	mkdir -p "$W/plain"
	(cd "$W/plain" && OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		OCAML_RUNTIME_EVENTS_DIR="$W/plain" "$PROG") || fail "profprog: $?"
	"$RR" -f summary-json -o "$W/p.json" "$W/plain" || fail "exit $?"
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"][0]; sys.exit(0 if p["cpu_profile"] is None and p["alloc_profile"]["samples"] == 0 and p["alloc_profile"]["alloc_events"] == 2 else 1)' "$W/p.json" ||
		fail "sections"
	"$RR" -f folded -o "$W/p.folded" "$W/plain" 2>"$W/p.err" || fail "folded: exit $?"
	[ ! -s "$W/p.folded" ] && grep -q "warning: no allocation" "$W/p.err" ||
		fail "folded of nothing"
}

test_hostile() {
	begin "malformed records (wrong version, nframes past the payload, short) are skipped and counted"
	"$RR" -f summary-json -o "$W/h.json" "$FH" || fail "exit $?"
	pycheck "$W/h.json" 'c["malformed"] == 3 and a["malformed"] == 2 and c["samples"] == 100 and a["samples"] == 30 and len(a["live"]) == 1' ||
		fail "counts"
	"$RR" -f folded -o "$W/h.folded" "$FH" 2>"$W/h.err" || fail "folded: exit $?"
	folded_check "$W/h.folded" 's == {"prof_work;prof_mid;prof_leaf_a": 60, "prof_work;prof_mid;prof_leaf_b": 10, "prof_work_b;prof_leaf_b": 30}' ||
		fail "the profile changed"
	grep -q "5 malformed profiler records skipped" "$W/h.err" || fail "no warning: $(cat "$W/h.err")"
	for f in pprof flamegraph summary; do
		"$RR" -f $f -o "$W/h.$f" "$FH" 2>/dev/null || fail "$f: exit $?"
	done
}

test_garbage() {
	begin "records of random bytes: every format reads them, exit 0"
	FG=$(run_prog "$W/garbage" garbage) || return
	for f in folded pprof flamegraph summary summary-json; do
		"$RR" -f $f -o "$W/g.$f" "$FG" 2>"$W/g.err" || fail "$f: exit $?: $(cat "$W/g.err")"
		"$RR" -f $f --profile=inuse -o "$W/g.$f" "$FG" 2>"$W/g.err" || fail "$f inuse: exit $?"
	done
	pycheck "$W/g.summary-json" 'p["lost_words"] == 0 and c["malformed"] > 0 and a["malformed"] > 0 and c["samples"] >= 100' ||
		fail "malformed not counted"
	python3 "$HERE/summary_schema.py" "$DOC" "$W/g.summary-json" >"$W/schema.out" ||
		fail "schema: $(cat "$W/schema.out")"
}

# ---- pprof -------------------------------------------------------------------

have_go() {
	command -v go >/dev/null 2>&1 && return 0
	echo "   skipped: go (Debian's golang-go) is not installed"
	return 1
}

# gotop FILE ARGS...: go tool pprof -top, in an empty HOME (its cache)
gotop() {
	f=$1
	shift
	(cd "$W" && HOME=$W GOFLAGS= GOTOOLCHAIN=local go tool pprof -top "$@" "$f") 2>"$W/go.err"
}

test_pprof_cpu() {
	begin "pprof: go tool pprof -top reads the CPU profile: leaf shares 60 % and 40 %"
	"$RR" -f pprof -o "$W/cpu.pb.gz" "$F" || fail "exit $?"
	gzip -t "$W/cpu.pb.gz" || fail "not gzip"
	have_go || return 0
	gotop "$W/cpu.pb.gz" >"$W/cpu.top" || fail "pprof: $(cat "$W/go.err")"
	grep -q "Type: cpu" "$W/cpu.top" && grep -q "Total samples = 1000ms" "$W/cpu.top" ||
		fail "header: $(head -5 "$W/cpu.top")"
	grep -Eq '^ +600ms 60\.00% .* prof_leaf_a$' "$W/cpu.top" &&
		grep -Eq '^ +400ms 40\.00% .* prof_leaf_b$' "$W/cpu.top" &&
		grep -Eq ' 700ms 70\.00%  prof_mid$' "$W/cpu.top" ||
		fail "top: $(cat "$W/cpu.top")"
	gotop "$W/cpu.pb.gz" -sample_index=samples >"$W/cnt.top" || fail "samples index"
	grep -Eq '^ +60 60\.00% .* prof_leaf_a$' "$W/cnt.top" || fail "samples: $(cat "$W/cnt.top")"
	gotop "$W/cpu.pb.gz" -tagfocus=span=app.inner -sample_index=samples >"$W/tag.top" ||
		fail "tagfocus"
	grep -Eq '^ +20 +20\.00% .* prof_leaf_a$' "$W/tag.top" || fail "span label: $(cat "$W/tag.top")"
}

test_pprof_heap() {
	begin "pprof --profile=alloc: alloc_space/objects, inuse_space/objects"
	"$RR" -f pprof --profile=alloc -o "$W/heap.pb.gz" "$F" || fail "exit $?"
	have_go || return 0
	gotop "$W/heap.pb.gz" -sample_index=alloc_space >"$W/as.top" || fail "$(cat "$W/go.err")"
	grep -q "Type: alloc_space" "$W/as.top" || fail "type: $(head -4 "$W/as.top")"
	# big: 41724 B of 62851 (66.39 %), small 33.61 %
	grep -Eq ' 66\.39% .* prof_alloc_big$' "$W/as.top" &&
		grep -Eq ' 33\.61% .* prof_alloc_small$' "$W/as.top" || fail "alloc_space: $(cat "$W/as.top")"
	gotop "$W/heap.pb.gz" -sample_index=inuse_space >"$W/is.top" || fail "$(cat "$W/go.err")"
	grep -Eq ' 100% .* prof_alloc_big$' "$W/is.top" && ! grep -q prof_alloc_small "$W/is.top" ||
		fail "inuse_space: $(cat "$W/is.top")"
	gotop "$W/heap.pb.gz" -sample_index=alloc_objects >"$W/ao.top" || fail "$(cat "$W/go.err")"
	grep -Eq '^ +330 .* prof_alloc_small$' "$W/ao.top" || fail "alloc_objects: $(cat "$W/ao.top")"
}

# ---- flamegraph ------------------------------------------------------------------

CHROMIUM=
for c in chromium chromium-browser; do
	command -v $c >/dev/null 2>&1 && CHROMIUM=$c && break
done

# dom URL: the DOM after the page's script ran
dom() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --user-data-dir="$W/chromium" \
		--dump-dom "$1" 2>/dev/null
}

test_flamegraph() {
	begin "flamegraph: headless chromium renders it; frames add up to the samples"
	"$RR" -f flamegraph -o "$W/f.svg" "$F" || fail "exit $?"
	python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$W/f.svg" ||
		fail "not well-formed XML"
	if grep -Eq 'https?://[^"]*\.(js|css)|<script[^>]*src=' "$W/f.svg"; then
		fail "the SVG loads something from elsewhere"
	fi
	if [ -z "$CHROMIUM" ]; then
		echo "   skipped: chromium is not installed"
		return 0
	fi
	dom "file://$W/f.svg" >"$W/f.dom" || fail "chromium: exit $?"
	# frames: the distinct stack prefixes of the folded profile, each
	# drawn once (plus "all"), children within their parent, the first
	# level filling the root's width, no text of ours but the frames'
	python3 - "$W/cpu.folded" "$W/f.dom" >"$W/f.check" 2>&1 <<'PY' || fail "frames: $(cat "$W/f.check")"
import re, sys
pre = set()
for l in open(sys.argv[1]):
    fr = l.rsplit(" ", 1)[0].split(";")
    pre.update(";".join(fr[:i + 1]) for i in range(len(fr)))
dom = open(sys.argv[2]).read()
g = re.findall(r'<g class="f" data-v="(\d+)" data-d="(\d+)"><title>([^<]*)</title><rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', dom)
assert len(g) == len(pre) + 1, (len(g), len(pre))
root = [x for x in g if x[1] == "0"]
assert len(root) == 1 and root[0][0] == "100", root
w1 = sum(float(x[4]) + 0.5 for x in g if x[1] == "1")
assert abs(w1 - (float(root[0][4]) + 0.5)) < 1.0, (w1, root)
names = {p.rsplit(";", 1)[-1] for p in pre}
titles = {t.split(" (")[0] for _, _, t, _, _ in g}
assert names <= titles, names - titles
assert "rte-check" not in dom and "width_ratio" not in dom
PY
	dom "file://$W/f.svg?s=prof_leaf_a" >"$W/s.dom" || fail "chromium: exit $?"
	grep -q '<text id="matched"[^>]*>Matched: 60.00%<' "$W/s.dom" ||
		fail "search: $(grep -o 'id="matched"[^<]*' "$W/s.dom")"
}

# ---- chrome -------------------------------------------------------------------

test_chrome() {
	begin "chrome: each rte.sample an instant on its writer's track, named by its leaf"
	"$RR" -f chrome -o "$W/c.json" "$F" || fail "exit $?"
	python3 "$HERE/chrome_check.py" "$W/c.json" >/dev/null || fail "chrome_check: $(python3 "$HERE/chrome_check.py" "$W/c.json")"
	"$RR" -f jsonl -o "$W/c.jsonl" "$F" || fail "jsonl: exit $?"
	python3 - "$W/c.json" "$W/c.jsonl" <<'PY' || fail "samples"
import json, struct, sys
from collections import Counter
ev = json.load(open(sys.argv[1]))["traceEvents"]
raw = [json.loads(l) for l in open(sys.argv[2])]
# the trace's samples: (tid written in the record, cpu_ns)
want = Counter()
for r in raw:
    if r.get("event") == "rte.sample":
        b = bytes.fromhex(r["hex"])
        _, _, _, cpu, tid = struct.unpack_from("<HHIQi", b)
        want[(tid, cpu)] += 1
got = [e for e in ev if e.get("cat") == "sample"]
err = []
if sum(want.values()) != 100 or len(got) != 100:
    err.append("%d samples in the trace, %d instants" % (sum(want.values()), len(got)))
if Counter((e["tid"], e["args"]["cpu_ns"]) for e in got) != want:
    err.append("tids/cpu_ns differ")
for e in got:
    if e["ph"] != "i" or e["args"]["stack"][0] != e["name"] or len(e["args"]["stack"]) > 64:
        err.append("bad instant %r" % e)
        break
per = Counter((e["tid"], e["name"]) for e in got)
hot = [e["tid"] for e in ev if e.get("ph") == "X" and e.get("name") == "app.hot"]
main = hot[0] if hot else None
want_per = {(main, "prof_leaf_a"): 60, (main, "prof_leaf_b"): 10}
other = [t for t, _ in per if t != main]
if other:
    want_per[(other[0], "prof_leaf_b")] = 30
if per != Counter(want_per):
    err.append("per track and leaf: %r, want %r" % (per, want_per))
if not any("prof_work" in e["args"]["stack"][1:] for e in got):
    err.append("no prof_work in the stacks")
if err:
    print("; ".join(err), file=sys.stderr)
sys.exit(1 if err else 0)
PY
}

all="test_folded_cpu test_folded_alloc test_span test_by_thread test_two_procs test_summary_json
test_no_profile test_hostile test_garbage test_pprof_cpu test_pprof_heap test_flamegraph test_chrome"
for t in ${*:-$all}; do
	$t
done
echo "profile: $tests tests, $fails failures"
[ "$fails" -eq 0 ]
