#!/usr/bin/env python3
"""gcstats_check.py JSONL GCJSON - check every figure of
`rte-read --format=gc-stats-json` against a computation of its own from
`rte-read --format=jsonl` of the same input (doc/GC-STATS.md defines the
figures). One file per process is assumed (rings are keyed by pid).

gcstats_check.py --expected PID=EXPECTED.jsonl ... GCJSON - the same,
from the events OCaml's own consumer decoded (the fixtures'
PID.expected.jsonl, which have no "pid" field): rte's decoding takes no
part in the figures expected.

Exact figures must be equal; percentiles must be within the histogram's
stated error (0.4 %, one rank either side for rounding of the rank);
the count above p99.9 within the bucket around p99.9. Exit 0 if all
agree, 1 with one line per difference otherwise.
"""
import json
import math
import sys
from collections import defaultdict

PAUSE = {"major", "stw_leader", "interrupt_remote"}
WAIT = {"domain_condition_wait"}
PCTS = [10, 25, 50, 60, 70, 75, 80, 85, 90, 95, 96, 97, 98, 99,
        99.9, 99.99, 99.999, 99.9999, 100]


class Ring:
    def __init__(self):
        self.first = self.last = None
        self.open_ts = None       # a lifetime began here
        self.seg_ts = None        # events since a close, start unseen
        self.life = 0
        self.life_lb = False
        self.ended = False        # an end seen, no start or loss since
        self.stack = []           # open phase names
        self.pause_ts = self.wait_ts = None
        self.pauses = []
        self.wait_ns = self.waits = 0
        self.bytes = defaultdict(int)
        self.major_words = 0
        self.has_major_words = False
        self.coll = defaultdict(int)
        self.lost = 0
        self.runtime = False


def close_life(r, ts, exact):
    if r.open_ts is not None:
        r.life += max(0, ts - r.open_ts)
        r.life_lb |= not exact
    elif r.seg_ts is not None:
        r.life += max(0, ts - r.seg_ts)
        r.life_lb = True
    r.open_ts = r.seg_ts = None
    # before the next start nothing is in a lifetime (OCaml 5.3 writes
    # counters after domain_terminate), unless a loss may hide that start
    r.ended = exact


def inside(stack, names):
    return any(n in names for n in stack)


def feed(r, ring, e):
    k = e["kind"]
    if k == "lost":
        r.lost += e["words"]
        r.stack = []
        r.ended = False
        return
    if k not in ("begin", "end", "counter", "lifecycle", "alloc"):
        return  # user events take no part in any GC figure
    ts = e["ts"]
    r.first = ts if r.first is None else min(r.first, ts)
    r.last = ts if r.last is None else max(r.last, ts)
    if r.open_ts is None and r.seg_ts is None and not r.ended and k != "lifecycle":
        r.seg_ts = ts
    if k == "lifecycle":
        if e["name"] in ("ring_start", "domain_spawn"):
            if r.open_ts is not None or r.seg_ts is not None:
                close_life(r, r.last, False)
            r.open_ts = ts
            r.ended = False
        elif e["name"] in ("ring_stop", "domain_terminate"):
            close_life(r, ts, True)
    elif k == "begin":
        r.runtime = True
        n = e["name"]
        if n in PAUSE and not inside(r.stack, PAUSE):
            r.pause_ts = ts
        if n in WAIT and not inside(r.stack, WAIT):
            r.wait_ts = ts
        r.stack.append(n)
        if ring == 0:
            if n == "minor":
                r.coll["minor"] += 1
            elif n == "major_gc_stw":
                r.coll["major"] += 1
            elif n in ("explicit_gc_major", "explicit_gc_full_major"):
                r.coll["forced_major"] += 1
            elif n == "explicit_gc_compact":
                r.coll["compactions"] += 1
    elif k == "end":
        r.runtime = True
        n = e["name"]
        if n not in r.stack:
            return
        i = len(r.stack) - 1 - r.stack[::-1].index(n)
        was_p, was_w = inside(r.stack, PAUSE), inside(r.stack, WAIT)
        del r.stack[i:]
        if was_p and not inside(r.stack, PAUSE):
            r.pauses.append(max(0, ts - r.pause_ts))
        if was_w and not inside(r.stack, WAIT):
            r.wait_ns += max(0, ts - r.wait_ts)
            r.waits += 1
    elif k == "counter":
        n = e["name"]
        if n in ("minor_allocated", "minor_promoted"):
            r.bytes[n] += e["value"]
            r.runtime = True
        elif n == "major_allocated_words":
            r.major_words += e["value"]
            r.has_major_words = True
            r.runtime = True


def life_of(r):
    t, lb = r.life, r.life_lb or r.lost > 0
    if r.open_ts is not None and r.last is not None and r.last > r.open_ts:
        t, lb = t + r.last - r.open_ts, True
    elif r.seg_ts is not None and r.last is not None and r.last > r.seg_ts:
        t, lb = t + r.last - r.seg_ts, True
    return t, lb


def expect_for(rings, lc):
    out = {}
    doms = sorted(rings.items())
    pauses = [p for _, r in doms for p in r.pauses]
    cpu = sum(life_of(r)[0] for _, r in doms)
    lost = sum(r.lost for _, r in doms)
    out["cpu_ns"] = cpu
    out["cpu_lower_bound"] = any(life_of(r)[1] for _, r in doms)
    out["gc_ns"] = sum(sum(r.pauses) for _, r in doms)
    out["gc_lower_bound"] = lost > 0
    out["lost_words"] = lost
    out["waits"] = {"count": sum(r.waits for _, r in doms),
                    "ns": sum(r.wait_ns for _, r in doms)}
    if lc["start"] is not None and lc["stop"] is not None:
        out["wall_ns"], out["wall_lower_bound"] = lc["stop"] - lc["start"], False
    else:
        out["wall_ns"], out["wall_lower_bound"] = lc["last"] - lc["first"], True
    r0 = rings.get(0)
    out["collections"] = {k: (r0.coll[k] if r0 else 0)
                          for k in ("minor", "major", "forced_major", "compactions")}
    out["collections"]["lower_bound"] = bool(r0 and r0.lost)
    mw = sum(r.bytes["minor_allocated"] // 8 for _, r in doms)
    pw = sum(r.bytes["minor_promoted"] // 8 for _, r in doms)
    jw = sum(r.major_words for _, r in doms)
    out["alloc"] = (mw, pw, jw, any(r.has_major_words for _, r in doms))
    out["domains"] = [(ring, life_of(r), sum(r.pauses), len(r.pauses),
                       r.wait_ns, r.waits, r.bytes["minor_allocated"] // 8,
                       r.bytes["minor_promoted"] // 8, r.major_words, r.lost)
                      for ring, r in doms]
    out["pauses"] = sorted(pauses)
    return out


class Checker:
    def __init__(self):
        self.bad = []

    def eq(self, what, got, want):
        if got != want:
            self.bad.append(f"{what}: rte-read {got!r}, expected {want!r}")

    def near(self, what, got, want, rel=1e-6, absol=1e-3):
        if abs(got - want) > max(absol, rel * abs(want)):
            self.bad.append(f"{what}: rte-read {got!r}, expected {want!r}")


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def check_pauses(c, pid, got, ps):
    n = len(ps)
    c.eq(f"{pid} pauses.count", got["count"], n)
    if n == 0:
        return
    s, sq = sum(ps), sum(p * p for p in ps)
    c.eq(f"{pid} pauses.total_ns", got["total_ns"], s)
    c.eq(f"{pid} pauses.min_ns", got["min_ns"], ps[0])
    c.eq(f"{pid} pauses.max_ns", got["max_ns"], ps[-1])
    c.near(f"{pid} pauses.mean_ns", got["mean_ns"], s / n)
    var = max(0, n * sq - s * s) / (n * n)
    c.near(f"{pid} pauses.stddev_ns", got["stddev_ns"], math.sqrt(var), absol=1.0)
    for p in PCTS:
        v = got["percentiles_ns"][f"{p:g}"]
        rank = max(1, min(n, math.ceil(p / 100 * n - 1e-9)))
        cands = [ps[k - 1] for k in (rank - 1, rank, rank + 1) if 1 <= k <= n]
        if not any(abs(v - x) <= 0.004 * x + 1 for x in cands):
            c.bad.append(f"{pid} p{p:g}: rte-read {v}, exact {ps[rank - 1]} (rank {rank} of {n})")
    p999 = got["percentiles_ns"]["99.9"]
    hi = sum(1 for x in ps if x > p999 * (1 + 1 / 127) + 1)
    lo = sum(1 for x in ps if x > p999 * (1 - 1 / 127) - 1)
    if not hi <= got["above_p99_9"] <= lo:
        c.bad.append(f"{pid} above_p99_9: rte-read {got['above_p99_9']}, expected {hi}..{lo}")


def check_proc(c, pid, g, want):
    for k in ("wall_ns", "wall_lower_bound", "cpu_ns", "cpu_lower_bound",
              "gc_ns", "gc_lower_bound", "lost_words"):
        c.eq(f"{pid} {k}", g[k], want[k])
    c.near(f"{pid} gc_pct", g["gc_pct"], pct(want["gc_ns"], want["cpu_ns"]), absol=1e-4)
    c.eq(f"{pid} waits.count", g["waits"]["count"], want["waits"]["count"])
    c.eq(f"{pid} waits.ns", g["waits"]["ns"], want["waits"]["ns"])
    for k, v in want["collections"].items():
        c.eq(f"{pid} collections.{k}", g["collections"][k], v)
    mw, pw, jw, has_j = want["alloc"]
    a = g["allocations"]
    c.eq(f"{pid} minor_words", a["minor_words"], mw)
    c.eq(f"{pid} promoted_words", a["promoted_words"], pw)
    c.near(f"{pid} promoted_pct", a["promoted_pct"], pct(pw, mw), absol=1e-4)
    c.eq(f"{pid} major_words", a["major_words"], jw if has_j else None)
    c.eq(f"{pid} total_heap_words", a["total_heap_words"], mw - pw + jw if has_j else None)
    cpu_s = want["cpu_ns"] / 1e9
    for k, v in (("minor", mw), ("promoted", pw), ("major", jw)):
        c.near(f"{pid} {k}_words_per_cpu_s", a[f"{k}_words_per_cpu_s"],
               v / cpu_s if cpu_s else 0.0, absol=1e-3)
    c.eq(f"{pid} alloc lower_bound", a["lower_bound"], want["lost_words"] > 0)
    doms = [(d["ring"], (d["lifetime_ns"], d["lifetime_lower_bound"]), d["gc_ns"],
             d["pauses"], d["wait_ns"], d["waits"], d["minor_words"],
             d["promoted_words"], d["major_words"], d["lost_words"])
            for d in g["domains"]]
    c.eq(f"{pid} domains", doms, want["domains"])
    for d in g["domains"]:
        c.near(f"{pid} ring {d['ring']} gc_pct", d["gc_pct"],
               pct(d["gc_ns"], d["lifetime_ns"]), absol=1e-4)
    check_pauses(c, pid, g["pauses"], want["pauses"])


def events(args):
    """(pid, event) of JSONL (rte-read's), or of --expected PID=FILE ..."""
    if args[0] != "--expected":
        for line in open(args[0]):
            e = json.loads(line)
            yield e["pid"], e
        return
    for a in args[1:]:
        pid, path = a.split("=", 1)
        for line in open(path):
            yield int(pid), json.loads(line)


def main():
    rings = defaultdict(lambda: defaultdict(Ring))
    lc = defaultdict(lambda: {"start": None, "stop": None, "first": None, "last": None})
    src = " ".join(sys.argv[1:-1])
    for pid, e in events(sys.argv[1:-1]):
        ring = e["ring"]
        feed(rings[pid][ring], ring, e)
        if e["kind"] == "lost":
            continue
        p = lc[pid]
        p["first"] = e["ts"] if p["first"] is None else min(p["first"], e["ts"])
        p["last"] = e["ts"] if p["last"] is None else max(p["last"], e["ts"])
        if e["kind"] == "lifecycle" and e["name"] == "ring_start" and p["start"] is None:
            p["start"] = e["ts"]
        if e["kind"] == "lifecycle" and e["name"] == "ring_stop":
            p["stop"] = e["ts"]
    doc = json.load(open(sys.argv[-1]))
    c = Checker()
    seen = 0
    for proc in doc["processes"]:
        pid = proc["pid"]
        has = any(r.runtime for r in rings[pid].values())
        c.eq(f"{pid} runtime_events", proc["runtime_events"], has)
        if not has:
            continue
        check_proc(c, pid, proc["gc"], expect_for(rings[pid], lc[pid]))
        seen += 1
    for b in c.bad:
        print("FAIL:", b)
    if c.bad:
        return 1
    print(f"ok: {sys.argv[-1]}: {seen} process(es), every GC figure agrees with {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
