#!/usr/bin/env python3
"""chrome_check.py FILE [--all] - check rte-read's Chrome Trace Event JSON
against the rules of the trace event format as Perfetto imports it:

- the document: an object with a traceEvents array; every event has ph,
  pid, tid (integers) and, but for metadata, ts >= 0 (microseconds);
- X slices nest per track (pid, tid): sorted by (ts, -dur), each slice
  ends before the enclosing one ends, or starts after it ended;
- timestamps are monotonic per track in file order (for X, the end: a
  slice is written at its end), and per counter track (pid, name);
- async slices (b/e, by cat and id): one begin, then one end, not before;
- every flow (s/f, by id) has exactly one start and one end, each inside
  an X slice of its own track (so that Perfetto binds it);
- exactly one thread_name per track that has events, one process_name
  per process;
- without --all, none of the shim's bookkeeping events (rte.thread.*,
  rte.module*, rte.exec_failed).
Prints "ok: ..." or the first problems and exits 1.
"""
import json
import sys
from collections import defaultdict

EPS = 0.0015  # us: three decimals, rounded

def main():
    path = sys.argv[1]
    show_all = "--all" in sys.argv[2:]
    d = json.load(open(path))
    evs = d["traceEvents"]
    errs = []
    tracks = defaultdict(list)     # (pid, tid) -> events in file order
    counters = defaultdict(list)   # (pid, name) -> ts in file order
    flows = defaultdict(list)
    asyncs = defaultdict(list)
    names = defaultdict(int)
    pnames = defaultdict(int)
    pids = set()
    for e in evs:
        ph = e.get("ph")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            errs.append("no integer pid/tid: %r" % e)
            continue
        if ph == "M":
            if e["name"] == "thread_name":
                names[(e["pid"], e["tid"])] += 1
            elif e["name"] == "process_name":
                pnames[e["pid"]] += 1
            continue
        if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
            errs.append("bad ts: %r" % e)
            continue
        pids.add(e["pid"])
        name = e.get("name", "")
        if not show_all and (name.startswith("rte.thread.") or
                             name.startswith("rte.module") or
                             name == "rte.exec_failed"):
            errs.append("bookkeeping event shown: %r" % e)
        if ph == "C":
            counters[(e["pid"], name)].append(e["ts"])
        elif ph in ("s", "f"):
            flows[e["id"]].append(e)
        elif ph in ("b", "e"):
            asyncs[(e["cat"], e["id"])].append(e)
        elif ph in ("X", "i"):
            tracks[(e["pid"], e["tid"])].append(e)
        else:
            errs.append("unexpected phase %r" % ph)
    for key, es in tracks.items():
        if names[key] != 1:
            errs.append("track %r has %d thread_name records" % (key, names[key]))
        last = -1.0
        for e in es:
            t = e["ts"] + e.get("dur", 0)
            if t + EPS < last:
                errs.append("track %r: %s at %.3f after %.3f (not monotonic)" %
                            (key, e["name"], t, last))
                break
            last = max(last, t)
        stack = []
        for e in sorted((e for e in es if e["ph"] == "X"),
                        key=lambda e: (e["ts"], -e["dur"])):
            end = e["ts"] + e["dur"]
            while stack and e["ts"] + EPS >= stack[-1]:
                stack.pop()
            if stack and end > stack[-1] + EPS:
                errs.append("track %r: %s [%.3f, %.3f] overlaps its parent ending %.3f" %
                            (key, e["name"], e["ts"], end, stack[-1]))
                break
            stack.append(end)
    for key in names:
        if names[key] > 1:
            errs.append("track %r has %d thread_name records" % (key, names[key]))
    for pid in pids:
        if pnames[pid] != 1:
            errs.append("process %d has %d process_name records" % (pid, pnames[pid]))
    for key, ts in counters.items():
        if any(b + EPS < a for a, b in zip(ts, ts[1:])):
            errs.append("counter %r: timestamps go back" % (key,))
    for fid, fs in flows.items():
        if sorted(f["ph"] for f in fs) != ["f", "s"]:
            errs.append("flow %r: ends %r" % (fid, [f["ph"] for f in fs]))
            continue
        for f in fs:
            if not any(x["ph"] == "X" and x["ts"] - EPS <= f["ts"] <= x["ts"] + x["dur"] + EPS
                       for x in tracks.get((f["pid"], f["tid"]), [])):
                errs.append("flow %r: its %s is in no slice of its track" % (fid, f["ph"]))
    for key, es in asyncs.items():
        if [e["ph"] for e in es] != ["b", "e"] or es[1]["ts"] + EPS < es[0]["ts"]:
            errs.append("async slice %r: %r" % (key, [(e["ph"], e["ts"]) for e in es]))
    if errs:
        for e in errs[:10]:
            print("%s: %s" % (path, e), file=sys.stderr)
        sys.exit(1)
    print("ok: %s: %d events, %d tracks, %d flows" % (path, len(evs), len(tracks), len(flows)))

main()
