#!/usr/bin/env python3
"""check.py - checks of the churn and fork-storm runs, on the JSONL that
rte-read (the real reader) printed for their files.

  check.py churn JSONL TOTAL ALIVE
  check.py forkstorm JSONL STDOUT PARENT_PID

Prints one line of figures and exits 0, or prints every failure and exits 1.
"""
import json
import sys

FAILS = []
SPAWNS = 1000  # forkstorm.c


def fail(msg):
    FAILS.append(msg)


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def name(ev):
    return ev.get("name") or ev.get("event") or ""


def is_rte(ev):
    return ev["kind"].startswith("user") and name(ev).startswith("rte.")


def churn(events, total, alive):
    """Every domain_spawn has its domain_terminate on the same ring, each
    thread's event sits between them, ring indexes stay <= ALIVE, nothing
    is lost and ring 0 ends with ring_stop."""
    open_ = {}
    spawns = terms = 0
    seen = {}
    max_ring = 0
    for ev in events:
        r = ev["ring"]
        max_ring = max(max_ring, r)
        n = name(ev)
        if ev["kind"] == "lost":
            fail("ring %d: %s words lost" % (r, ev.get("words")))
        elif n == "domain_spawn":
            spawns += 1
            if open_.get(r):
                fail("ring %d: domain_spawn while its thread still runs" % r)
            open_[r] = True
        elif n == "domain_terminate":
            terms += 1
            if not open_.get(r):
                fail("ring %d: domain_terminate without domain_spawn" % r)
            open_[r] = False
        elif n == "churn.i":
            v = ev["value"]
            if not open_.get(r):
                fail("churn.i %d on ring %d outside spawn/terminate" % (v, r))
            seen[v] = seen.get(v, 0) + 1
    still = [r for r, o in open_.items() if o]
    if still:
        fail("rings %s end without domain_terminate" % still)
    if spawns != total or terms != total:
        fail("%d domain_spawn, %d domain_terminate, want %d each"
             % (spawns, terms, total))
    bad = [i for i in range(total) if seen.get(i) != 1]
    if bad or len(seen) != total:
        fail("%d thread events missing or repeated (first: %s)"
             % (len(bad), bad[:5]))
    if max_ring > alive:
        fail("ring %d used with at most %d threads alive: not reused"
             % (max_ring, alive))
    stops = [ev["ring"] for ev in events if name(ev) == "ring_stop"]
    if stops != [0]:
        fail("ring_stop on rings %s, want once on ring 0" % stops)
    print("churn: %d threads, %d domain_spawn = %d domain_terminate, "
          "rings 1..%d reused" % (total, spawns, terms, max_ring))


def child_sequence(evs, pid, i):
    """The non-rte events of child i, all on ring 0, must be exactly:
    ring_start(pid), fork_child, its 1 + i % 4 events, ring_stop."""
    want = [("ring_start", pid), ("fork_child", None)]
    want += [("storm.child", i * 8 + k) for k in range(i % 4 + 1)]
    want += [("ring_stop", None)]
    got = []
    for ev in evs:
        if ev["ring"] != 0:
            fail("child %d: an event on ring %d" % (i, ev["ring"]))
        if is_rte(ev):
            continue
        v = ev.get("data") if ev["kind"] == "lifecycle" else ev.get("value")
        got.append((name(ev), v))
    same = len(got) == len(want) and all(
        gn == wn and (wv is None or gv == wv)
        for (gn, gv), (wn, wv) in zip(got, want))
    if not same:
        fail("child %d (pid %d): got %s, want %s" % (i, pid, got, want))


def forkstorm(events, stdout, parent):
    children = {}
    with open(stdout) as f:
        for line in f:
            p = line.split()
            if p[0] == "child":
                children[int(p[2])] = int(p[1])
    by_pid = {}
    for ev in events:
        by_pid.setdefault(ev["pid"], []).append(ev)
    par = by_pid.pop(parent, [])
    forked = sorted(ev["data"] for ev in par if name(ev) == "fork_parent")
    if forked != sorted(children):
        fail("parent: %d fork_parent events, %d children; differing: %s"
             % (len(forked), len(children),
                sorted(set(forked) ^ set(children))[:5]))
    if not par or name(par[-1]) != "ring_stop":
        fail("parent: file does not end with ring_stop")
    for pid, i in sorted(children.items(), key=lambda c: c[1]):
        child_sequence(by_pid.pop(pid, []), pid, i)
    if by_pid:
        fail("files of unknown processes: %s" % sorted(by_pid)[:5])
    spawned = sorted(ev["value"] for ev in par if name(ev) == "storm.spawned")
    if spawned != list(range(SPAWNS)):
        missing = sorted(set(range(SPAWNS)) - set(spawned))[:10]
        dropped = [ev["value"] for ev in par if name(ev) == "rte.dropped"]
        lost = sum(ev["words"] for ev in par if ev["kind"] == "lost")
        fail("parent: %d storm.spawned events, want 0..%d once each "
             "(missing %s; rte.dropped %s; lost words %d)"
             % (len(spawned), SPAWNS - 1, missing, dropped, lost))
    n = sum(1 for ev in par if name(ev) == "storm.w")
    print("forkstorm: %d forks, %d complete child files, %d short threads "
          "meanwhile, %d writer events read back from the parent"
          % (len(forked), len(children), len(spawned), n))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "churn":
        churn(load(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) == 5 and sys.argv[1] == "forkstorm":
        forkstorm(load(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
    for f in FAILS[:20]:
        print("check: FAIL " + f)
    sys.exit(1 if FAILS else 0)


main()
