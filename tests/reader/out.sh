#!/bin/sh
# tests/reader/out.sh [TEST...] - rte-read's output formats (summary,
# summary-json, text, chrome) on real files: the OCaml 5.2 fixtures, and
# real programs (tests/reader/outprog.c, sh, env) run under librte.so by
# rte-run. Each test prints "== out: ..." and its failures; the run fails
# if any did. Arguments: the tests to run; none: all.
#
# Environment: RTE_BUILD (the absolute build folder; set by mk/reader.mk).
set -u
RTE_TEST_NAME=out
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.sh"
RUN=$B/rte-run
PROG=$B/tests/reader/outprog
FIX=$(cd "$(dirname "$0")/../fixtures/ocaml-5.2" && pwd)

# pycheck FILE EXPR: python3 EXPR over d (the JSON document in FILE) is
# true; else the test fails with the expression.
pycheck() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def proc(d, pid=None):
    return d["processes"][0] if pid is None else [p for p in d["processes"] if p["pid"] == pid][0]
def entry(p, fam, name):
    return [e for e in p[fam] if e["name"] == name][0]
def ev(d, **kw):
    return [e for e in d["traceEvents"] if all(e.get(k) == v for k, v in kw.items())]
ok = eval("(" + sys.argv[2] + ")")
if not ok:
    print("check failed: " + sys.argv[2], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

gunzip_fixture() { # SCENARIO: its files into $W/fix/SCENARIO
	mkdir -p "$W/fix/$1"
	for gz in "$FIX/$1"/*.events.gz; do
		gzip -dc "$gz" >"$W/fix/$1/$(basename "$gz" .gz)"
	done
}

# ---- item 1: losses never move the time range ----------------------------------

test_wall_wrap() {
	begin "a ring wrapped past ring_start: wall time is the events' span, not since 0"
	gunzip_fixture wrap
	"$RR" -f summary-json -o "$W/wrap.json" "$W/fix/wrap" || fail "summary-json: exit $?"
	# The fixture's events span about 407 us.
	pycheck "$W/wrap.json" 'proc(d)["wall_ns"] < 1000000 and proc(d)["lost_words"] > 0' ||
		fail "wall time of the wrapped fixture"
	"$RR" -f summary "$W/fix/wrap" >"$W/wrap.txt" || fail "summary: exit $?"
	grep -Eq '^  wall time +[0-9.]+us ' "$W/wrap.txt" || fail "text wall time: $(grep wall "$W/wrap.txt")"
	# app.work fills most of the fixture's time
	grep -Eq '^  app\.work +47 .* [5-9][0-9]\.[0-9]%' "$W/wrap.txt" ||
		fail "app.work's %wall: $(grep app.work "$W/wrap.txt")"
	# The same through the shim: a tiny ring flooded with spans.
	t0=$(date +%s%N)
	OCAMLRUNPARAM=e=8 "$RUN" -q -d "$W/flood" -- "$PROG" spans 5000 || fail "outprog spans: exit $?"
	t1=$(date +%s%N)
	"$RR" -f summary-json -o "$W/flood.json" "$W/flood" || fail "summary-json flood: exit $?"
	# (a property, not a timing: the trace cannot last longer than the run)
	pycheck "$W/flood.json" "proc(d)['lost_words'] > 0 and proc(d)['wall_ns'] <= $t1 - $t0" ||
		fail "the flooded ring's wall time is longer than the whole run"
}

# ---- item 8: the text footer counts events, not loss records -------------------

test_text_footer() {
	begin "text footer: as many events as the summary, loss records not counted"
	gunzip_fixture wrap
	"$RR" -f text "$W/fix/wrap" >"$W/wrap.text" || fail "text: exit $?"
	"$RR" -f summary-json -o "$W/wrap2.json" "$W/fix/wrap" || fail "summary-json: exit $?"
	n=$(sed -n 's/^# \([0-9]*\) events, .*/\1/p' "$W/wrap.text")
	pycheck "$W/wrap2.json" "d['events'] == ${n:-0}" || fail "footer says '$n' events"
}

# ---- item 2: "last" is the latest in time across rings -------------------------

test_last_value() {
	begin "counters and ints: last = latest timestamp across rings; per-ring lasts listed"
	gunzip_fixture domains
	for how in fast filtered; do
		set -- ; [ $how = filtered ] && set -- -x 'no such event*'
		"$RR" -f summary-json "$@" -o "$W/dom.json" "$W/fix/domains" || fail "$how: exit $?"
		pycheck "$W/dom.json" 'entry(proc(d), "user_ints", "app.count")["last"] == 3993 and
entry(proc(d), "counters", "major_heap_pool_words")["last"] == 114688' ||
			fail "$how path: the domains fixture's last values"
	done
	"$RR" -f summary "$W/fix/domains" >"$W/dom.txt" || fail "summary: exit $?"
	grep -Eq '^  app\.count +125 +3993 ' "$W/dom.txt" || fail "text: app.count's last"
	grep -q 'last (latest time)' "$W/dom.txt" || fail "text: the header does not say what last is"
	grep -Eq '^  app\.count +0 +3 +38993$' "$W/dom.txt" || fail "text: ring 3's own last value"
	"$RUN" -q -d "$W/last" -- "$PROG" last || fail "outprog last: exit $?"
	"$RR" -f summary-json -o "$W/last.json" "$W/last" || fail "summary-json: exit $?"
	pycheck "$W/last.json" 'entry(proc(d), "user_ints", "app.v")["last"] == 222 and
entry(proc(d), "counters", "major_heap_pool_words")["last"] == 9' ||
		fail "a thread's value (ring 1) read after the main thread's later one (ring 0)"
	pycheck "$W/last.json" '{r["ring"]: [v["last"] for v in r["last_values"] if v["name"] == "app.v"]
for r in proc(d)["rings"]} == {0: [222], 1: [111]}' || fail "per-ring last values in summary-json"
}

# ---- item 3: interleaved spans, unfinished spans --------------------------------

test_spans_by_name() {
	begin "A begin, B begin, A end, B end: both complete; unfinished spans counted and drawn"
	"$RUN" -q -d "$W/il" -- "$PROG" interleave 18 || fail "outprog interleave: exit $?"
	"$RR" -f summary-json -o "$W/il.json" "$W/il" || fail "summary-json: exit $?"
	pycheck "$W/il.json" 'all(entry(proc(d), "spans", n)["count"] == 18 and
entry(proc(d), "spans", n)["unmatched_ends"] == 0 and entry(proc(d), "spans", n)["unfinished"] == 0
for n in ("app.A", "app.B"))' || fail "app.A and app.B are not 18 complete spans each"
	pycheck "$W/il.json" 'all(entry(proc(d), "spans", n)["unfinished"] == 1
for n in ("app.open", "app.hang", "app.tail"))' || fail "unfinished spans not counted in summary-json"
	"$RR" -f summary "$W/il" >"$W/il.txt" || fail "summary: exit $?"
	grep -Eq '^  app\.B +18 .*%$' "$W/il.txt" || fail "summary text: app.B row: $(grep app.B "$W/il.txt")"
	grep -Eq '^  app\.open .*\(1 unfinished\)$' "$W/il.txt" || fail "summary text: app.open not shown unfinished"
	"$RR" "$W/il" >"$W/il.text" || fail "text: exit $?"
	grep -q '^# 3 unfinished spans (begun, never ended)$' "$W/il.text" ||
		fail "text: no unfinished count: $(tail -3 "$W/il.text")"
	grep -q 'end (begin not seen)' "$W/il.text" && fail "text: an end without its begin"
	"$RR" -f chrome -o "$W/il.chrome" "$W/il" || fail "chrome: exit $?"
	pycheck "$W/il.chrome" 'len(ev(d, ph="X", name="app.B")) == 18 and
not any(e.get("args", {}).get("unfinished") for e in ev(d, ph="X", name="app.B"))' ||
		fail "chrome: app.B cut or flagged unfinished"
	pycheck "$W/il.chrome" 'all(len(ev(d, ph="X", name=n)) == 1 and ev(d, ph="X", name=n)[0]["args"]["unfinished"]
for n in ("app.open", "app.hang", "app.tail"))' || fail "chrome: unfinished spans not drawn and flagged"
	# app.hang's thread stays blocked while the process exits: its span
	# is drawn to the last event of its ring (its third app.after), not
	# to the end of the process.
	pycheck "$W/il.chrome" 'abs(ev(d, ph="X", name="app.hang")[0]["ts"] + ev(d, ph="X", name="app.hang")[0]["dur"]
- max(e["ts"] for e in d["traceEvents"] if e.get("tid") == ev(d, ph="X", name="app.hang")[0]["tid"]
and e.get("name") == "app.after")) < 0.002' || fail "chrome: app.hang not drawn to the end of its ring"
}

# ---- item 7: one name per track after exec -----------------------------------------

test_exec_names() {
	begin "after exec: one thread_name per track (sh → env → true), the process named so"
	"$RUN" -q -d "$W/ex" -- sh -c 'ls / >/dev/null; exec env true' || fail "rte-run: exit $?"
	"$RR" -f chrome -o "$W/ex.chrome" "$W/ex" || fail "chrome: exit $?"
	pycheck "$W/ex.chrome" 'len({(e["pid"], e["tid"]) for e in ev(d, ph="M", name="thread_name")}) ==
len(ev(d, ph="M", name="thread_name"))' || fail "several thread_name records for one track"
	pycheck "$W/ex.chrome" 'any(e["args"]["name"] == "sh \u2192 env \u2192 true (tid %d)" % e["tid"] and e["tid"] == e["pid"]
for e in ev(d, ph="M", name="thread_name"))' ||
		fail "the exec'ing thread's track is not 'sh → env → true (tid PID)'"
	# named by the command line, then its images (issue 24)
	pycheck "$W/ex.chrome" 'any(e["args"]["name"].endswith(": true (sh \u2192 env \u2192 true)") for e in ev(d, ph="M", name="process_name")) and
any(e["args"]["name"].endswith(": ls /") for e in ev(d, ph="M", name="process_name"))' ||
		fail "processes not named by their command lines and executables"
}

# ---- strings: UTF-8 as it is, every other byte as \udcXX ------------------------

test_utf8() {
	begin "argv and thread names: UTF-8 as it is in every JSON output, other bytes as \\udcXX, all read back exactly"
	python3 - "$RUN" "$RR" "$PROG" "$W/u" >"$W/u.err" 2>&1 <<'PY' || fail "$(head -20 "$W/u.err")"
import json, subprocess, sys
run, rr, prog, d = sys.argv[1:5]
# valid UTF-8 of 2, 3 and 4 bytes (the first and last of each length,
# and next to the surrogates), then each kind of byte that is not UTF-8
valid = ["ü-file.c".encode(), "€ \U0001d11e".encode(), b"\xc2\x80\xdf\xbf",
         b"\xe0\xa0\x80\xef\xbf\xbf\xed\x9f\xbf\xee\x80\x80", b"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"]
invalid = [b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf",  # overlong
           b"\xed\xa0\x80", b"\xed\xbf\xbf",                            # surrogates
           b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xfe\xff",       # past U+10FFFF
           b"\xe2\x82", b"x\xf0\x9f\x98", b"\xc3",                        # cut short
           b"\x80", b"\xbf\xbf",                                         # lone continuations
           b"ctl\x01\x1f\x7f \"q\" \\ \xc3\xbc\xc3"]
name = "ü-€-\U0001d11e".encode()  # 11 bytes: the kernel keeps 15
argv = [prog.encode(), b"renames", name] + valid + invalid
subprocess.run([run, "-q", "-d", d, "--"] + argv, check=True)
bad = []

def raw(s):
    # the bytes a string of ours stands for: \udcXX is byte XX
    return s.encode("utf-8", "surrogateescape")

def read(fmt):
    out = subprocess.run([rr, "-f", fmt, d], check=True, stdout=subprocess.PIPE).stdout
    # UTF-8 text (strict: no byte of a bad sequence passed through) ...
    text = out.decode("utf-8")
    # ... in which valid text is never escaped, bad bytes always are
    for v in valid + [name]:
        if v not in out:
            bad.append("%s: %r not as it is" % (fmt, v))
    if b"\\u00c3" in out or b"\\udcc0\\udcaf" not in out:
        bad.append("%s: bytes escaped as Latin-1, or not at all" % fmt)
    return text

for line in read("jsonl").splitlines():
    e = json.loads(line)
    if e.get("event") == "rte.proc" and not e["proc"].get("fork"):
        if [raw(a) for a in e["proc"]["argv"]] != argv:
            bad.append("jsonl argv: %r" % e["proc"]["argv"])
        break
else:
    bad.append("jsonl: no rte.proc")
s = json.loads(read("summary-json"))
if [raw(a) for a in s["tree"][0]["argv"]] != argv:
    bad.append("summary-json argv: %r" % s["tree"][0]["argv"])
if not any(raw(r["thread"]) == name for r in s["processes"][0]["rings"]):
    bad.append("summary-json thread: %r" % [r["thread"] for r in s["processes"][0]["rings"]])
c = json.loads(read("chrome"))["traceEvents"]
# the process named by its command line as the summary's tree shows it
# (UTF-8 as it is, other bytes as the text \\xNN); the thread by its names
pn = [raw(e["args"]["name"]) for e in c if e.get("ph") == "M" and e["name"] == "process_name"]
if not any(b" renames " + name + b" " + valid[0] + b" " in p and b" \\xc0\\xaf " in p for p in pn):
    bad.append("chrome process_name: %r" % pn)
tn = [raw(e["args"]["name"]) for e in c if e.get("ph") == "M" and e["name"] == "thread_name"]
if not any(t.endswith(b", " + name + b" (tid %d)" % e["tid"]) for t, e in
           zip(tn, [e for e in c if e.get("ph") == "M" and e["name"] == "thread_name"])):
    bad.append("chrome thread_name: %r" % tn)
# text: the argv of rte.proc, a JSON array
t = [l for l in read("text").splitlines() if "rte.proc" in l and " argv [" in l]
if not t or [raw(a) for a in json.loads(t[0][t[0].index(" argv [") + 6:])] != argv:
    bad.append("text argv: %r" % t[:1])
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

if [ $# -gt 0 ]; then
	for t in "$@"; do "$t"; done
else
	test_wall_wrap
	test_text_footer
	test_last_value
	test_spans_by_name
	test_exec_names
	test_utf8
fi
if [ $fails -ne 0 ]; then
	echo "out: $fails failure(s) in $tests tests" >&2
	exit 1
fi
echo "out: all $tests tests passed"
