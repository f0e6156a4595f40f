"""check.py - the checks of tests/heap/run.sh on rte-read's summary-json,
summary and Chrome output and on heaptrack_print's report.

  check.py shape SJ TXT          the known-shape program's figures
  check.py heaptrack SJ HT [exact-temps]
                                 peak and leaked within 5 % of heaptrack's,
                                 temporaries equal (exact-temps) or at most
                                 heaptrack's, the top sites equal
  check.py chrome JSON SJ        the heap counter track up to the peak
  check.py bad SJ TEMPS [TXT]    bad.c's odd calls counted right (and the
                                 fork child's heap line in the summary)
  check.py peak SJ WANT LOW      the peak in [WANT - LOW, WANT + 256 KiB]
  check.py sites SJ HTDATA [OUT] the top 5 allocation sites by bytes (of
                                 those of 1 % of the bytes or more) the
                                 same set as in heaptrack's data file, each
                                 within 5 % of heaptrack's bytes (and
                                 with OUT, the program's "site NAME BYTES"
                                 lines: heaptrack's bytes per site exact,
                                 ours within 5 %, the same order)
  check.py grow SJ OUT PERIOD   grow.c's realloc growth: samples of
                                 grow_here as many as its growth (not its
                                 bytes) calls for, its estimate and
                                 malloc_here's within 5 % (or 3 error
                                 bars) of the bytes asked for
Exit status 0 when the check holds; the figures are printed."""
import json
import os
import re
import subprocess
import sys

MIB = 1 << 20


def procs(sj):
    return [p for p in json.load(open(sj))["processes"] if p.get("alloc_profile")]


def main_alloc(sj):
    ps = procs(sj)
    return max(ps, key=lambda p: p["alloc_profile"]["calls"])["alloc_profile"]


def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    return bool(cond)


def shape(sj, txt):
    a = main_alloc(sj)
    t = open(txt).read()
    good = ok(48 * MIB <= a["peak_bytes"] <= 48 * MIB * 1.05,
              "peak %d (48 MiB burst)" % a["peak_bytes"])
    good &= ok(8 * MIB <= a["live_bytes_at_exit"] <= 8 * MIB * 1.05,
               "live at exit %d (8 MiB leaked)" % a["live_bytes_at_exit"])
    # 100 000 temporaries, plus the burst's last block (freed with no
    # allocation since: frees in between do not matter), plus libc's few
    good &= ok(100001 <= a["temporary_allocations"] <= 100010,
               "temporaries %d" % a["temporary_allocations"])
    good &= ok(a["peak_sites"] and a["peak_sites"][0]["function"] == "burst",
               "top site at the peak: burst")
    good &= ok(sum(s["est_bytes"] for s in a["peak_sites"]) <= a["peak_bytes"] + 1,
               "sites at the peak at most the peak")
    good &= ok(a["temporary_sites"] and
               a["temporary_sites"][0]["function"] == "temporary",
               "top temporary site: temporary")
    good &= ok(a["live"] and "leak_here" in a["live"][0]["stack"][0],
               "top live site: leak_here")
    good &= ok(a["peak_ns"] > 0 and a["heap_points"] >= 48,
               "peak_ns %d, %d heap points" % (a["peak_ns"], a["heap_points"]))
    for s in ("peak heap:", "heap over time", "temporary allocations"):
        good &= ok(s in t, "summary says %r" % s)
    return good


def ht_num(text, label):
    m = re.search(label + r": ([0-9.]+)([KMG]?)", text)
    return float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def ht_top(text, section, n):
    """The first functions of a section of heaptrack_print's report."""
    m = re.search(section + r"\n(.*?)(?=\n\n[A-Z]|\Z)", text, re.S)
    if not m:
        return []
    out = []
    lines = m.group(1).split("\n")
    for i, line in enumerate(lines):
        if re.match(r"^[0-9.]+[KMG]?B? .* from$", line) and i + 1 < len(lines):
            out.append(lines[i + 1].strip())
    return out[:n]


def heaptrack(sj, ht, exact=False):
    a = main_alloc(sj)
    t = open(ht).read()
    peak, leaked = ht_num(t, "peak heap memory consumption"), ht_num(t, "total memory leaked")
    temps = ht_num(t, "temporary memory allocations")
    # heaptrack counts the bytes asked for, rte the usable bytes: the
    # peak compared in the bytes asked for (the run's own ratio)
    r = a["usable_bytes"] / a["bytes"] if a["bytes"] else 1
    ours = a["peak_bytes"] / r
    good = ok(abs(ours - peak) <= 0.05 * peak,
              "peak %d usable (%d asked for), heaptrack %.0f" % (a["peak_bytes"], ours, peak))
    good &= ok(abs(a["live_bytes_at_exit"] - leaked) <= 0.05 * leaked + 1024,
               "leaked %d, heaptrack %.0f" % (a["live_bytes_at_exit"], leaked))
    # heaptrack's temporary: a free whose (size, stack) is that of the
    # last allocation (its allocation-info index): every free of the last
    # block is one, and so are some others
    if exact:
        good &= ok(a["temporary_allocations"] == temps,
                   "temporaries %d, heaptrack %.0f" % (a["temporary_allocations"], temps))
    else:
        good &= ok(0.5 * temps <= a["temporary_allocations"] <= temps * 1.01,
                   "temporaries %d, heaptrack %.0f" % (a["temporary_allocations"], temps))
        return good
    for name, sect, ours_top in (
            ("peak", "PEAK MEMORY CONSUMERS", [s["function"] for s in a["peak_sites"]]),
            ("temporary", "MOST TEMPORARY ALLOCATIONS",
             [s["function"] for s in a["temporary_sites"]]),
            ("leak", "MEMORY LEAKS", [s["stack"][0].split(" ")[0] for s in a["live"]])):
        theirs = [f for f in ht_top(t, sect, 5) if not f.startswith("0x")]
        good &= ok(theirs and ours_top and theirs[0] == ours_top[0],
                   "top %s site: rte %s, heaptrack %s" % (name, ours_top[:5], theirs))
    return good


def chrome(js, sj):
    a = main_alloc(sj)
    d = json.load(open(js))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    h = [e["args"]["live bytes"] for e in ev
         if e.get("ph") == "C" and e.get("name") == "rte.alloc.heap"]
    return ok(h and a["peak_bytes"] - 2 * MIB <= max(h) <= a["peak_bytes"],
              "%d heap counter points, max %d, peak %d" % (len(h), max(h or [0]), a["peak_bytes"]))


def bad(sj, want, txt=None):
    ps = [p["alloc_profile"] for p in procs(sj)]
    want = int(want)
    good = ok(len(ps) == 2, "%d processes (bad and its fork child)" % len(ps))
    parent = max(ps, key=lambda a: a["calls"])
    child = min(ps, key=lambda a: a["calls"])
    good &= ok(want <= parent["temporary_allocations"] <= want + 5,
               "parent's temporaries %s, made %d" % (parent["temporary_allocations"], want))
    good &= ok(parent["live_bytes_at_exit"] < 64 * 1024,
               "parent's live at exit %s" % parent["live_bytes_at_exit"])
    good &= ok(parent["frees"] >= want and parent["calls"] >= want,
               "parent's calls %d, frees %d" % (parent["calls"], parent["frees"]))
    good &= ok(MIB <= child["peak_bytes"] <= MIB + 64 * 1024 and
               child["live_bytes_at_exit"] < 64 * 1024,
               "child's peak %s, live at exit %s" % (child["peak_bytes"], child["live_bytes_at_exit"]))
    if txt:
        # the child's heap line: up at 1 MiB, then down to nothing at its
        # end (the last column is its last point, not the highest before)
        lines = [l for l in open(txt).read().splitlines()
                 if "heap over time" in l and "top %d bytes" % child["peak_bytes"] in l]
        cells = lines[0].split("|")[1] if lines else ""
        good &= ok(cells and "\u2588" in cells and cells[-1] == " ",
                   "child's heap line %r ends at 0" % cells)
    return good


def peak(sj, want, low):
    """The peak at least want - low, at most want + 256 KiB (libc's own
    blocks, the program's array)."""
    a = main_alloc(sj)
    want, low = int(want), int(low)
    return ok(want - low <= a["peak_bytes"] <= want + 256 * 1024,
              "peak %d, the blocks live at once %d (at most %d low)"
              % (a["peak_bytes"], want, low))


def ht_sites(data):
    """Bytes asked for per leaf function (the caller of the allocating
    function) from a heaptrack data file: heaptrack_print ranks sites by
    calls, peak and temporaries, not by bytes. Its text (zstd): "s"
    strings, "i" an instruction pointer (ip, module, [function, file,
    line...]), "t" a trace (ip index, parent), "a" an allocation kind (size,
    trace), "+" one allocation of a kind. A frame without a function is
    named as rte-read names it: module+0xOFFSET of the return address
    (heaptrack's ip is one before it; the offset is the address in a
    non-PIE executable, the only such frames here: Debian's python3)."""
    text = subprocess.run(["zstdcat", data], stdout=subprocess.PIPE,
                          text=True, check=True).stdout
    strings, ips, traces, kinds, per = [None], [None], [None], [], {}
    for line in text.splitlines():
        f = line.split(" ")
        if f[0] == "s":
            strings.append(line.split(" ", 2)[2] if len(f) > 2 else "")
        elif f[0] == "i":
            ips.append((int(f[1], 16), int(f[2], 16),
                        int(f[3], 16) if len(f) > 3 else 0))
        elif f[0] == "t":
            traces.append(int(f[1], 16))
        elif f[0] == "a":
            kinds.append((int(f[1], 16), int(f[2], 16)))
        elif f[0] == "+":
            size, trace = kinds[int(f[1], 16)]
            ip, mod, fn = ips[traces[trace]] if trace else (0, 0, 0)
            if fn:
                name = strings[fn]
            else:
                name = "%s+0x%x" % (os.path.basename(strings[mod] or "?"), ip + 1)
            per[name] = per.get(name, 0) + size
    return per


def sites(sj, data, out=None):
    a = main_alloc(sj)
    ours = {s["function"]: s for s in a["sites"]}
    theirs = ht_sites(data)
    # the sites of at least 1 % of the bytes: below that, the sites of the
    # start-up (libstdc++'s emergency pool, allocated before librte.so's
    # constructor counts anything) tie with each other
    floor_o = 0.01 * sum(s["est_bytes"] for s in ours.values())
    floor_t = 0.01 * sum(theirs.values())
    top_o = sorted((f for f in ours if ours[f]["est_bytes"] >= floor_o),
                   key=lambda f: -ours[f]["est_bytes"])[:5]
    top_t = sorted((f for f in theirs if theirs[f] >= floor_t),
                   key=lambda f: -theirs[f])[:5]
    for f in top_t:
        print("     heaptrack %-40s %12d  rte %12.0f (+-%.1f %%)"
              % (f, theirs[f], ours[f]["est_bytes"] if f in ours else 0,
                 100 * ours[f]["rel_error"] if f in ours else 0))
    good = ok(len(top_t) >= 4 and set(top_o) == set(top_t),
              "top %d sites by bytes: rte %s, heaptrack %s"
              % (len(top_t), sorted(top_o), sorted(top_t)))
    # each within 5 % of heaptrack's bytes, or 3 of its error bars
    good &= ok(all(f in ours and abs(ours[f]["est_bytes"] - theirs[f]) <=
                   max(0.05, 3 * ours[f]["rel_error"]) * theirs[f] for f in top_t),
               "their bytes within 5 % (or 3 error bars) of heaptrack's")
    if out:
        want = {}
        for line in open(out):
            w = line.split()
            if len(w) == 3 and w[0] == "site":
                want[w[1]] = int(w[2])
        good &= ok(want and all(theirs.get(f) == b for f, b in want.items()),
                   "heaptrack's bytes per site as the program says (%d sites)" % len(want))
        good &= ok(all(f in ours and abs(ours[f]["est_bytes"] - b) <= 0.05 * b
                       for f, b in want.items()),
                   "rte's estimates within 5 % of the bytes asked for")
        order = sorted(want, key=lambda f: -want[f])[:5]
        good &= ok(top_o == order, "rte's order %s, the program's %s" % (top_o, order))
    return good


def grow(sj, out, period):
    a = main_alloc(sj)
    ours = {s["function"]: s for s in a["sites"]}
    want, growth = {}, 0
    for line in open(out):
        w = line.split()
        if len(w) == 3 and w[0] == "site":
            want[w[1]] = int(w[2])
        elif len(w) == 2 and w[0] == "growth":
            growth = int(w[1])
    period = int(period)
    good = ok(set(want) <= set(ours), "sites %s among rte's %s"
              % (sorted(want), sorted(ours)))
    if not good:
        return False
    g = ours["grow_here"]
    # the clock advances by each realloc's growth, at least 1/8 of its
    # size: 1 KiB per step up to 8 KiB, then k/8 KiB (263 KiB per buffer
    # of the 2080 KiB asked for); counting the whole size took
    # bytes / period samples, eight times as many
    clock = growth * 263 / 64
    good &= ok(g["samples"] <= 1.5 * clock / period,
               "grow_here: %d samples, the growth's clock calls for about "
               "%.0f (the whole sizes' for %.0f)"
               % (g["samples"], clock / period, want["grow_here"] / period))
    for f, b in sorted(want.items()):
        s = ours[f]
        good &= ok(abs(s["est_bytes"] - b) <= max(0.05, 3 * s["rel_error"]) * b,
                   "%s: estimated %.0f bytes (+-%.1f %%, %d samples), asked "
                   "for %d" % (f, s["est_bytes"], 100 * s["rel_error"],
                               s["samples"], b))
    return good


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "heaptrack":
        r = heaptrack(args[0], args[1], len(args) > 2)
    else:
        r = {"shape": shape, "chrome": chrome, "bad": bad, "peak": peak,
             "sites": sites, "grow": grow}[cmd](*args)
    sys.exit(0 if r else 1)
