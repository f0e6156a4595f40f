#!/usr/bin/env python3
"""check.py - decodes the allocation profiler's events from `rte-read -f
jsonl` output (tests/alloc/run.sh), with include/rte/profile.h's layouts.

  check.py totals JSONL        per pid: "pid calls bytes frees freed
                               b0 .. b19" (sums over the process's rings;
                               the bucket sums are of its `alloc` events)
  check.py expect OUT          the buckets that tests/alloc/progs/sizes.c's
                               output lines "fn size count" must give:
                               "b0 .. b19"
  check.py live JSONL          sampled allocations never freed: one line
                               "pid size addr fn frame0 frame1 ..." each
  check.py samples JSONL       every sample, as for live
  check.py estimate JSONL      the total bytes estimated from the samples
                               (profile.h's estimator), one number
  check.py flushes JSONL       per ring, in order, the calls + frees of
                               each flush: "pid ring n1 n2 ..."
  check.py bounded JSONL SUMMARY_JSON KEPT [small]
                               the live bytes of summary-json are the
                               counts' (usable - freed, recounted from
                               JSONL), at least KEPT (the bytes the program
                               kept) and within 5 % of it; the sampled
                               leak estimate is at most them, and each
                               stack of one live sample stands for no more
                               bytes than the calls of its size class (from
                               the alloc events) of that class's largest
                               size (small: there must be such stacks);
                               exit 1 otherwise
"""
import json
import math
import struct
import sys

SAMPLE = struct.Struct("<HHHHQQQ")  # struct rte_alloc_sample_rec
FREE = struct.Struct("<HHIQ")       # struct rte_alloc_free_rec


def bucket(words):
    if words < 10:
        return words
    if words < 100:
        return 9 + words // 10
    return 19


def events(path):
    with open(path) as f:
        for line in f:
            yield json.loads(line)


def totals(path):
    per = {}
    for e in events(path):
        t = per.setdefault(e["pid"], [0] * 24)
        if e.get("kind") == "alloc":
            for i, v in enumerate(e["buckets"]):
                t[4 + i] += v
        elif e.get("kind") == "user_int":
            names = ["rte.alloc.calls", "rte.alloc.bytes",
                     "rte.alloc.frees", "rte.alloc.freed"]
            if e["event"] in names:
                t[names.index(e["event"])] += e["value"]
    for pid, t in sorted(per.items()):
        print(pid, " ".join(str(v) for v in t))


def expect(path):
    b = [0] * 20
    with open(path) as f:
        for line in f:
            fn, size, count = line.split()
            b[bucket((int(size) + 7) // 8)] += int(count)
    print(" ".join(str(v) for v in b))


def decode_sample(hexs):
    raw = bytes.fromhex(hexs)
    ver, nframes, fn, flags, size, addr, period = SAMPLE.unpack_from(raw)
    frames = struct.unpack_from("<%dQ" % nframes, raw, SAMPLE.size)
    return size, addr, fn, period, frames


def samples(path, only_live):
    live = {}
    out = []
    for e in sorted(events(path), key=lambda e: e.get("ts", 0)):
        if e.get("kind") != "user_custom":
            continue
        if e["event"] == "rte.alloc.sample":
            size, addr, fn, period, frames = decode_sample(e["hex"])
            rec = (e["pid"], size, addr, fn, period, frames)
            live[(e["pid"], addr)] = rec
            out.append(rec)
        elif e["event"] == "rte.alloc.free":
            _, _, _, addr = FREE.unpack_from(bytes.fromhex(e["hex"]))
            live.pop((e["pid"], addr), None)
    return list(live.values()) if only_live else out


def show(recs):
    for pid, size, addr, fn, period, frames in recs:
        print(pid, size, "%x" % addr, fn, " ".join("%x" % f for f in frames))


def estimate(path):
    total = 0.0
    for pid, size, addr, fn, period, frames in samples(path, False):
        if size:
            total += size / (1 - math.exp(-size / period))
    print("%.0f" % total)


def flushes(path):
    per = {}
    for e in events(path):
        if (e.get("kind") == "user_int" and
                e["event"] in ("rte.alloc.calls", "rte.alloc.frees")):
            one = per.setdefault((e["pid"], e["ring"]), {})
            one[e["ts"]] = one.get(e["ts"], 0) + e["value"]
    for (pid, ring), one in sorted(per.items()):
        print(pid, ring, " ".join(str(one[ts]) for ts in sorted(one)))


def class_max(words_bucket):
    """The largest size in bytes of alloc bucket b (None for 100+)."""
    if words_bucket < 10:
        return 8 * words_bucket
    if words_bucket < 19:
        return 8 * (10 * (words_bucket - 9) + 9)
    return None


def bounded(jl, sj, kept, need_small=None):
    kept = int(kept)
    usable = freed = 0
    calls = [0] * 20
    for e in events(jl):
        if e.get("kind") == "alloc":
            calls = [a + b for a, b in zip(calls, e["buckets"])]
        elif e.get("kind") == "user_int" and e["event"] == "rte.alloc.usable":
            usable += e["value"]
        elif e.get("kind") == "user_int" and e["event"] == "rte.alloc.freed":
            freed += e["value"]
    bad = []
    (p,) = json.load(open(sj))["processes"]
    a = p["alloc_profile"]
    live = a["live_bytes"]
    if live != max(usable - freed, 0) or a["usable_bytes"] != usable:
        bad.append("live_bytes %r usable_bytes %r, recounted %d - %d"
                   % (live, a["usable_bytes"], usable, freed))
    elif not kept <= live <= kept * 1.05:
        bad.append("live_bytes %d, the program kept %d" % (live, kept))
    if live is not None and a["live_est_bytes"] > live + 0.5:
        bad.append("leak estimate %.0f above the exact %d" % (a["live_est_bytes"], live))
    small = 0
    for s in a["live"]:
        if s["samples"] != 1:
            continue
        b = bucket((s["sampled_bytes"] + 7) // 8)
        m = class_max(b)
        if m is None:
            continue
        small += 1
        if s["est_bytes"] > calls[b] * m + 0.5:
            bad.append("a stack of one sample of %d bytes estimated at %.0f bytes;"
                       " its class had %d calls of at most %d bytes"
                       % (s["sampled_bytes"], s["est_bytes"], calls[b], m))
    for b in bad:
        print(b, file=sys.stderr)
    print("live %r (kept %d), estimate %.0f, %d small stacks checked"
          % (live, kept, a["live_est_bytes"], small))
    sys.exit(1 if bad or (need_small and not small) else 0)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "totals":
        totals(path)
    elif cmd == "expect":
        expect(path)
    elif cmd == "live":
        show(samples(path, True))
    elif cmd == "samples":
        show(samples(path, False))
    elif cmd == "estimate":
        estimate(path)
    elif cmd == "flushes":
        flushes(path)
    elif cmd == "bounded":
        bounded(path, *sys.argv[3:6])
    else:
        sys.exit("check.py: unknown command " + cmd)


if __name__ == "__main__":
    main()
