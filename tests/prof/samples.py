#!/usr/bin/env python3
"""samples.py - read the rte.sample records of `rte-read -f jsonl` (stdin)
and print one JSON object: per process and thread the samples and their
CPU time, and the self (innermost frame) shares of each function, with
stacks symbolised from the rte.module records of the same process and the
modules' symbol tables (nm). For tests/prof/run.sh and bench/prof.sh.

Usage: rte-read -f jsonl FILE... | samples.py
Output: {"pids": {pid: {"threads": {tid: {"samples": n, "cpu_ns": ns}},
         "dropped": n}}, "samples": n, "cpu_ns": ns, "self": {fn: share},
         "total": {fn: share}, "truncated": n, "hz": hz,
         "clocks": {"perf"|"timer": n}}  (RTE_SAMPLE_PERF, flags bit 1)
Shares are fractions of all samples (0..1), by sample count.
"""
import bisect
import json
import struct
import subprocess
import sys

SAMPLE = struct.Struct("<HHIQiI")   # struct rte_sample_rec, 24 bytes
MODULE = struct.Struct("<HHIQQQ")   # struct rte_module_rec, 32 bytes

_syms = {}


def symbols(path):
    """Sorted (addresses, names) of the function symbols of an ELF file."""
    if path in _syms:
        return _syms[path]
    addrs, names = [], []
    try:
        out = subprocess.run(["nm", "-n", "--defined-only", path],
                             capture_output=True, text=True).stdout
        if not out.strip():
            out = subprocess.run(["nm", "-n", "-D", "--defined-only", path],
                                 capture_output=True, text=True).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwWiI":
            addrs.append(int(f[0], 16))
            names.append(f[2])
    _syms[path] = (addrs, names)
    return _syms[path]


def symbolise(mods, pc):
    for bias, start, end, path in mods:
        if start <= pc < end:
            addrs, names = symbols(path)
            i = bisect.bisect_right(addrs, pc - bias) - 1
            base = path.rsplit("/", 1)[-1]
            return names[i] if i >= 0 else "?@" + base
    return "?"


def main():
    mods = {}      # pid -> [(bias, start, end, path)]
    samples = []   # (pid, tid, cpu_ns, flags, hz, [pcs])
    dropped = {}
    for line in sys.stdin:
        e = json.loads(line)
        name = e.get("event")
        pid = e["pid"]
        if name == "rte.module":
            b = bytes.fromhex(e["hex"])
            _, blen, _, bias, start, end = MODULE.unpack_from(b)
            path = b[MODULE.size + blen:].decode("utf-8", "replace")
            mods.setdefault(pid, []).append((bias, start, end, path))
        elif name == "rte.sample":
            b = bytes.fromhex(e["hex"])
            _, n, flags, cpu, tid, hz = SAMPLE.unpack_from(b)
            pcs = struct.unpack_from("<%dQ" % n, b, SAMPLE.size)
            samples.append((pid, tid, cpu, flags, hz, pcs))
        elif name == "rte.dropped":
            dropped[pid] = dropped.get(pid, 0) + e["value"]
    out = {"pids": {}, "samples": len(samples), "cpu_ns": 0, "self": {},
           "total": {}, "truncated": 0, "hz": 0, "clocks": {}}
    for pid, tid, cpu, flags, hz, pcs in samples:
        p = out["pids"].setdefault(str(pid), {"threads": {}, "dropped":
                                               dropped.get(pid, 0)})
        t = p["threads"].setdefault(str(tid), {"samples": 0, "cpu_ns": 0})
        t["samples"] += 1
        t["cpu_ns"] += cpu
        out["cpu_ns"] += cpu
        out["hz"] = hz
        out["truncated"] += flags & 1
        c = "perf" if flags & 2 else "timer"
        out["clocks"][c] = out["clocks"].get(c, 0) + 1
        fns = [symbolise(mods.get(pid, []), pc) for pc in pcs]
        if fns:
            out["self"][fns[0]] = out["self"].get(fns[0], 0) + 1
        for f in set(fns):
            out["total"][f] = out["total"].get(f, 0) + 1
    for pid, n in dropped.items():
        out["pids"].setdefault(str(pid), {"threads": {}, "dropped": n})
    n = max(len(samples), 1)
    for k in ("self", "total"):
        out[k] = {f: c / n for f, c in sorted(out[k].items(),
                                              key=lambda x: -x[1])}
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
