#!/usr/bin/env python3
"""make bench: rte's speed claims, each measured against its baseline in the
same run, interleaved over several rounds; prints one table of medians and
ratios and writes the same as JSON.

usage: bench/run.py BUILD_DIR [--rounds N] [--quick] [--json FILE]
                    [--only GROUP[,GROUP...]]

Groups: producer, spawn, process, reader, many-files, lttng, backtrace,
alloc (bench/alloc.py), drain (bench/drain.py), footprint and workloads
(bench/workloads.py: 1,000 live traced processes' files; configure and
make -j2 untraced, under the shim, rte-run and strace -f).
`--only reader,many-files` measures just the reader rows (e.g. to compare
a change with its base: run it on each build directory).

Each row names its goal (from the issues) and whether it was met. Timings on
a shared machine are noisy: the median of the rounds is reported, and every
figure is compared only with a baseline measured in the same rounds.
"""
import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import prof  # bench/prof.py: the CPU profiler's rows (issue 15)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benv  # noqa: E402  (bench/benv.py: the clean starting environment)
import alloc  # noqa: E402  (bench/alloc.py: the allocation profiler's rows)
import drain  # noqa: E402  (bench/drain.py: rte-run's live drain)
import ocaml  # noqa: E402  (bench/ocaml.py: OCaml 5.2's own producer row)
import workloads  # noqa: E402  (bench/workloads.py: configure, make, footprint)

ROWS = []
GROUPS = ("producer", "spawn", "process", "reader", "many-files", "lttng",
          "backtrace", "profiler", "alloc", "drain", "footprint", "workloads")
RTE_INT = None  # rte's int event median, for the LTTng-UST comparison


def row(name, value, unit, baseline=None, base_value=None, goal=None,
        met=None, note=""):
    ratio = None
    if base_value:
        ratio = value / base_value
    ROWS.append({"figure": name, "median": round(value, 3), "unit": unit,
                 "baseline": baseline,
                 "baseline_median": None if base_value is None
                 else round(base_value, 3),
                 "ratio": None if ratio is None else round(ratio, 3),
                 "goal": goal, "met": met, "note": note})


def parse_lines(text):
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            d = json.loads(line)
            out.setdefault(d["name"], []).extend(d["ns"])
    return out


def run(cmd, env=None, stdout=subprocess.PIPE):
    p = subprocess.run(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE,
                       text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode,
                                                    p.stderr.strip()))
    return p.stdout


def base_env(build):
    env = benv.clean_env()
    env["LD_LIBRARY_PATH"] = build
    return env


def traced_env(build, tmp):
    env = base_env(build)
    env["LD_PRELOAD"] = os.path.join(build, "librte.so")
    env["OCAML_RUNTIME_EVENTS_START"] = "1"
    env["OCAML_RUNTIME_EVENTS_DIR"] = tmp
    return env


def bench_producer(build, tmp, rounds, events):
    env = base_env(build)
    env["OCAML_RUNTIME_EVENTS_DIR"] = tmp
    exe = os.path.join(build, "bench", "producer")
    m = parse_lines(run([exe, str(events), str(rounds)], env=env))
    med = {k: statistics.median(v) for k, v in m.items()}
    clock, store = med["clock_gettime"], med["store_only"]
    global RTE_INT
    RTE_INT = med["int"]
    for name, label in (("int", "int user event"),
                        ("begin_end", "user span begin/end (per event)"),
                        ("runtime_begin_end", "runtime begin/end (per event)")):
        v = med[name]
        row("producer: " + label, v, "ns/event", "clock_gettime loop", clock,
            "<= 10 ns", v <= 10.0,
            "rdtsc alone %.2f ns (ratio %.2f); store-only loop %.2f ns"
            % (med["rdtsc"], v / med["rdtsc"] if med["rdtsc"] else 0, store))
    floor = med["rdtsc"] + store
    row("producer: int event / (rdtsc + stores), the floor", med["int"],
        "ns/event", "rdtsc alone + the 3 stores alone", floor, "ratio <= 1.1",
        med["int"] <= 1.1 * floor if floor else None,
        "ratio = int %.2f / (rdtsc %.2f + stores %.2f = %.2f) = %.2fx; the "
        "rest, %.2f ns: the checks (tracing active, thread attached and not "
        "busy, the id's type), the clock's scaling (period test, multiply, "
        "shift) and the ring's limit and mark tests (shim/api.c emit)"
        % (med["int"], med["rdtsc"], store, floor,
           med["int"] / floor if floor else 0, med["int"] - floor))
    row("producer: 64-byte custom event", med["custom64"], "ns/event",
        "store-only loop", store, None, None)
    row("producer: call while never started", med["int_not_started"],
        "ns/call", "empty loop", med["empty_loop"], "<= 1 ns",
        med["int_not_started"] <= 1.0)
    row("producer: call while paused", med["int_paused"], "ns/call",
        "empty loop", med["empty_loop_2"], "<= 1 ns", med["int_paused"] <= 1.0)
    one, two = med["int_1thread_wall"], med["int_2threads_wall"]
    scaling = one / two
    row("producer: 2 threads, throughput vs 1 thread", scaling, "x",
        None, None, ">= 1.8x (no shared cache lines)", scaling >= 1.8,
        "wall ns/event: 1 thread %.2f, 2 threads %.2f" % (one, two))


def default_env(build):
    """Tracing started in the default directory (no OCAML_RUNTIME_EVENTS_DIR):
    what a user gets."""
    env = base_env(build)
    env["LD_PRELOAD"] = os.path.join(build, "librte.so")
    env["OCAML_RUNTIME_EVENTS_START"] = "1"
    return env


def cpu_row(label, plain, traced, goal):
    """The CPU time per child (this process and its children) of the same
    rounds: a second reading of a goal, less disturbed than the wall time
    by other work on a shared machine."""
    a, b = statistics.median(plain), statistics.median(traced)
    row(label + ", CPU time", b / 1000.0, "us", "same loop without shim",
        a / 1000.0, "<= %gx" % goal, b / a <= goal,
        "CPU time of the loop and its children (getrusage)")


def bench_spawn(build, tmp, rounds, n_threads, n_forks):
    exe = os.path.join(build, "bench", "spawn")
    plain, traced = base_env(build), default_env(build)
    # PRESERVE (in tmp, removed after each run): a child that writes
    # nothing and is reaped makes no file; one that writes an event
    # keeps its own.
    kept = dict(traced_env(build, tmp), OCAML_RUNTIME_EVENTS_PRESERVE="1")
    res = {}
    for _ in range(rounds):
        for kind, n, label, env in (
                ("threads", n_threads, "", plain),
                ("threads", n_threads, "_shim", traced),
                ("fork", n_forks, "", plain),
                ("fork", n_forks, "_shim", traced),
                ("fork", n_forks, "_preserve", kept),
                ("forkw", n_forks, "_preserve", kept)):
            m = parse_lines(run([exe, kind, str(n), label], env=env))
            for k, v in m.items():
                res.setdefault(k, []).extend(v)
            for f in os.listdir(tmp):
                os.unlink(os.path.join(tmp, f))
    ddir = default_dir()
    for kind, label, goal in (("threads", "pthread_create+join", 1.5),
                              ("fork", "fork+_exit+waitpid", 1.3)):
        a = statistics.median(res[kind])
        b = statistics.median(res[kind + "_shim"])
        row("shim: " + label, b / 1000.0, "us", "same loop without shim",
            a / 1000.0, "<= %gx" % goal, b / a <= goal,
            "default dir %s (%s)" % (ddir, fs_type(os.path.dirname(ddir))))
        if kind + "_cpu" in res:
            cpu_row("shim: " + label, res[kind + "_cpu"],
                    res[kind + "_cpu_shim"], goal)
    a = statistics.median(res["fork"])
    b = statistics.median(res["fork_preserve"])
    row("shim: fork+_exit+waitpid, PRESERVE", b / 1000.0, "us",
        "same loop without shim", a / 1000.0, "<= 1.3x", b / a <= 1.3,
        "a child that writes nothing and is reaped makes no file (%s)"
        % fs_type(tmp))
    b = statistics.median(res["forkw_preserve"])
    row("shim: fork+event+_exit+waitpid, PRESERVE", b / 1000.0, "us",
        "fork+_exit+waitpid without shim", a / 1000.0, "< 8x", b / a < 8.0,
        "each child writes one event: it makes and keeps its file (%s)"
        % fs_type(tmp))
    subshells(build, tmp, rounds, kept, plain)


def subshells(build, tmp, rounds, kept, plain):
    """A shell loop of command substitutions (fork children that only
    exit, as a configure script's): untraced, under the shim with
    PRESERVE, and under rte-run, wall ratios side by side."""
    script = "i=0; while [ $i -lt 300 ]; do x=$(echo $i); i=$((i+1)); done"
    cmd = ["/bin/sh", "-c", script]
    rte_run = [os.path.join(build, "rte-run"), "-q", "--"]
    t = {"plain": [], "kept": [], "run": []}
    for _ in range(rounds):
        t["plain"].append(timed(cmd, plain)[0])
        t["kept"].append(timed(cmd, kept)[0])
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        t["run"].append(timed(rte_run + cmd, plain)[0])
        t.setdefault("true", []).append(timed(rte_run + ["/bin/true"], plain)[0])
        t.setdefault("true0", []).append(timed(["/bin/true"], plain)[0])
    row("rte-run: fixed cost, rte-run -q -- /bin/true",
        statistics.median(t["true"]) * 1000.0, "ms", "/bin/true untraced",
        statistics.median(t["true0"]) * 1000.0, None, None,
        "rte-run's own start, drain and summary (a shell script: each "
        "program it runs costs a millisecond or more on a VM)")
    a = statistics.median(t["plain"])
    for key, what in (("kept", "shim, PRESERVE"), ("run", "rte-run")):
        b = statistics.median(t[key])
        shim = key == "kept"
        row("%s: 300 subshells of sh" % what, b * 1000.0, "ms",
            "same script untraced", a * 1000.0, "<= 1.3x" if shim else None,
            b / a <= 1.3 if shim else None,
            "x=$(echo $i) in a loop: fork children that only exit"
            + ("" if shim else "; with rte-run's fixed cost (above)"))


def fs_type(path):
    """The file system type of the mount holding path (from /proc/mounts)."""
    best, kind = "", "?"
    path = os.path.realpath(path)
    try:
        with open("/proc/mounts") as f:
            for line in f:
                p = line.split()
                if len(p) > 2 and (path == p[1] or path.startswith(
                        p[1].rstrip("/") + "/")) and len(p[1]) > len(best):
                    best, kind = p[1], p[2]
    except OSError:
        pass
    return kind


def default_dir():
    """librte.so's default directory (common/format/rundir.h) for this user."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, "rte")
    root = "/tmp"
    if (fs_type("/tmp") != "tmpfs" and fs_type("/dev/shm") == "tmpfs"
            and os.access("/dev/shm", os.W_OK | os.X_OK)):
        root = "/dev/shm"
    return "%s/rte-%d" % (root, os.geteuid())


def bench_process(build, tmp, rounds, n_exec, n_threads):
    """What a test harness pays per traced process: fork+exec+exit of
    /bin/true with tracing started in the child image, in the default
    directory (what a user gets; the goal), with the crash recorder off
    (what it still costs), and in a directory of /tmp when that is not
    where the default is (what the default saves); and the peak RSS of a
    program with n_threads threads alive, each having written an event."""
    exe = os.path.join(build, "bench", "spawn")
    plain = base_env(build)
    default = default_env(build)
    ddir = default_dir()
    envs = [("", plain), ("_default", default),
            ("_default_nobt", dict(default, RTE_BACKTRACE="off"))]
    if os.path.dirname(ddir) != "/tmp" and fs_type(tmp) != "tmpfs":
        envs.append(("_tmp", traced_env(build, tmp)))
    res = {}
    for _ in range(rounds):
        # RSS: untraced and the default only.
        for kind, n, which in (("exec", n_exec, envs),
                               ("rss", n_threads, envs[:2])):
            for label, env in which:
                m = parse_lines(run([exe, kind, str(n), label], env=env))
                for k, v in m.items():
                    res.setdefault(k, []).extend(v)
    a = statistics.median(res["exec"])
    for label, where in (("_default", "default dir %s (%s)"
                          % (ddir, fs_type(os.path.dirname(ddir)))),
                         ("_default_nobt", "default dir, RTE_BACKTRACE=off "
                          "(no crash recorder: what it costs)"),
                         ("_tmp", "dir in %s (%s), not the default"
                          % (tmp, fs_type(tmp)))):
        if "exec" + label not in res:
            continue
        b = statistics.median(res["exec" + label])
        goal = "<= 1.3x" if label == "_default" else None
        row("shim: fork+exec+exit of /bin/true, " + label[1:], b / 1000.0,
            "us", "same loop without shim", a / 1000.0, goal,
            None if goal is None else b / a <= 1.3, where)
        if label == "_default":
            cpu_row("shim: fork+exec+exit of /bin/true", res["exec_cpu"],
                    res["exec_cpu_default"], 1.3)
    a = statistics.median(res["rss"]) / 1024.0
    b = statistics.median(res["rss_default"]) / 1024.0
    row("shim: RSS, %d threads alive" % n_threads, b, "MiB",
        "same program without shim", a, "<= +4 MiB", b - a <= 4.0,
        "difference %+.2f MiB" % (b - a))


def timed(cmd, env):
    """Wall seconds and peak RSS (KiB) of one run of cmd, output discarded."""
    with open(os.devnull, "w") as null:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=env, stdout=null,
                             stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        t1 = time.monotonic()
        err = p.stderr.read().decode()
        p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), code, err))
    return t1 - t0, ru.ru_maxrss


def bench_reader(build, tmp, rounds, events):
    gen = os.path.join(build, "bench", "gen")
    reader = os.path.join(build, "rte-read")
    env = base_env(build)
    small, big = os.path.join(tmp, "small.events"), os.path.join(tmp, "big.events")
    run([gen, small, str(events)])
    run([gen, big, str(events * 4)])
    t = {"summary": [], "jsonl": [], "cat": []}
    rss = {"small": [], "big": []}
    for _ in range(rounds):
        t["cat"].append(timed(["cat", small], env)[0])
        for fmt in ("summary", "jsonl"):
            s, kib = timed([reader, "--format=" + fmt, small], env)
            t[fmt].append(s)
            if fmt == "summary":
                rss["small"].append(kib)
        rss["big"].append(timed([reader, "--format=summary", big], env)[1])
    n = events
    cat_rate = n / statistics.median(t["cat"]) / 1e6
    for fmt, goal in (("summary", 50.0), ("jsonl", 10.0)):
        rate = n / statistics.median(t[fmt]) / 1e6
        row("reader: --format=%s, %d events" % (fmt, n), rate, "M events/s",
            "cat of the same file", cat_rate, ">= %g M/s" % goal, rate >= goal)
    # gc-stats against summary on the 4x file (the OCaml version scan,
    # a bounded pre-read of each ring, is included)
    tg = {"summary": [], "gc-stats": []}
    for _ in range(rounds):
        for fmt in tg:
            tg[fmt].append(timed([reader, "--format=" + fmt, big], env)[0])
    gc_rate = 4 * n / statistics.median(tg["gc-stats"]) / 1e6
    row("reader: --format=gc-stats, %d events" % (4 * n), gc_rate, "M events/s",
        "--format=summary", 4 * n / statistics.median(tg["summary"]) / 1e6,
        ">= 50 M/s", gc_rate >= 50.0, "ratio = gc-stats / summary rate")
    # rte-read diff of two summary-json files (a CI gate's cost)
    sa, sb = os.path.join(tmp, "a.sum.json"), os.path.join(tmp, "b.sum.json")
    for src, dst in ((small, sa), (big, sb)):
        with open(dst, "w") as f:
            subprocess.run([reader, "--format=summary-json", src], stdout=f,
                           env=env, check=True)
    td = [timed([reader, "diff", "--fail-if", "count(minor) < -100%", sa, sb], env)[0]
          for _ in range(rounds)]
    ms = statistics.median(td) * 1e3
    row("reader: diff of two summary-json files", ms, "ms", None, None,
        "< 50 ms", ms < 50.0)
    a, b = statistics.median(rss["small"]), statistics.median(rss["big"])
    row("reader: peak RSS of summary, %d vs %d events" % (4 * n, n), b / 1024.0,
        "MiB", "%d events" % n, a / 1024.0, "flat (<= 1.25x for 4x events)",
        b / a <= 1.25,
        "peak RSS counts the mapped pages of the file that were read")


def many_files(src, d, n):
    """n copies of ring file src in directory d, named <pid>.events, with
    the holes of src kept (a copy is a few KiB on disk)."""
    with open(src, "rb") as f:
        data = bytearray(f.read())
    size = len(data)
    # the pid of ring_start (ring 0's first message, data word 2): each
    # copy is the file of a process of its own
    pid_at = int.from_bytes(data[48:56], "little") + 16
    used = len(data.rstrip(b"\0"))
    used = (used + 4095) // 4096 * 4096
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        fd = os.open(os.path.join(d, "%d.events" % (100000 + i)),
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        data[pid_at:pid_at + 8] = (100000 + i).to_bytes(8, "little")
        os.write(fd, data[:used])
        os.ftruncate(fd, size)
        os.close(fd)


def bench_many_files(build, tmp, rounds, n_summary, n_clean):
    """rte-read on directories of many small files (issue 12, item 13)."""
    gen = os.path.join(build, "bench", "gen")
    reader = os.path.join(build, "rte-read")
    env = base_env(build)
    fin, stale = os.path.join(tmp, "fin.events"), os.path.join(tmp, "stale.events")
    run([gen, fin, "20", "1"])
    run([gen, stale, "20", "1", "nostop"])
    big, small = os.path.join(tmp, "many"), os.path.join(tmp, "many100")
    many_files(fin, big, n_summary)
    many_files(fin, small, n_summary // 100)
    t, rss, t0, rss0 = [], [], [], []
    for _ in range(max(1, rounds // 5)):  # each run is long: fewer rounds
        s, kib = timed([reader, "-f", "summary", big], env)
        t.append(s)
        rss.append(kib)
        s, kib = timed([reader, "-f", "summary", small], env)
        t0.append(s)
        rss0.append(kib)
    a, b = statistics.median(t0), statistics.median(t)
    row("reader: summary of %d small files" % n_summary, b, "s",
        "%d of them (x100 is linear)" % (n_summary // 100), a, "< 10 s", b < 10)
    a, b = statistics.median(rss0) / 1024.0, statistics.median(rss) / 1024.0
    row("reader: peak RSS, summary of %d small files" % n_summary, b, "MiB",
        "%d of them" % (n_summary // 100), a, "< 200 MiB", b < 200)
    shutil.rmtree(big, ignore_errors=True)
    shutil.rmtree(small, ignore_errors=True)
    t, t0 = [], []
    for _ in range(max(1, rounds // 5)):
        many_files(stale, big, n_clean)
        many_files(stale, small, n_clean // 10)
        time.sleep(0.1)  # --clean keeps files changed as it starts
        t.append(timed([reader, "--clean", big], env)[0])
        t0.append(timed([reader, "--clean", small], env)[0])
        left = len(os.listdir(big))
    a, b = statistics.median(t0), statistics.median(t)
    row("reader: --clean of %d stale files" % n_clean, b, "s",
        "%d of them (x10 is linear)" % (n_clean // 10), a, "< 5 s", b < 5,
        "" if left == 0 else "%d files kept (pid 4242 alive?)" % left)
    shutil.rmtree(big, ignore_errors=True)
    shutil.rmtree(small, ignore_errors=True)


def bench_backtrace(build, rounds):
    """Cost of one crash-time stack capture (libunwind), cached against
    uncached, on a stack of a known depth."""
    exe = os.path.join(build, "bench", "backtrace")
    if not os.path.exists(exe):
        row("crash: backtrace capture", float("nan"), "us", None, None, None,
            None, "skipped: %s was not built" % exe)
        return
    m = parse_lines(run([exe]))
    med = {k: statistics.median(v) for k, v in m.items()}
    frames = int(med.get("backtrace_frames", 0))
    row("crash: backtrace capture, %d frames (trace cache)" % frames,
        med["backtrace_capture"] / 1000.0, "us", "uncached unwind",
        med["backtrace_capture_uncached"] / 1000.0, None, None,
        "frame-by-frame with libunwind's cache: %.1f us"
        % (med["backtrace_capture_step"] / 1000.0))
    if "backtrace_signal" in med:
        row("profiler: stack capture in a signal handler, %d frames"
            % int(med["backtrace_signal_frames"]),
            med["backtrace_signal"] / 1000.0, "us",
            "frame-pointer walk (RTE_PROFILE_STACK=fp)",
            med["backtrace_signal_fp"] / 1000.0, None, None,
            "libunwind from the signal frame vs one process_vm_readv a "
            "frame (%d frames)" % int(med["backtrace_signal_fp_frames"]))


def lttng(*args):
    return subprocess.run(["lttng"] + list(args), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)


def bench_lttng(build, tmp, rounds, events, rte_int):
    """An enabled LTTng-UST tracepoint with an rte int event's payload, in
    a session of its own, against rte's int event of this run."""
    name = "LTTng-UST enabled tracepoint"
    exe = os.path.join(build, "bench", "lttng")
    why = None
    if not os.path.exists(exe):
        why = "liblttng-ust-dev was not installed when the benchmarks were built"
    elif shutil.which("lttng") is None or shutil.which("lttng-sessiond") is None:
        why = "lttng-tools is not installed"
    elif lttng("list").returncode != 0:
        subprocess.run(["lttng-sessiond", "--daemonize"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        if lttng("list").returncode != 0:
            why = "no lttng-sessiond could be reached or started"
    if why is None:
        session = "rte-bench-%d" % os.getpid()
        steps = (("create", session, "--output=" + os.path.join(tmp, "lttng")),
                 ("enable-event", "-u", "-s", session, "rte_bench:*"),
                 ("start", session))
        for step in steps:
            p = lttng(*step)
            if p.returncode != 0:
                why = "lttng %s failed: %s" % (step[0], p.stderr.strip())
                break
        if why is None:
            try:
                m = parse_lines(run([exe, str(events), str(rounds)]))
            finally:
                lttng("destroy", session)
            v = statistics.median(m["lttng_int"])
            row(name, v, "ns/event", "rte int event, this run", rte_int,
                None, None, "ratio = LTTng / rte; session in discard mode")
            return
        lttng("destroy", session)
    row(name, float("nan"), "ns/event", None, None, None, None,
        "skipped: " + why)


def print_table():
    print()
    print("%-52s %12s %-11s %10s %7s  %-22s %s" % (
        "figure", "median", "unit", "baseline", "ratio", "goal", "met"))
    print("-" * 128)
    for r in ROWS:
        med = "n/a" if r["median"] != r["median"] else "%.2f" % r["median"]
        base = "" if r["baseline_median"] is None else "%.2f" % r["baseline_median"]
        ratio = "" if r["ratio"] is None else "%.2f" % r["ratio"]
        met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
        print("%-52s %12s %-11s %10s %7s  %-22s %s" % (
            r["figure"][:52], med, r["unit"], base, ratio, r["goal"] or "", met))
        if r["baseline"] or r["note"]:
            print("    %s%s%s" % ("baseline: " + r["baseline"] if r["baseline"] else "",
                                  "; " if r["baseline"] and r["note"] else "",
                                  r["note"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true",
                    help="fewer events and rounds (a smoke test, not figures)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default=None, metavar="GROUP[,GROUP...]",
                    help="run only these groups of rows: " + ", ".join(GROUPS))
    a = ap.parse_args()
    # workloads (configure, make -j2 of this project, each four ways)
    # takes 10 minutes or more: only when asked (make bench-workloads).
    only = set([g for g in GROUPS if g != "workloads"] if a.only is None
               else a.only.split(","))
    if not only <= set(GROUPS):
        ap.error("--only: unknown group(s) %s; groups: %s" % (
            ", ".join(sorted(only - set(GROUPS))), ", ".join(GROUPS)))
    build = os.path.abspath(a.build)
    rounds = 3 if a.quick else a.rounds
    events = 200000 if a.quick else 2000000
    tmp = tempfile.mkdtemp(prefix="rte-bench-")
    start = time.monotonic()
    try:
        if "producer" in only:
            bench_producer(build, tmp, rounds, events)
            ocaml.bench_ocaml(tmp, rounds, events, RTE_INT, row, parse_lines, run)
        if "spawn" in only:
            bench_spawn(build, tmp, rounds, 200 if a.quick else 2000,
                        50 if a.quick else 300)
        if "process" in only:
            bench_process(build, tmp, rounds, 30 if a.quick else 200, 100)
        if "reader" in only:
            bench_reader(build, tmp, rounds, 250000 if a.quick else 1000000)
        if "many-files" in only:
            bench_many_files(build, tmp, rounds,
                             10000 if a.quick else 100000, 10000)
        if "lttng" in only:
            bench_lttng(build, tmp, rounds, events // 2, RTE_INT)
        if "backtrace" in only:
            bench_backtrace(build, rounds)
        if "profiler" in only:
            prof.bench_profiler(build, rounds, a.quick, row)
        if "alloc" in only:
            alloc.bench_alloc(build, rounds,
                              1000000 if a.quick else 10000000,
                              row, base_env, traced_env)
        if "drain" in only:
            drain.bench_drain(build, rounds, a.quick, row)
        if "footprint" in only:
            workloads.bench_footprint(build, a.quick, row)
        if "workloads" in only:
            workloads.bench_workloads(build, rounds, a.quick, row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_table()
    info = {"machine": platform.node(), "cpu": cpu_model(),
            "cores": os.cpu_count(), "kernel": platform.release(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "rounds": rounds, "seconds": round(time.monotonic() - start, 1),
            "rows": ROWS}
    out = a.json or os.path.join(build, "bench.json")
    with open(out, "w") as f:
        json.dump(info, f, indent=1, default=lambda x: None)
    print("\n%s, %d cores, %d rounds, %.0f s; JSON: %s" % (
        info["cpu"], info["cores"], rounds, info["seconds"], out))
    return 0


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


if __name__ == "__main__":
    sys.exit(main())
