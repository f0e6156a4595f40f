#!/bin/sh
# tests/reader/diff.sh BUILD - rte-read diff on real files: a run against
# itself changes nothing, ring files and their summary-json give the same
# figures, every figure is the summary-json's (recomputed here), the
# thresholds decide the exit status (0, 1), and bad input or usage is 2.
set -u
BUILD=${1:-build}
RR=$BUILD/rte-read
mkdir -p "$BUILD/tests/reader" && T=$(mktemp -d "$BUILD/tests/reader/diff.XXXXXX") || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
# status WANT CMD...: CMD exits WANT
status() {
	want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, expected $want: $(head -3 "$T/err")"
}

for v in ocaml-5.2 ocaml-5.4dev; do
	mkdir -p "$T/$v"
	gzip -dc tests/fixtures/$v/gc/*.events.gz >"$T/$v/run.events" || fail "gunzip $v"
	"$RR" -f summary-json "$T/$v" >"$T/$v.json" || fail "summary-json $v"
done
A=$T/ocaml-5.2 B=$T/ocaml-5.4dev

# the schema is versioned and documented: every fixture's summary-json
# follows doc/SUMMARY-JSON.md exactly
for d in tests/fixtures/ocaml-5.2/*/ tests/fixtures/ocaml-5.4dev/basic/; do
	s=$(basename "$d")
	mkdir -p "$T/sj/$s"
	for gz in "$d"*.events.gz; do gzip -dc "$gz" >"$T/sj/$s/$(basename "$gz" .gz)"; done
	"$RR" -f summary-json "$T/sj/$s" >"$T/sj/$s.json" 2>/dev/null || fail "summary-json $s"
done
python3 tests/reader/summary_schema.py doc/SUMMARY-JSON.md "$T"/sj/*.json "$T/ocaml-5.4dev.json" ||
	fail "summary-json does not follow doc/SUMMARY-JSON.md"
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['schema_version'] == 1" "$T/ocaml-5.2.json" ||
	fail "summary-json has no schema_version 1"

# several processes: the run's p50/p99 are those of every duration
# together (gen_ring pct: neither process's own, nor the largest of them),
# in summary-json's "run" and in diff; counts and totals summed
mkdir -p "$T/pct" && "$BUILD/tests/reader/gen_ring" pct "$T/pct" "$T/pct.truth" || fail "gen_ring pct"
"$RR" -f summary-json "$T/pct" >"$T/pct.json" || fail "summary-json of gen_ring pct"
status 0 "$RR" diff --format=json "$T/pct" "$T/pct.json"
python3 - "$T/pct.truth" "$T/pct.json" "$T/out" <<'PY' || fail "the run's percentiles are not those of every duration"
import json, math, sys
durs = sorted(json.load(open(sys.argv[1]))["app.req"])
doc, d = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
def q(p):
    return durs[max(1, math.ceil(p * len(durs))) - 1]
def near(got, want, what):
    assert abs(got - want) <= 0.004 * want, (what, got, want)
run = {e["name"]: e for e in doc["run"]["spans"]}["app.req"]
assert run["count"] == len(durs) and run["total_ns"] == sum(durs), run
assert run["max_ns"] == durs[-1] and run["min_ns"] == durs[0] and run["processes"] == 2, run
for k, p in (("p50_ns", .5), ("p90_ns", .9), ("p99_ns", .99), ("p999_ns", .999)):
    near(run[k], q(p), k)
# neither process's own percentile: the largest of them would be 5 ms
own = [e for p in doc["processes"] for e in p["spans"] if e["name"] == "app.req"]
assert len(own) == 2 and max(e["p99_ns"] for e in own) > 4 * run["p99_ns"], own
ent = {e["name"]: e for e in d["entries"]}["app.req"]
for f, want in (("count", len(durs)), ("total", sum(durs)), ("max", durs[-1])):
    assert ent[f]["base"] == want == ent[f]["new"], (f, ent[f], want)
for f, p in (("p50", .5), ("p99", .99)):
    near(ent[f]["base"], q(p), "diff " + f)
    assert ent[f]["base"] == ent[f]["new"] == run[f + "_ns"], (f, ent[f])
PY
ok "diff and summary-json's run: p50/p99 of every process's durations together"

# a run against itself, as a directory and as its summary-json: no change
status 0 "$RR" diff --format=json "$A" "$T/ocaml-5.2.json"
python3 - "$T/out" <<'PY' || fail "a run against itself changed"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["entries"], d
for e in d["entries"]:
    for f in ("count", "total", "p50", "p99", "max"):
        assert e[f]["base"] == e[f]["new"] and e[f]["change_pct"] in (0, None), e
for g in d["gc"].values():
    assert g["base"] == g["new"], g
PY
ok "a run against itself (directory vs summary-json) changes nothing"

# every figure is that of the two summaries, recomputed here
status 0 "$RR" diff --format=json "$A" "$B"
python3 - "$T/out" "$T/ocaml-5.2.json" "$T/ocaml-5.4dev.json" <<'PY' || fail "diff figures differ from the summaries"
import json, sys
d = json.load(open(sys.argv[1]))
def fold(path):
    t, gc, cpu = {}, 0, 0
    doc = json.load(open(path))
    for p in doc["processes"]:
        for kind, key in (("phase", "phases"), ("span", "spans")):
            for e in p[key]:
                x = t.setdefault((kind, e["name"]), {"count": 0, "total": 0, "p50": 0, "p99": 0, "max": 0})
                x["count"] += e["count"]; x["total"] += e["total_ns"]
                x["max"] = max(x["max"], e["max_ns"])
        if p.get("gc"):
            gc += p["gc"]["gc_ns"]; cpu += p["gc"]["cpu_ns"]
    # the percentiles are the run's own (checked against every duration
    # below, with gen_ring pct)
    for kind, key in (("phase", "phases"), ("span", "spans")):
        for e in doc["run"][key]:
            for f in ("p50", "p99"):
                t[(kind, e["name"])][f] = e[f + "_ns"]
    return t, 100.0 * gc / cpu
a, ga = fold(sys.argv[2])
b, gb = fold(sys.argv[3])
names = set(a) | set(b)
got = {(e["kind"], e["name"]): e for e in d["entries"]}
assert set(got) == names, (set(got) ^ names)
zero = {"count": 0, "total": 0, "p50": 0, "p99": 0, "max": 0}
for k in names:
    for f in ("count", "total", "p50", "p99", "max"):
        base, new = a.get(k, zero)[f], b.get(k, zero)[f]
        assert got[k][f]["base"] == base and got[k][f]["new"] == new, (k, f, got[k][f], base, new)
        if base:
            assert abs(got[k][f]["change_pct"] - 100.0 * (new - base) / base) < 1e-9
assert abs(d["gc"]["gc_pct"]["base"] - ga) < 1e-6 and abs(d["gc"]["gc_pct"]["new"] - gb) < 1e-6
PY
ok "diff figures are the summaries' (count and total summed, max the longest, p50/p99 the run's)"

# the text: durations with their units (ns, us, ms, s, as the rest of
# rte-read prints them), counts as integers, each the summaries' figure
status 0 "$RR" diff "$A" "$B"
python3 - "$T/out" "$T/ocaml-5.2.json" "$T/ocaml-5.4dev.json" <<'PY' || fail "diff text: figures without units or wrong"
import json, re, sys
scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
keys = {"total": "total_ns", "p50": "p50_ns", "p99": "p99_ns", "max": "max_ns"}
def figs(path):
    out = {}
    doc = json.load(open(path))
    for p in doc["processes"]:
        for e in p["phases"] + p["spans"]:
            f = out.setdefault(e["name"], {"count": 0, "total": 0, "p50": 0, "p99": 0, "max": 0})
            f["count"] += e["count"]
            f["total"] += e["total_ns"]
            f["max"] = max(f["max"], e["max_ns"])
    for e in doc["run"]["phases"] + doc["run"]["spans"]:
        for k in ("p50", "p99"):
            out[e["name"]][k] = e[keys[k]]
    return out
want = [figs(f) for f in sys.argv[2:]]
name, seen, bad = None, 0, []
for line in open(sys.argv[1]):
    m = re.match(r"  (\S.{0,31}?)?\s+(count|total|p50|p99|max)\s+(\S+)\s+(\S+)\s", line)
    if not m:
        continue
    if m.group(2) == "count":
        name = m.group(1).strip()
    for side, txt in ((0, m.group(3)), (1, m.group(4))):
        w = want[side].get(name, {}).get(m.group(2), 0)
        if m.group(2) == "count":
            ok = txt.isdigit() and int(txt) == w
        else:
            u = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", txt)
            ok = u is not None and abs(float(u.group(1)) * scale[u.group(2)] - w) <= max(w * 0.005, 1)
        seen += 1
        if not ok:
            bad.append((name, m.group(2), side, txt, w))
if bad or seen < 20:
    sys.exit("bad %r, %d figures seen" % (bad[:5], seen))
PY
ok "diff text: durations with units, every figure the summaries'"

# thresholds: the exit status
p99a=$(python3 -c "import json,sys; print([e['p99_ns'] for e in json.load(open(sys.argv[1]))['processes'][0]['phases'] if e['name']=='minor'][0])" "$T/ocaml-5.2.json")
p99b=$(python3 -c "import json,sys; print([e['p99_ns'] for e in json.load(open(sys.argv[1]))['processes'][0]['phases'] if e['name']=='minor'][0])" "$T/ocaml-5.4dev.json")
up=$(python3 -c "print('>' if $p99b > $p99a else '<')")
status 1 "$RR" diff --fail-if "p99(minor) $up +0%" "$A" "$B"
grep -q "CROSSED" "$T/out" || fail "text does not say CROSSED"
status 0 "$RR" diff --fail-if "p99(minor) $up +0%" "$A" "$A"
status 0 "$RR" diff --fail-if 'count(minor) > +1000%' --fail-if 'gc_pct > +50' "$A" "$B"
status 1 "$RR" diff --fail-if 'count(minor) > +1000%' --fail-if 'max(minor) >= -100%' "$A" "$B"
status 1 "$RR" diff --fail-if 'total(minor)>-1s' "$T/ocaml-5.2.json" "$T/ocaml-5.4dev.json"
status 0 "$RR" diff --fail-if 'total(minor) > +1000s' "$T/ocaml-5.2.json" "$T/ocaml-5.4dev.json"
# an absolute change of a duration is printed as one (the limit's kind)
python3 - "$T/out" "$T/ocaml-5.2.json" "$T/ocaml-5.4dev.json" <<'PY' || fail "absolute change not a duration: $(grep change "$T/out")"
import json, re, sys
tot = [sum(e["total_ns"] for p in json.load(open(f))["processes"] for e in p["phases"] if e["name"] == "minor")
       for f in sys.argv[2:]]
line = [l for l in open(sys.argv[1]) if l.startswith("total(minor)")][0]
m = re.search(r"change ([+-])([0-9.]+)(ns|us|ms|s):", line)
scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
d = tot[1] - tot[0]
sys.exit(not (m and (m.group(1) == "-") == (d < 0) and
              abs(float(m.group(2)) * scale[m.group(3)] - abs(d)) <= max(abs(d) * 0.01, 1)))
PY
ok "--fail-if: exit 1 when a threshold is crossed, 0 when none is"

# usage and input errors: 2, one message
status 2 "$RR" diff "$A"
status 2 "$RR" diff --fail-if 'p99(minor) > 10%' "$A" "$B"
status 2 "$RR" diff --fail-if 'p42(minor) > +10%' "$A" "$B"
status 2 "$RR" diff --fail-if 'p99(minor) > +10parsecs' "$A" "$B"
status 2 "$RR" diff --fail-if 'p99(no.such.span) > +10%' "$A" "$B"
grep -q "no such figure" "$T/err" || fail "unknown name: $(cat "$T/err")"
status 2 "$RR" diff --format=xml "$A" "$B"
status 2 "$RR" diff --bogus "$A" "$B"
[ "$(wc -l <"$T/err")" = 1 ] && grep -q "^rte-read diff: unrecognized option '--bogus'" "$T/err" ||
	fail "a bad option is not one line: $(cat "$T/err")"
status 2 "$RR" diff "$A"
[ "$(wc -l <"$T/err")" = 1 ] || fail "a usage error is not one line: $(cat "$T/err")"
status 2 "$RR" diff "$T/nonexistent" "$B"
printf '{"processes":[{"phases":[{"name":"x","count":1}' >"$T/cut.json"
status 2 "$RR" diff "$T/cut.json" "$B"
grep -q "not summary-json: offset" "$T/err" || fail "truncated JSON: $(cat "$T/err")"
printf '{"processes":[{"phases":[{"name":"\\ud800\\u00e9\\"","count":1e400}]}]}' >"$T/odd.json"
status 0 "$RR" diff "$T/odd.json" "$T/odd.json"
# A name as summary-json writes it (UTF-8 as it is, a byte that is not
# as \udcXX) is read back to its bytes and written again the same.
printf '{"processes":[{"spans":[{"name":"\\udcc3\\u00e9\303\274","count":1}]}]}' >"$T/utf8.json"
status 0 "$RR" diff --format=json "$T/utf8.json" "$T/utf8.json"
grep -qF "$(printf '"name":"\\udcc3\303\251\303\274"')" "$T/out" || fail "a name's bytes not kept: $(cat "$T/out")"
python3 -c 'print("[" * 100000)' >"$T/deep.json"
printf '{"processes":%s' "$(cat "$T/deep.json")" >"$T/deep2.json"
status 2 "$RR" diff "$T/deep2.json" "$B"
grep -q "nested too deeply" "$T/err" || fail "deep JSON: $(cat "$T/err")"
ok "usage errors, unreadable and hostile inputs exit 2 with a reason"

if [ "$FAILS" -ne 0 ]; then
	echo "diff tests: $FAILS failure(s)" >&2
	exit 1
fi
rm -rf "$T"
echo "diff tests: all passed"
