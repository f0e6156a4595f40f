#!/usr/bin/env python3
"""Structured checks for tests/reader/run.sh; each subcommand exits non-zero
with a message on the first mismatch.

  check.py jsonl-vs-expected GOT.jsonl EXPECTED.jsonl PID
      GOT is rte-read --format=jsonl output (possibly of several files);
      its lines of pid PID, with the pid field removed, must equal the
      expected file ring by ring (same lines, same order within a ring),
      and every line must start with "pid":PID.
  check.py timeline GOT.jsonl
      timestamps never go back (lost lines have none).
  check.py summary SUMMARY.json TRUTH.json
      rte-read --format=summary-json of the known file against what
      gen_ring wrote: exact counts, totals, min, max, wall time, phase
      time, thread names; percentiles within 1% of the exact ones.
  check.py chrome TRACE.json TRUTH.json
      the Chrome trace of the known file: valid JSON, metadata, slices.
  check.py chrome-valid TRACE.json
      valid JSON with traceEvents; every event has ph/pid/tid; X has dur.
  check.py follow GOT.jsonl N [STREAMS]
      on each of STREAMS (pid, ring) pairs, user int "seq" values strictly
      increase up to N-1; all N seen, or the lost words of that ring
      account for every missing event (3 words each).
"""
import json
import math
import re
import sys
from collections import OrderedDict


def fail(msg):
    print("check.py: " + msg, file=sys.stderr)
    sys.exit(1)


def by_ring(lines):
    rings = OrderedDict()
    for ln in lines:
        m = re.match(r'\{"ring":(\d+),', ln)
        if not m:
            fail("line without ring first: " + ln[:80])
        rings.setdefault(int(m.group(1)), []).append(ln)
    return rings


def jsonl_vs_expected(got, exp, pid):
    prefix = '{"pid":%s,' % pid
    mine = []
    with open(got) as f:
        for ln in f:
            ln = ln.rstrip("\n")
            if ln.startswith(prefix):
                mine.append("{" + ln[len(prefix):])
            elif not re.match(r'\{"pid":\d+,', ln):
                fail("line without a pid: " + ln[:80])
    with open(exp) as f:
        want = [ln.rstrip("\n") for ln in f if ln.strip()]
    a, b = by_ring(mine), by_ring(want)
    if sorted(a) != sorted(b):
        fail("rings differ: got %s, expected %s" % (sorted(a), sorted(b)))
    for r in b:
        if a[r] != b[r]:
            for i, (x, y) in enumerate(zip(a[r], b[r])):
                if x != y:
                    fail("ring %d line %d:\n got %s\n exp %s" % (r, i, x, y))
            fail("ring %d: %d lines, expected %d" % (r, len(a[r]), len(b[r])))
    print("ok: %s pid %s: %d events match" % (exp, pid, len(want)))


def timeline(got):
    last = -1
    n = 0
    with open(got) as f:
        for ln in f:
            ev = json.loads(ln)
            if "ts" in ev:
                if ev["ts"] < last:
                    fail("time goes back at %s" % ln.strip())
                last = ev["ts"]
            n += 1
    print("ok: %d events in time order" % n)


def ring_timelines(got):
    """Time order within each (pid, ring): what a live --follow of several
    processes guarantees (a ring's events may reach the reader in a later
    poll round than newer events of other rings)."""
    last = {}
    n = 0
    with open(got) as f:
        for ln in f:
            ev = json.loads(ln)
            key = (ev.get("pid"), ev["ring"])
            if "ts" in ev:
                if ev["ts"] < last.get(key, -1):
                    fail("time goes back in ring %s at %s" % (key, ln.strip()))
                last[key] = ev["ts"]
            n += 1
    print("ok: %d events in time order within each ring" % n)


def exact_quantile(vals, q):
    vals = sorted(vals)
    rank = max(1, math.ceil(q * len(vals)))
    return vals[rank - 1]


def near(got, want, what, tol=0.01):
    if abs(got - want) > max(tol * want, 1e-6):
        fail("%s: got %s, expected %s within %.0f%%" % (what, got, want, tol * 100))


def summary(path, truth_path):
    s = json.load(open(path))
    t = json.load(open(truth_path))
    procs = [p for p in s["processes"] if p["pid"] == t["pid"]]
    if len(procs) != 1:
        fail("expected one process %d" % t["pid"])
    p = procs[0]
    if p["wall_ns"] != t["wall_ns"] or p["wall_from"] != "ring_start_to_ring_stop":
        fail("wall time %s (%s), expected %s" % (p["wall_ns"], p["wall_from"], t["wall_ns"]))
    if p["runtime_phase_ns"] != t["runtime_phase_ns"]:
        fail("runtime phase time %d, expected %d" % (p["runtime_phase_ns"], t["runtime_phase_ns"]))
    near(p["runtime_phase_share"], t["runtime_phase_ns"] / t["wall_ns"], "phase share", 1e-4)
    spans = {e["name"]: e for e in p["spans"]}
    for name, durs in t["spans"].items():
        e = spans.get(name) or fail("span %s missing" % name)
        for k, v in (("count", len(durs)), ("total_ns", sum(durs)),
                     ("min_ns", min(durs)), ("max_ns", max(durs)),
                     ("mean_ns", sum(durs) // len(durs))):
            if e[k] != v:
                fail("span %s %s = %s, expected %s" % (name, k, e[k], v))
        for key, q in (("p50_ns", .5), ("p90_ns", .9), ("p99_ns", .99), ("p999_ns", .999)):
            near(e[key], exact_quantile(durs, q), "span %s %s" % (name, key))
    phases = {e["name"]: e for e in p["phases"]}
    for name, w in t["phases"].items():
        e = phases.get(name) or fail("phase %s missing" % name)
        if e["count"] != w["count"] or e["total_ns"] != w["count"] * w["dur"]:
            fail("phase %s: %s" % (name, e))
        for key in ("p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "min_ns"):
            if e[key] != w["dur"]:
                fail("phase %s %s = %s, expected %s" % (name, key, e[key], w["dur"]))
    for fam, key in (("counters", "counter"), ("user_ints", "int")):
        w = t[key]
        e = {x["name"]: x for x in p[fam]}.get(w["name"]) or fail("%s missing" % w["name"])
        for k in ("last", "min", "max", "count"):
            if e[k] != w[k]:
                fail("%s %s = %s, expected %s" % (w["name"], k, e[k], w[k]))
    units = {x["name"]: x for x in p["user_units"]}
    if units.get(t["unit"]["name"], {}).get("count") != t["unit"]["count"]:
        fail("unit counts: %s" % p["user_units"])
    rings = {r["ring"]: r for r in p["rings"]}
    for ring, (name, tid) in t["threads"].items():
        r = rings.get(int(ring)) or fail("ring %s missing" % ring)
        if r["thread"] != name or r["tid"] != tid:
            fail("ring %s thread %s/%s, expected %s/%s" % (ring, r["thread"], r["tid"], name, tid))
    for k, v in t["lifecycle"].items():
        if p["lifecycle"][k] != v:
            fail("lifecycle %s = %s, expected %s" % (k, p["lifecycle"][k], v))
    if p["lost_words"] != 0 or s["lost_words"] != 0:
        fail("lost words in a file without loss")
    print("ok: summary matches what was written")


def chrome_valid(path):
    doc = json.load(open(path))
    evs = doc["traceEvents"]
    for e in evs:
        for k in ("ph", "pid", "tid", "name"):
            if k not in e:
                fail("event without %s: %s" % (k, e))
        if e["ph"] == "X" and ("dur" not in e or e["dur"] < 0):
            fail("X without dur: %s" % e)
        if e["ph"] != "M" and "ts" not in e:
            fail("event without ts: %s" % e)
    pids = {e["pid"] for e in evs if e["ph"] != "M"}
    named = {e["pid"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
    if pids - named:
        fail("processes without process_name: %s" % (pids - named))
    threads = {(e["pid"], e["tid"]) for e in evs if e["ph"] != "M" and e["ph"] != "C"}
    tnamed = {(e["pid"], e["tid"]) for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    if threads - tnamed:
        fail("threads without thread_name: %s" % (threads - tnamed))
    print("ok: %s: %d trace events" % (path, len(evs)))
    return evs


def chrome(path, truth_path):
    evs = chrome_valid(path)
    t = json.load(open(truth_path))
    for name, durs in t["spans"].items():
        got = sorted(round(e["dur"] * 1000) for e in evs if e["ph"] == "X" and e["name"] == name)
        if got != sorted(durs):
            fail("slices of %s: %d, durations differ" % (name, len(got)))
    for name, w in t["phases"].items():
        got = [round(e["dur"] * 1000) for e in evs if e["ph"] == "X" and e["name"] == name]
        if len(got) != w["count"] or set(got) != {w["dur"]}:
            fail("slices of phase %s: %s" % (name, got[:5]))
    tn = {e["tid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    for tid, name in t["chrome_threads"].items():  # a track per thread (tid)
        if tn.get(int(tid)) != name:
            fail("thread_name of tid %s: %s, expected %s" % (tid, tn.get(int(tid)), name))
    pn = [e for e in evs if e["ph"] == "M" and e["name"] == "process_name"]
    if len(pn) != 1 or pn[0]["pid"] != t["pid"]:
        fail("process_name: %s" % pn)
    c = [e for e in evs if e["ph"] == "C" and e["name"] == t["counter"]["name"]]
    if len(c) != t["counter"]["count"] or c[-1]["args"]["ring 0"] != t["counter"]["last"]:
        fail("counter track: %d events" % len(c))
    # ring_start: a 1 ns slice (an end of the exec arrows)
    inst = [e for e in evs if e["ph"] in "iX" and e["name"] == "ring_start"]
    if len(inst) != 1 or inst[0]["args"]["data"] != t["pid"]:
        fail("ring_start event: %s" % inst)
    print("ok: chrome slices, counters and names match what was written")


def follow(path, n, streams="1"):
    """Each thread's seq values 0..n-1 in order, gaps covered by lost
    words. A stream is a thread, not a ring: on a loaded machine a thread
    may end before the next starts, and the ring is reused (a new
    domain_spawn and rte.thread.tid on it)."""
    n, streams = int(n), int(streams)
    seqs, lost, gen = {}, {}, {}
    with open(path) as f:
        for ln in f:
            ev = json.loads(ln)
            ring = (ev.get("pid"), ev["ring"])
            if ev["kind"] == "lifecycle" and ev.get("name") == "domain_spawn":
                gen[ring] = gen.get(ring, 0) + 1
            key = ring + (gen.get(ring, 0),)
            if ev["kind"] == "lost":
                lost[key] = lost.get(key, 0) + ev["words"]
            elif ev["kind"] == "user_int" and ev["event"] == "seq":
                seqs.setdefault(key, []).append(ev["value"])
    if len(seqs) != streams:
        fail("seq events of %d threads, expected %d" % (len(seqs), streams))
    for key, s in seqs.items():
        if any(b <= a for a, b in zip(s, s[1:])):
            fail("%s: seq values out of order" % (key,))
        if s[-1] != n - 1:
            fail("%s: last seq %d, expected %d" % (key, s[-1], n - 1))
        missing = n - len(s)
        if missing and lost.get(key, 0) < 3 * missing:
            fail("%s: %d events missing but only %d words lost" % (key, missing, lost.get(key, 0)))
    print("ok: follow saw %d of %d events of %d threads, %d words lost" %
          (sum(map(len, seqs.values())), n * streams, streams, sum(lost.values())))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {
        "jsonl-vs-expected": jsonl_vs_expected,
        "timeline": timeline,
        "ring-timelines": ring_timelines,
        "summary": summary,
        "chrome": chrome,
        "chrome-valid": chrome_valid,
        "follow": follow,
    }[cmd](*args)


if __name__ == "__main__":
    main()
