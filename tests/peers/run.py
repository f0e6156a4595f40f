#!/usr/bin/env python3
"""run.py - CPython's own regression tests, plain and under rte.

    run.py [--build DIR] [--jobs N] [--modes M,...] [--keep] [MODULE...]

`make check-peers` runs it. Each regression module (default: the list of
tests/peers/modules.txt) runs as `/usr/bin/python3 -m test -j1
--fail-env-changed --timeout S --junit-xml M.xml M` (Debian's
libpython3.11-testsuite), once per mode:

    plain, plain2   without rte, twice (flaky tests are found this way)
    trace           LD_PRELOAD=librte.so OCAML_RUNTIME_EVENTS_START=1
    prof            trace + RTE_PROFILE=997
    alloc           trace + RTE_ALLOC=1
    rte-run         rte-run -q -- python3 -m test ...

Every run gets its own TMPDIR, XDG_RUNTIME_DIR, working directory and
(traced) OCAML_RUNTIME_EVENTS_DIR, all fresh and empty, and an environment
without any LD_PRELOAD, OCAML_RUNTIME_EVENTS_* or RTE_* of the caller.
After it, everything a mode should not leave is recorded (compare.py
reports it): any file in the events directory (no mode sets PRESERVE; if
files remain, a traced /bin/true is started in the directory once every
run is done and --sweep-wait seconds have passed, so that a shim that
sweeps stale files at start gets its chance; what still remains is
recorded, except a crashed process's file, which the shim keeps by design:
that is listed in `kept`), any ring file or rte leftover elsewhere in the run's folders,
and rte-run's own temporary files.

Results go to DIR/peers/ (DIR: --build): MODE/M.xml, .out, .rc, times.txt
and report.txt (compare.py's report). Exit status: compare.py's (1 if any
test differs or a mode left files behind), 2 on a usage error.
"""
import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import compare  # noqa: E402

PYTHON = "/usr/bin/python3"
OURS = ("LD_PRELOAD",)
OUR_PREFIXES = ("OCAML_RUNTIME_EVENTS_", "RTE_")


def load_modules(path):
    """(name, seconds, regrtest arguments) of each line of modules.txt,
    in its order: NAME SECONDS [ARG...]; the arguments default to NAME
    (a line that runs part of a module names it and gives `MODULE -m
    PATTERN`). Shell-like quotes; '#' starts a comment."""
    mods = []
    with open(path) as f:
        for line in f:
            words = shlex.split(line, comments=True)
            if words:
                mods.append((words[0], float(words[1]) if len(words) > 1
                             else 10, words[2:] or [words[0]]))
    return mods


def clean_env():
    return {k: v for k, v in os.environ.items()
            if k not in OURS and not k.startswith(OUR_PREFIXES)}


def traced_env(env, lib, events, mode):
    env = dict(env, LD_PRELOAD=lib, OCAML_RUNTIME_EVENTS_START="1",
               OCAML_RUNTIME_EVENTS_DIR=events)
    if mode == "prof":
        env["RTE_PROFILE"] = "997"
    if mode == "alloc":
        env["RTE_ALLOC"] = "1"
    return env


def rte_files(root, skip=None):
    """Paths under root that are named like something rte writes."""
    found = []
    for d, dirs, files in os.walk(root):
        if skip and os.path.abspath(d) == skip:
            dirs[:] = []
            continue
        for n in files + dirs:
            if ".events" in n or n.startswith(("rte-run.", "rte-run-log.",
                                               "rte-run-env.")):
                found.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(found)


def short(names, n=4):
    return " ".join(names[:n]) + (" ..." if len(names) > n else "")


class Runner:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.lib = os.path.join(self.build, "librte.so")
        self.rte_run = os.path.join(self.build, "rte-run")
        self.res = os.path.join(self.build, "peers")
        base = os.environ.get("TMPDIR") or "/tmp"
        self.work = tempfile.mkdtemp(prefix="rte-peers.", dir=base)
        self.lock = threading.Lock()
        self.times = []
        self.procs = set()
        self.pending = []

    def log(self, msg):
        with self.lock:
            print(msg, flush=True)

    def run_one(self, mode, index, module, margs):
        job = os.path.join(self.work, mode, str(index))
        tmp, events, xdg, cwd = (os.path.join(job, s) for s in "texc")
        for d in (tmp, events, xdg, cwd):
            os.makedirs(d, mode=0o700)
        out_dir = os.path.join(self.res, mode)
        xml = os.path.join(out_dir, module + ".xml")
        cmd = [PYTHON, "-m", "test", "-j1", "--fail-env-changed",
               "--timeout", str(self.args.timeout), "--junit-xml", xml] + margs
        env = dict(clean_env(), TMPDIR=tmp, XDG_RUNTIME_DIR=xdg)
        if mode in ("trace", "prof", "alloc"):
            env = traced_env(env, self.lib, events, mode)
        elif mode == "rte-run":
            cmd = [self.rte_run, "-q", "--"] + cmd
        start = time.monotonic()
        with open(os.path.join(out_dir, module + ".out"), "wb") as out:
            p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                 stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
            with self.lock:
                self.procs.add(p)
            try:
                rc = p.wait(timeout=self.args.timeout * 2 + 120)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                rc = p.wait()
                out.write(b"\nrun.py: killed after the outer timeout\n")
                rc = "killed after the outer timeout"
            with self.lock:
                self.procs.discard(p)
        took = time.monotonic() - start
        with open(os.path.join(out_dir, module + ".rc"), "w") as f:
            f.write("%s\n" % rc)
        left = []
        busy = (mode not in compare.PLAIN) and len(os.listdir(events))
        if mode not in compare.PLAIN:
            left = ["elsewhere: %s" % x
                    for x in rte_files(job, skip=os.path.abspath(events))]
            self.record(mode, left and ["%s: %s" % (module, x) for x in left])
        if busy:
            # Looked at once every run is done (sweep()).
            with self.lock:
                self.pending.append((mode, module, events))
            for sub in (tmp, xdg, cwd):
                if not self.args.keep:
                    shutil.rmtree(sub, ignore_errors=True)
        elif not self.args.keep:
            shutil.rmtree(job, ignore_errors=True)
        with self.lock:
            self.times.append((mode, module, took, rc))
        self.log("peers: %-7s %-34s %6.1f s  rc %s%s%s  (load %.2f)"
                 % (mode, module, took, rc,
                    "  %d left elsewhere" % len(left) if left else "",
                    "  %d in the events dir" % busy if busy else "",
                    os.getloadavg()[0]))

    def record(self, mode, lines, name="leftover"):
        if lines:
            with self.lock, open(os.path.join(self.res, mode, name),
                                 "a") as f:
                f.writelines(line + "\n" for line in lines)

    def sweep(self):
        """What the events directories still hold. No mode sets PRESERVE,
        but a process killed by SIGKILL leaves its file until a later
        traced start sweeps it: wait --sweep-wait seconds, start a traced
        /bin/true in each directory, then record what remains."""
        if not self.pending:
            return
        time.sleep(self.args.sweep_wait)
        for mode, module, events in sorted(self.pending):
            subprocess.run(["/bin/true"], env=traced_env(clean_env(), self.lib,
                                                          events, "trace"))
            names = sorted(os.listdir(events))
            if not names:
                continue
            r = subprocess.run([os.path.join(self.build, "rte-read"),
                                "--dry-run", "--clean", events],
                               capture_output=True, text=True)
            gone, crashed = set(), set()
            for line in r.stdout.splitlines():
                path = line.split(": ", 1)[0]
                if line.startswith("would remove "):
                    gone.add(os.path.basename(path))
                elif line.startswith("kept ") and " crashed" in line:
                    crashed.add(os.path.basename(path))
            other = [n for n in names if n not in gone | crashed]
            if crashed:
                # A crashed process's file is kept by design (its rte.crash
                # record): listed, not counted.
                self.record(mode, ["%s: %d crashed processes' files (%s)"
                                   % (module, len(crashed),
                                      short(sorted(crashed)))], "kept")
            if gone or other:
                self.record(mode, ["%s: %d files left in the events dir: "
                                   "%d of a writer gone without ring_stop "
                                   "(killed; rte-read --clean removes them: "
                                   "%s), %d others (%s)"
                                   % (module, len(gone) + len(other),
                                      len(gone), short(sorted(gone)),
                                      len(other), short(other))])

    def canary(self, mode):
        """Check that MODE's environment traces at all: a python3 that
        starts a child, its files kept (PRESERVE) in a fresh directory,
        must give both processes' ring_start, and rte.sample events with
        RTE_PROFILE, alloc events with RTE_ALLOC. A harness whose traced
        runs are not traced would compare plain with plain."""
        d = tempfile.mkdtemp(prefix="canary.", dir=self.work)
        code = ("import subprocess, time; subprocess.run(['/bin/true']); "
                "t = time.time()\nwhile time.time() - t < 0.3: "
                "[str(i) for i in range(1000)]")
        cmd = [PYTHON, "-c", code]
        env = clean_env()
        if mode == "rte-run":
            cmd = [self.rte_run, "-q", "-d", os.path.join(d, "e"), "--"] + cmd
        else:
            os.mkdir(os.path.join(d, "e"))
            env = traced_env(env, self.lib, os.path.join(d, "e"), mode)
            env["OCAML_RUNTIME_EVENTS_PRESERVE"] = "1"
        p = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True)
        r = subprocess.run([os.path.join(self.build, "rte-read"), "-f",
                            "jsonl", os.path.join(d, "e")],
                           capture_output=True, text=True)
        shutil.rmtree(d, ignore_errors=True)
        starts = r.stdout.count('"name":"ring_start"')
        want = [(p.returncode == 0, "exit status %d, stderr %r"
                 % (p.returncode, p.stderr[-300:].strip())),
                (r.returncode == 0, "rte-read exit status %d: %s"
                 % (r.returncode, r.stderr[-300:].strip())),
                (starts >= 2, "%d ring_start, not >= 2" % starts)]
        if mode == "prof":
            want.append(('"rte.sample"' in r.stdout, "no rte.sample event"))
        if mode == "alloc":
            want.append(('"kind":"alloc"' in r.stdout, "no alloc event"))
        bad = [why for ok, why in want if not ok]
        if bad:
            with open(os.path.join(self.res, mode, "canary"), "w") as f:
                f.writelines("%s\n" % why for why in bad)
            self.log("peers: %s does not trace: %s" % (mode, "; ".join(bad)))

    def run(self, modules, modes):
        shutil.rmtree(self.res, ignore_errors=True)
        for mode in modes:
            os.makedirs(os.path.join(self.res, mode))
            if mode not in compare.PLAIN:
                self.canary(mode)
        # Mode after mode, each mode's modules longest first: two jobs at
        # a time are two different modules (no port or name clashes
        # between two copies of one module) and the ends pack well.
        order = sorted(range(len(modules)), key=lambda i: -modules[i][1])
        queue = [(mode, i, modules[i][0], modules[i][2])
                 for mode in modes for i in order]
        qlock = threading.Lock()

        def worker():
            while True:
                with qlock:
                    if not queue:
                        return
                    job = queue.pop(0)
                self.run_one(*job)

        threads = [threading.Thread(target=worker)
                   for _ in range(max(1, self.args.jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.sweep()

    def cleanup(self):
        for p in list(self.procs):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        if not self.args.keep:
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            print("peers: work kept in %s" % self.work)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("--build", default="build")
    ap.add_argument("--jobs", type=int,
                    default=int(os.environ.get("PEERS_JOBS", "2")))
    ap.add_argument("--modes", default=",".join(compare.MODES))
    ap.add_argument("--timeout", type=int, default=300,
                    help="regrtest's --timeout (seconds per test module)")
    ap.add_argument("--sweep-wait", type=float, default=5)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("modules", nargs="*")
    args = ap.parse_args()
    modes = args.modes.split(",")
    bad = [m for m in modes if m not in compare.MODES]
    if bad or "plain" not in modes:
        print("run.py: --modes: 'plain' and some of %s (not %s)"
              % (",".join(compare.MODES), ",".join(bad)), file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.join(os.path.dirname(PYTHON),
                                      "../lib/python3.11/test")):
        print("run.py: CPython's test suite is missing: "
              "apt-get install libpython3.11-testsuite", file=sys.stderr)
        return 2
    listed = load_modules(os.path.join(HERE, "modules.txt"))
    known = {m[0]: m for m in listed}
    modules = ([known.get(m, (m, 10, [m])) for m in args.modules]
               if args.modules else listed)
    # A shell starts background jobs with SIGINT and SIGQUIT ignored, and
    # an ignored signal stays ignored across exec: CPython's tests of
    # KeyboardInterrupt would then fail in every mode. Give the tests the
    # default dispositions whoever started us (a handler becomes the
    # default at exec); Ctrl-C still stops run.py, which kills its jobs.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)
    r = Runner(args)
    for path in (r.lib, r.rte_run):
        if not os.path.exists(path):
            print("run.py: %s missing (make all first)" % path, file=sys.stderr)
            return 2
    start = time.monotonic()
    load0 = os.getloadavg()
    try:
        r.run(modules, modes)
    finally:
        r.cleanup()
    wall = time.monotonic() - start
    with open(os.path.join(r.res, "times.txt"), "w") as f:
        for mode, module, took, rc in sorted(r.times):
            f.write("%s %s %.1f rc=%s\n" % (mode, module, took, rc))
        f.write("wall %.0f s, %d jobs, load at start %.2f %.2f %.2f, "
                "at end %.2f %.2f %.2f\n" % ((wall, args.jobs) + load0 +
                                            os.getloadavg()))
    with open(os.path.join(r.res, "report.txt"), "w") as f:
        problems = compare.compare(r.res, out=f)
    with open(os.path.join(r.res, "report.txt")) as f:
        sys.stdout.write(f.read())
    print("peers: %d modules x %d modes in %.0f s with %d jobs (load %.2f at "
          "start, %.2f at end); results in %s"
          % (len(modules), len(modes), wall, args.jobs, load0[0],
             os.getloadavg()[0], r.res))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
