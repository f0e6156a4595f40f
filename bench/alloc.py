"""bench/alloc.py - the allocation profiler's rows of make bench (imported
by bench/run.py): bench/mallocs (2 threads, 10 M malloc/free pairs of
16..1040 bytes, 64 live blocks per thread) untraced, against RTE_ALLOC=1,
tracing on without RTE_ALLOC, and heaptrack; then the fidelity of the
samples: the top 5 allocation sites by bytes (estimated from the
rte.alloc.sample records with include/rte/profile.h's estimator) against
heaptrack's, and the estimated total bytes against the exact total the
program prints.

heaptrack 1.4's heaptrack_print ranks sites by calls, peak and temporary
allocations, not by bytes allocated: heaptrack's bytes per site are read
from its own data file (zstd text: "s" strings, "i" instruction pointers,
"t" traces, "a" size and trace of an allocation kind, "+" one allocation).
"""
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def rte_sites(read, files):
    """Estimated bytes per site and in all, as rte-read's summary-json
    reports them (the estimator of include/rte/profile.h)."""
    out = subprocess.run([read, "-f", "summary-json"] + files,
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    per, total = {}, 0.0
    for p in json.loads(out)["processes"]:
        prof = p.get("alloc_profile") or {}
        total += prof.get("est_bytes", 0.0)
        for site in prof.get("sites", []):
            per[site["function"]] = (per.get(site["function"], 0.0)
                                     + site["est_bytes"])
    return per, total


def heaptrack_sites(data):
    """Bytes per leaf function from a heaptrack data file."""
    text = subprocess.run(["zstdcat", data], stdout=subprocess.PIPE,
                          text=True, check=True).stdout
    strings, ips, traces, infos, per = [None], [None], [None], [], {}
    for line in text.splitlines():
        f = line.split(" ")
        k = f[0]
        if k == "s":
            strings.append(line.split(" ", 2)[2] if len(f) > 2 else "")
        elif k == "i":
            ips.append(int(f[3], 16) if len(f) > 3 else 0)
        elif k == "t":
            traces.append(int(f[1], 16))
        elif k == "a":
            infos.append((int(f[1], 16), int(f[2], 16)))
        elif k == "+":
            size, trace = infos[int(f[1], 16)]
            fn = ips[traces[trace]] if trace else 0
            name = strings[fn] if fn else "?"
            per[name] = per.get(name, 0) + size
    return per


def timed(cmd, env):
    """(wall seconds, CPU seconds: user + system) of one run of cmd."""
    with open(os.devnull, "w") as null:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=env, stdout=null,
                             stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        t = time.monotonic() - t0
        err = p.stderr.read().decode()
        p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), err[-300:]))
    return t, ru.ru_utime + ru.ru_stime


def medians(runs):
    """(median wall, median CPU) of a list of timed() results."""
    return (statistics.median(r[0] for r in runs),
            statistics.median(r[1] for r in runs))


def bench_alloc(build, rounds, pairs, row, base_env, traced_env):
    exe = os.path.join(build, "bench", "mallocs")
    read = os.path.join(build, "rte-read")
    tmp = tempfile.mkdtemp(prefix="rte-bench-alloc-")
    have_ht = shutil.which("heaptrack") and shutil.which("zstdcat")
    try:
        plain = base_env(build)
        on = traced_env(build, tmp)
        on["RTE_ALLOC"] = "1"
        off = traced_env(build, tmp)
        t = {"plain": [], "on": [], "off": [], "heaptrack": []}
        ht_data = None
        for r in range(rounds):
            t["plain"].append(timed([exe, str(pairs)], plain))
            t["on"].append(timed([exe, str(pairs)], on))
            t["off"].append(timed([exe, str(pairs)], off))
            for f in os.listdir(tmp):
                if f.endswith(".events"):
                    os.unlink(os.path.join(tmp, f))
            # heaptrack is slow: at most 3 rounds
            if have_ht and r < 3:
                out = os.path.join(tmp, "ht%d" % r)
                t["heaptrack"].append(timed(
                    ["heaptrack", "-o", out, exe, str(pairs)], plain))
                ht_data = out + ".zst"
        base, base_cpu = medians(t["plain"])
        on, on_cpu = medians(t["on"])
        off, off_cpu = medians(t["off"])
        row("alloc: malloc-heavy program, RTE_ALLOC=1", on, "s",
            "same program untraced", base, "<= 1.3x", on / base <= 1.3,
            "2 threads, %d malloc/free pairs of 16..1040 B; CPU time "
            "ratio %.2f" % (pairs, on_cpu / base_cpu))
        row("alloc: same, tracing on, RTE_ALLOC unset", off, "s",
            "same program untraced", base, "<= 1.05x", off / base <= 1.05,
            "CPU time ratio %.2f" % (off_cpu / base_cpu))
        if t["heaptrack"]:
            ht, ht_cpu = medians(t["heaptrack"])
            row("alloc: same under heaptrack", ht, "s",
                "same program untraced", base, None, None,
                "%d rounds; CPU time ratio %.2f"
                % (len(t["heaptrack"]), ht_cpu / base_cpu))
        else:
            row("alloc: same under heaptrack", float("nan"), "s", None, None,
                None, None, "skipped: heaptrack or zstdcat not installed")
        fidelity(exe, read, tmp, pairs, ht_data, row, traced_env, build)
        shapes(build, tmp, rounds, pairs, row, base_env, traced_env, have_ht)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def shapes(build, tmp, rounds, pairs, row, base_env, traced_env, have_ht):
    """bench/heapshapes: RTE_ALLOC=1 (with the heap: peak, series,
    temporaries) against untraced and heaptrack, per shape, wall and CPU
    ratios side by side."""
    exe = os.path.join(build, "bench", "heapshapes")
    plain = base_env(build)
    on = traced_env(build, tmp)
    on["RTE_ALLOC"] = "1"
    for shape, what in (("lifo", "LIFO pairs, 1 thread"),
                        ("realloc", "realloc growth by 1 KiB to 64 KiB"),
                        ("threads", "16 threads, 16 live blocks each")):
        n = pairs if shape != "realloc" else pairs // 4
        cmd = [exe, shape, str(n)]
        t = {"plain": [], "on": [], "heaptrack": []}
        for r in range(rounds):
            t["plain"].append(timed(cmd, plain))
            t["on"].append(timed(cmd, on))
            for f in os.listdir(tmp):
                if f.endswith(".events"):
                    os.unlink(os.path.join(tmp, f))
            if have_ht and r < 2:
                out = os.path.join(tmp, "hs%d" % r)
                t["heaptrack"].append(timed(["heaptrack", "-o", out] + cmd, plain))
                if os.path.exists(out + ".zst"):
                    os.unlink(out + ".zst")
        base, base_cpu = medians(t["plain"])
        w, cpu = medians(t["on"])
        note = "%s, %d calls; CPU ratio %.2f" % (what, n, cpu / base_cpu)
        if t["heaptrack"]:
            hw, hcpu = medians(t["heaptrack"])
            note += "; heaptrack %.2fx wall, %.2fx CPU" % (hw / base, hcpu / base_cpu)
        row("alloc: %s, RTE_ALLOC=1" % shape, w, "s", "same untraced", base,
            "<= 1.3x", w / base <= 1.3 and cpu / base_cpu <= 1.3, note)


def fidelity(exe, read, tmp, pairs, ht_data, row, traced_env, build):
    d = os.path.join(tmp, "fid")
    os.mkdir(d)
    env = traced_env(build, d)
    env["RTE_ALLOC"] = "1"
    env["OCAML_RUNTIME_EVENTS_PRESERVE"] = "1"
    env["OCAMLRUNPARAM"] = "e=20"  # rings of 8 MiB: none wraps
    out = subprocess.run([exe, str(pairs)], env=env, stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    true_total = int([l for l in out.splitlines()
                      if l.startswith("bytes ")][0].split()[1])
    files = [os.path.join(d, f) for f in os.listdir(d)
             if f.endswith(".events")]
    per, est = rte_sites(read, files)
    err = abs(est - true_total) / true_total
    row("alloc: estimated total bytes from samples", est / 1e9, "GB",
        "exact total", true_total / 1e9, "within 5 %", err <= 0.05,
        "error %.2f %%; RTE_ALLOC_SAMPLE default (512 KiB)" % (100 * err))
    ours = [s for s, _ in sorted(per.items(), key=lambda x: -x[1])][:5]
    if not ht_data or not os.path.exists(ht_data):
        row("alloc: top 5 sites by bytes = heaptrack's", float("nan"), "",
            None, None, None, None, "skipped: no heaptrack data; ours: "
            + " ".join(ours))
        return
    hp = heaptrack_sites(ht_data)
    theirs = [s for s, _ in sorted(hp.items(), key=lambda x: -x[1])][:5]
    same = sum(1 for a, b in zip(ours, theirs) if a == b)
    row("alloc: top 5 sites by bytes = heaptrack's", same, "of 5", None, None,
        "5 of 5", same == 5, "rte: %s; heaptrack: %s"
        % (" ".join(ours), " ".join(theirs)))
