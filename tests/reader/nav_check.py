#!/usr/bin/env python3
"""nav_check.py CHECK ARGS... - independent computations, from rte-read's
JSONL of the same files, of what the navigation options must print
(tests/reader/nav.sh). Each check prints "ok: ..." or what differs and
exits 1.

  window JSONL OUT SINCE_NS UNTIL_NS   OUT (text) has exactly the events of
                                       JSONL with t0+SINCE <= ts <= t0+UNTIL
  pid JSONL OUT PID                    OUT (text): exactly PID's events
  thread JSONL OUT TID                 OUT (text): exactly the events of the
                                       thread TID (rte.thread.tid on its ring
                                       until the next domain_spawn)
  timebase JSONL OUT                   TIME = ts - t0 on every line, one t0
                                       for all processes; DELTA = the
                                       difference of successive TIMEs
  top JSONL TOPJSON CHROME N           the N longest complete phases and
                                       spans, each found in CHROME at its
                                       start_us with its duration
  flows JSONL CHROME                   one fork arrow per fork_parent whose
                                       child has a file, one exec arrow per
                                       image that exec'd into a next one,
                                       one track per thread
"""
import json
import sys

def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]

def t0_of(evs):
    return min(e["ts"] for e in evs if "ts" in e)

def text_lines(path):
    """(time, delta, pid, ring, thread, kind, name) of each event line."""
    out = []
    for l in open(path):
        if l.startswith("#") or l.lstrip().startswith("TIME") or l.startswith("WALL"):
            continue
        f = l.split()
        out.append(f)
    return out

def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)

def counted(evs):
    return [e for e in evs if e["kind"] != "lost"]

def window(jl, out, since, until):
    evs = load(jl)
    t0 = t0_of(evs)
    want = [e for e in counted(evs) if t0 + int(since) <= e["ts"] <= t0 + int(until)]
    got = [f for f in text_lines(out) if f[5] != "LOST"]
    if len(got) != len(want):
        fail("window: %d lines, %d events in the window" % (len(got), len(want)))
    for f in got:
        t = round(float(f[0]) * 1e9)
        if not (int(since) - 1 <= t <= int(until) + 1):
            fail("window: a line at %s" % f[0])
    print("ok: %d events in [%s, %s] ns" % (len(want), since, until))

def pid(jl, out, p):
    want = [e for e in counted(load(jl)) if e["pid"] == int(p)]
    got = [f for f in text_lines(out) if f[5] != "LOST"]
    if len(got) != len(want) or any(f[2] != p for f in got):
        fail("pid: %d lines, want %d of pid %s" % (len(got), len(want), p))
    print("ok: %d events of pid %s" % (len(want), p))

def thread_of(evs):
    """The tid of each event (None if not known yet), as procs.c does."""
    cur = {}
    res = []
    for e in evs:
        k = (e["pid"], e.get("ring"))
        if e["kind"] == "lifecycle" and e["name"] in ("domain_spawn", "ring_start"):
            cur[k] = None
        if e["kind"] == "user_int" and e.get("event") == "rte.thread.tid":
            cur[k] = e["value"]
        res.append(cur.get(k))
    return res

def thread(jl, out, tid):
    evs = load(jl)
    tids = thread_of(evs)
    want = [e for e, t in zip(evs, tids) if t == int(tid) and e["kind"] != "lost"]
    got = [f for f in text_lines(out) if f[5] != "LOST"]
    if len(got) != len(want) or not want:
        fail("thread: %d lines, want %d of tid %s" % (len(got), len(want), tid))
    print("ok: %d events of tid %s" % (len(want), tid))

def parse_dur(s):
    s = s.lstrip("+")
    for u, m in (("ns", 1), ("us", 1e3), ("ms", 1e6), ("s", 1e9)):
        if s.endswith(u) and s[:-len(u)].replace(".", "").isdigit():
            return float(s[:-len(u)]) * m
    fail("delta %r" % s)

def timebase(jl, out):
    evs = [e for e in load(jl) if e["kind"] != "lost"]
    t0 = t0_of(evs)
    last = max(e["ts"] for e in evs) - t0
    lines = text_lines(out)
    got = [f for f in lines if f[5] != "LOST"]
    if len(got) != len(evs):
        fail("timebase: %d lines for %d events" % (len(got), len(evs)))
    evi = iter(evs)
    prev = None
    for f in lines:
        t = round(float(f[0]) * 1e9)
        if f[5] == "LOST":  # placed among the events, on the same base
            if not 0 <= t <= last:
                fail("timebase: a loss printed at %s, outside the trace" % f[0])
        else:
            e = next(evi)
            if t != e["ts"] - t0:
                fail("timebase: %s printed at %s, ts - t0 = %d" % (e, f[0], e["ts"] - t0))
        if prev is not None:
            d = t - prev
            if f[1].startswith("+") != (d >= 0) and d != 0:
                fail("timebase: delta %s, want %d ns" % (f[1], d))
            if abs(parse_dur(f[1]) - abs(d)) > max(1, abs(d) * 0.01):
                fail("timebase: delta %s, want %d ns" % (f[1], d))
        prev = t
    print("ok: %d lines on one time base, deltas right" % len(got))

def spans(evs):
    """Every complete phase (per ring, nested) and user span (by name)."""
    res = []
    ph, us = {}, {}
    for e in evs:
        k = (e["pid"], e.get("ring"))
        if e["kind"] == "lifecycle" and e["name"] == "domain_spawn":
            ph[k] = []
            us[k] = []
        if e["kind"] == "begin":
            ph.setdefault(k, []).append((e["name"], e["ts"]))
        elif e["kind"] == "end":
            st = ph.setdefault(k, [])
            for i in range(len(st) - 1, -1, -1):
                if st[i][0] == e["name"]:
                    res.append((e["ts"] - st[i][1], st[i][1], e["name"], e["pid"]))
                    del st[i:]
                    break
        elif e["kind"] == "user_span":
            st = us.setdefault(k, [])
            if e["span"] == "begin":
                st.append((e["event"], e["ts"]))
            else:
                for i in range(len(st) - 1, -1, -1):
                    if st[i][0] == e["event"]:
                        res.append((e["ts"] - st[i][1], st[i][1], e["event"], e["pid"]))
                        del st[i]
                        break
    return res

def top(jl, tj, ch, n):
    evs = load(jl)
    t0 = t0_of(evs)
    want = sorted(spans(evs), key=lambda s: -s[0])[:int(n)]
    got = json.load(open(tj))
    if got["trace_start_ns"] != t0:
        fail("top: trace_start_ns %d, want %d" % (got["trace_start_ns"], t0))
    if [g["dur_ns"] for g in got["top"]] != [w[0] for w in want]:
        fail("top: durations %r, want %r" % ([g["dur_ns"] for g in got["top"]], [w[0] for w in want]))
    chrome = json.load(open(ch))["traceEvents"]
    for g in got["top"]:
        if not any(e.get("name") == g["name"] and e["ph"] in "Xb" and e["pid"] == g["pid"]
                   and abs(e["ts"] - g["start_us"]) < 0.0015 for e in chrome):
            fail("top: %r not found in chrome at ts %s" % (g["name"], g["start_us"]))
        if g["start_ns"] - t0 != round(g["start_us"] * 1000):
            fail("top: start_us and start_ns disagree")
    print("ok: top %s: %r" % (n, [(g["name"], g["dur_ns"]) for g in got["top"]]))

def flows(jl, ch):
    evs = load(jl)
    d = json.load(open(ch))["traceEvents"]
    pids = {e["pid"] for e in evs}
    forks = [e for e in evs if e["kind"] == "lifecycle" and e["name"] == "fork_parent"
             and e["data"] in pids]
    f_s = [e for e in d if e["ph"] == "s" and e["name"] == "fork"]
    got = sorted((e["pid"], [f["pid"] for f in d if f["ph"] == "f" and f["id"] == e["id"]][0]) for e in f_s)
    want = sorted((e["pid"], e["data"]) for e in forks)
    if got != want:
        fail("fork arrows %r, want %r" % (got, want))
    # exec: each rte.exec followed by a ring_start of a new image (a new
    # file: the jsonl of a directory does not say which file, so count the
    # successful ones: an rte.exec not followed by rte.exec_failed)
    ex = 0
    for i, e in enumerate(evs):
        if e.get("event") == "rte.exec":
            nxt = [f for f in evs[i + 1:] if f["pid"] == e["pid"] and f.get("ring") == e.get("ring")
                   and f.get("event") in ("rte.exec_failed", "rte.thread.tid")]
            if nxt and nxt[0]["event"] == "rte.thread.tid":
                ex += 1
    got_ex = len([e for e in d if e["ph"] == "s" and e["name"] == "exec"])
    if got_ex != ex:
        fail("exec arrows: %d, want %d" % (got_ex, ex))
    tids = {(e["pid"], t) for e, t in zip(evs, thread_of(evs)) if t is not None}
    tracks = {(e["pid"], e["tid"]) for e in d if e["ph"] == "M" and e["name"] == "thread_name"
              and "(tid " in e["args"]["name"]}
    if tids != tracks:
        fail("thread tracks %r, threads %r" % (sorted(tracks), sorted(tids)))
    print("ok: %d fork and %d exec arrows, %d thread tracks" % (len(want), ex, len(tracks)))

{"window": window, "pid": pid, "thread": thread, "timebase": timebase,
 "top": top, "flows": flows}[sys.argv[1]](*sys.argv[2:])
