#!/usr/bin/env python3
"""tests/reader/views_check.py - checks of rte-read's views against an
independent recount of the same files' --format=jsonl (tests/reader/views.sh).

  views_check.py chrome JSONL CHROME [--stamps]   (CHROME written with --all)
      every fork and exec arrow starts no later than it ends, and starts
      on a slice of its parent's track; one track per thread tenancy (a
      ring reused by several threads shows each on its own track, with
      its own rte.thread.tid); as many thread tracks per process as the
      JSONL has threads; --stamps: and in the files themselves, each
      fork_parent stamped no later than its child's fork_child, and each
      ring's times non-decreasing
  views_check.py demo JSONL SUMMARY_JSON GC_JSON SUMMARY_TXT
      the demo written as OCaml 5.2 writes (a stw_leader or an
      interrupt_remote > stw_handler around every minor, a stw_leader
      around minor on every domain, counters per collection), and its
      figures in summary, summary-json and gc-stats-json equal to the
      JSONL recount
"""
import collections
import json
import re
import sys

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def load(path):
    return [json.loads(line) for line in open(path)]


def tenancies(evs):
    """(pid, ring, tid) of every thread that held a ring, in order."""
    out = []
    for e in evs:
        if e["kind"] == "user_int" and e.get("event") == "rte.thread.tid":
            out.append((e["pid"], e["ring"], e["value"]))
    return out


def chrome(jl, ch, stamps=None):
    evs = load(jl)
    if stamps == "--stamps":
        # as written: each fork_parent no later than its child's fork_child
        fc = {e["pid"]: e["ts"] for e in evs if e["kind"] == "lifecycle" and e["name"] == "fork_child"}
        for e in evs:
            if e["kind"] == "lifecycle" and e["name"] == "fork_parent" and e["data"] in fc \
                    and e["ts"] > fc[e["data"]]:
                fail("pid %d: fork_parent(%d) stamped %d ns after the child's fork_child"
                     % (e["pid"], e["data"], e["ts"] - fc[e["data"]]))
        # and each ring's times only grow (a stamp taken early must not
        # fall before what the ring got in between)
        last = {}
        for e in evs:
            k = (e["pid"], e.get("ring"))
            if "ts" in e and k in last and e["ts"] < last[k][0]:
                fail("pid %d ring %s: %s at %d after %s at %d"
                     % (k + (e.get("name") or e.get("event"), e["ts"], last[k][1], last[k][0])))
            if "ts" in e:
                last[k] = (e["ts"], e.get("name") or e.get("event"))
    d = json.load(open(ch))["traceEvents"]
    # arrows: s and f of one id; s not later than f, s on a slice
    ends = collections.defaultdict(dict)
    for e in d:
        if e["ph"] in ("s", "f"):
            ends[(e["name"], e["id"])][e["ph"]] = e
    xs = collections.defaultdict(list)
    for e in d:
        if e["ph"] == "X":
            xs[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    nfork = 0
    for (name, fid), se in ends.items():
        if set(se) != {"s", "f"}:
            fail("%s arrow %s: ends %s" % (name, fid, sorted(se)))
            continue
        s, f = se["s"], se["f"]
        nfork += name == "fork"
        if s["ts"] > f["ts"]:
            fail("%s arrow %s from pid %d to pid %d ends %.3f us before it starts"
                 % (name, fid, s["pid"], f["pid"], s["ts"] - f["ts"]))
        if not any(a <= s["ts"] <= b for a, b in xs[(s["pid"], s["tid"])]):
            fail("%s arrow %s starts on no slice of its track" % (name, fid))
    forks = [e for e in evs if e["kind"] == "lifecycle" and e["name"] == "fork_parent"
             and e["data"] in {x["pid"] for x in evs}]
    if nfork != len(forks):
        fail("%d fork arrows, %d forks of traced children" % (nfork, len(forks)))
    # tracks: one per tenancy
    ten = tenancies(evs)
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in d
              if e["ph"] == "M" and e["name"] == "thread_name"}
    want = collections.Counter((p, t) for p, r, t in ten)
    if set(want) - set(tracks):
        fail("threads without a track: %s" % sorted(set(want) - set(tracks)))
    for k, n in want.items():
        if n != 1:
            fail("tid %s held %d rings: one track cannot tell them apart" % (k, n))
        if k in tracks and not tracks[k].endswith("(tid %d)" % k[1]):
            fail("track %s named %r" % (k, tracks[k]))
    tidev = collections.Counter((e["pid"], e["tid"]) for e in d
                                if e.get("name") == "rte.thread.tid" and e["ph"] == "C")
    if tidev != want:
        fail("rte.thread.tid per track %s, per tenancy %s" % (dict(tidev), dict(want)))
    per_pid = collections.Counter(p for p, r, t in ten)
    got_pid = collections.Counter(p for (p, t), n in tracks.items() if "(tid " in n)
    if per_pid != got_pid:
        fail("thread tracks per process %s, threads per process %s"
             % (dict(got_pid), dict(per_pid)))
    # without tids (OCaml's own files): a track per domain of each ring
    notid = {e["pid"] for e in evs} - {p for p, r, t in ten}
    doms = collections.Counter()
    for e in evs:
        if e["pid"] in notid and e["kind"] == "lifecycle" and e["name"] in ("ring_start", "domain_spawn"):
            doms[(e["pid"], e["ring"])] += 1
    for p in notid:
        want_n = sum(n for (q, r), n in doms.items() if q == p)
        got_n = sum(1 for (q, t), n in tracks.items() if q == p and n.startswith("ring "))
        if want_n != got_n:
            fail("pid %d: %d ring tracks, %d domains (ring_start, domain_spawn)" % (p, got_n, want_n))
    reused = sum(1 for n in collections.Counter((p, r) for p, r, t in ten).values() if n > 1)
    reused += sum(1 for n in doms.values() if n > 1)
    if not forks and not notid:
        fail("no fork to draw")
    print("ok: %d arrows forward (%d forks), %d thread tracks for %d tenancies"
          " (%d rings reused), %d processes"
          % (len(ends), nfork, len(tracks), len(ten) + sum(doms.values()), reused,
             len({e["pid"] for e in evs})))


def demo(jl, sj, gj, txt):
    evs = load(jl)
    summ = {p["pid"]: p for p in json.load(open(sj))["processes"]}
    gcs = {p["pid"]: p for p in json.load(open(gj))["processes"]}
    text = open(txt).read()
    stack = collections.defaultdict(list)
    minors = collections.Counter()          # (pid, ring) -> minor begins
    led = collections.Counter()             # (pid, ring) -> stw_leader > minor
    compact = collections.Counter()
    phases = collections.Counter()          # (pid, name) -> begins
    alloc = collections.defaultdict(list)   # (pid, ring) -> minor_allocated values
    prom = collections.Counter()
    for e in evs:
        k = (e["pid"], e["ring"])
        st = stack[k]
        if e["kind"] == "begin":
            phases[(e["pid"], e["name"])] += 1
            if e["name"] == "minor":
                minors[k] += 1
                if st[-1:] == ["stw_leader"]:
                    led[k] += 1
                elif st[-2:] != ["interrupt_remote", "stw_handler"]:
                    fail("pid %d ring %d: minor inside %s, not stw_leader or"
                         " interrupt_remote > stw_handler" % (k + (st,)))
            if e["name"] == "explicit_gc_compact" and e["ring"] == 0:
                compact[e["pid"]] += 1
            st.append(e["name"])
        elif e["kind"] == "end":
            if st and st[-1] == e["name"]:
                st.pop()
        elif e["kind"] == "counter":
            if st[-1:] != ["minor"]:
                fail("counter %s outside minor" % e["name"])
            if e["name"] == "minor_allocated":
                alloc[k].append(e["value"])
            elif e["name"] == "minor_promoted":
                prom[e["pid"]] += e["value"]
    pids = sorted({e["pid"] for e in evs})
    domains = {p: sorted(r for q, r in minors if q == p) for p in pids}
    for p in pids:
        g = gcs[p]["gc"]
        n0 = minors[(p, 0)]
        words = sum(sum(v) for (q, r), v in alloc.items() if q == p) // 8
        if domains[p]:
            # every domain, ring 0 included, takes part in every collection
            # and leads one
            if any(minors[(p, r)] != n0 for r in domains[p]) or 0 not in domains[p]:
                fail("pid %d: minor phases per ring %s" % (p, {r: minors[(p, r)] for r in domains[p]}))
            if any(led[(p, r)] < 1 for r in domains[p]):
                fail("pid %d: a domain never leads (stw_leader > minor): %s"
                     % (p, {r: led[(p, r)] for r in domains[p]}))
            if sum(led[(p, r)] for r in domains[p]) != n0:
                fail("pid %d: %d collections, %d leaders" % (p, n0, sum(led[(p, r)] for r in domains[p])))
            # counters per collection: a worker's are all the same, not a running total
            for r in domains[p]:
                v = alloc[(p, r)]
                if len(v) != minors[(p, r)] or (r and len(set(v)) != 1):
                    fail("pid %d ring %d: minor_allocated %s (one value per collection)" % (p, r, v))
        ph = {x["name"]: x["count"] for x in summ[p]["phases"]}
        checks = [
            ("gc-stats minor collections", g["collections"]["minor"], n0),
            ("gc-stats compactions", g["collections"]["compactions"], compact[p]),
            ("gc-stats minor words", g["allocations"]["minor_words"], words),
            ("gc-stats promoted words", g["allocations"]["promoted_words"], prom[p] // 8),
            ("summary-json gc", summ[p]["gc"]["collections"], g["collections"]),
            ("phase table minor = collections x domains", ph.get("minor", 0), n0 * len(domains[p])),
            ("phase table explicit_gc_compact", ph.get("explicit_gc_compact", 0), compact[p]),
        ]
        for what, got, want in checks:
            if got != want:
                fail("pid %d: %s %r, recounted %r" % (p, what, got, want))
        if g["gc_ns"] <= 0 and (n0 or compact[p]):
            fail("pid %d: collections but no GC time" % p)
        blk = text[text.index("process %d\n" % p):]
        blk = blk[:blk.index("\nprocess ")] if "\nprocess " in blk else blk
        for pat, want in ((r"Minor Gen: +(\d+) collections", n0), (r"Compactions: +(\d+)", compact[p]),
                          (r"Minor heap: +(\d+)", words)):
            m = re.search(pat, blk)
            if not m or int(m.group(1)) != want:
                fail("pid %d: summary text %r: %s, recounted %d" % (p, pat, m and m.group(1), want))
    if sum(compact.values()) != 1 or not any(domains.values()):
        fail("the demo shows %d compactions, minor collections on %s" % (sum(compact.values()), domains))
    print("ok: demo: %s" % ", ".join("pid %d: %d collections on %d domains, %d compactions"
                                     % (p, minors[(p, 0)], len(domains[p]), compact[p]) for p in pids))


{"chrome": chrome, "demo": demo}[sys.argv[1]](*sys.argv[2:])
sys.exit(1 if FAILS else 0)
