"""bench/workloads.py: what tracing costs on real process-heavy work, and
what traced processes occupy (issue 24, "Cost per process"); called by
bench/run.py (groups "workloads" and "footprint").

workloads: each command runs untraced, under the shim (LD_PRELOAD, tracing
started, the default directory: what a user gets), under `rte-run -q`
(drained into a temporary directory) and under `strace -f` (every system
call of every process written to a file: the well-known way to see a
process tree), interleaved round by round; each row gives the median of
the per-round ratios to the untraced run of the same round, so that a
drift of the shared machine's speed cancels out.

- an autoconf `./configure` (configure.ac below: a C compiler, 40
  headers, 40 functions, 10 type sizes; autoconf from Debian's package
  makes the script once, untimed). Without autoconf, a shell script that
  forks about 3,000 small processes stands in, and the row says so.
- `make -j2` of this project (its sources copied to a temporary
  directory, built from scratch each time; --quick: rte-read only).

footprint: 1,000 live traced processes (`sleep`) tracing into one
directory of /dev/shm: the blocks their files hold (st_blocks, what du
and tmpfs count), in all and per process.
"""
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

import benv  # bench/benv.py: the clean starting environment

HEADERS = ("stdio.h stdlib.h string.h strings.h inttypes.h stdint.h "
           "unistd.h fcntl.h errno.h limits.h locale.h math.h setjmp.h "
           "signal.h stdarg.h stddef.h time.h wchar.h wctype.h ctype.h "
           "assert.h float.h dirent.h dlfcn.h poll.h pthread.h pwd.h grp.h "
           "termios.h sys/types.h sys/stat.h sys/time.h sys/wait.h "
           "sys/mman.h sys/socket.h sys/resource.h sys/ioctl.h sys/select.h "
           "netinet/in.h arpa/inet.h")
FUNCS = ("memcpy memmove memset strchr strrchr strdup strndup strerror "
         "strtol strtoul strtoll strtod snprintf vsnprintf asprintf "
         "getline getdelim fork vfork execvp waitpid pipe pipe2 dup2 "
         "mmap munmap mprotect sigaction sigprocmask nanosleep "
         "clock_gettime gettimeofday getpagesize sysconf setlocale "
         "posix_spawn posix_memalign realpath readlink")
TYPES = ("int long", "long long", "void *", "size_t", "off_t", "time_t",
         "short", "double", "long double", "pid_t")
CONFIGURE_AC = """AC_INIT([rtebench], [1.0])
AC_CONFIG_SRCDIR([main.c])
AC_PROG_CC
AC_CHECK_HEADERS([%s])
AC_CHECK_FUNCS([%s])
%s
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
""" % (HEADERS, FUNCS,
       "\n".join("AC_CHECK_SIZEOF([%s])" % t for t in TYPES))

# The stand-in without autoconf: what a configure does, in shape.
FORKS_SH = """i=0
while [ $i -lt 1000 ]; do
  x=$(echo $i | tr 0 1); /bin/true; test -n "$x" && : ; i=$((i + 1))
done
"""


def _env():
    return benv.clean_env()


def _wall(cmd, env, cwd):
    """Wall seconds of cmd (output discarded); raises if it fails."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, check=False)
    t1 = time.monotonic()
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (
            " ".join(cmd), p.returncode, p.stderr.strip()[-400:]))
    return t1 - t0


def _variants(build, tmp):
    """(label, prefix, env) of each way to run a command."""
    plain = _env()
    shim = dict(plain, LD_PRELOAD=os.path.join(build, "librte.so"),
                OCAML_RUNTIME_EVENTS_START="1")
    out = [("untraced", [], plain), ("shim", [], shim),
           ("rte-run", [os.path.join(build, "rte-run"), "-q", "--"], plain)]
    if shutil.which("strace"):
        out.append(("strace -f", ["strace", "-f", "-qq", "-o",
                                  os.path.join(tmp, "strace.out"), "--"],
                    plain))
    return out


def _measure(name, variants, rounds, cmd, cwd, before, row, goals, note):
    """Runs cmd under each variant, `before` (a function) first each time;
    one row per traced variant: its median wall time and the median of
    its per-round ratios to the untraced run. note: a function, called
    once every run is done."""
    t = {v[0]: [] for v in variants}
    for _ in range(rounds):
        for label, prefix, env in variants:
            before()
            t[label].append(_wall(prefix + cmd, env, cwd))
    base = t["untraced"]
    note = note()
    for label, _, _ in variants[1:]:
        ratio = statistics.median(b / a for a, b in zip(base, t[label]))
        goal = goals.get(label)
        row("%s, %s" % (name, label), statistics.median(t[label]), "s",
            "untraced, same rounds", statistics.median(base),
            None if goal is None else "<= %gx" % goal,
            None if goal is None else ratio <= goal,
            "median of per-round ratios %.2f; %s" % (ratio, note))


def _processes(tmp):
    """Processes and execs in the strace -f output of the last run."""
    path = os.path.join(tmp, "strace.out")
    pids, execs = set(), 0
    try:
        with open(path, errors="replace") as f:
            for line in f:
                pid = line.split(" ", 1)[0]
                if pid.isdigit():
                    pids.add(pid)
                # "execve(...) = 0", or "<... execve resumed>) = 0"
                # when another process's line came in between
                if "execve" in line and line.rstrip().endswith("= 0"):
                    execs += 1
    except OSError:
        return None
    return len(pids), execs


def bench_configure(build, tmp, rounds, row):
    d = os.path.join(tmp, "conf")
    os.makedirs(d)
    variants = _variants(build, tmp)
    if shutil.which("autoconf"):
        with open(os.path.join(d, "configure.ac"), "w") as f:
            f.write(CONFIGURE_AC)
        with open(os.path.join(d, "main.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        with open(os.path.join(d, "Makefile.in"), "w") as f:
            f.write("all:\n\ttrue\n")
        subprocess.run(["autoconf"], cwd=d, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        name, cmd = "autoconf ./configure", ["sh", "./configure", "-q"]
    else:
        with open(os.path.join(d, "forks.sh"), "w") as f:
            f.write(FORKS_SH)
        name, cmd = ("shell loop of 3,000 processes (no autoconf)",
                     ["sh", "forks.sh"])

    def clean():
        for f in ("config.log", "config.status", "config.h", "Makefile"):
            if os.path.exists(os.path.join(d, f)):
                os.unlink(os.path.join(d, f))

    _measure(name, variants, rounds, cmd, d, clean, row,
             {"shim": 1.05, "rte-run": 1.10}, lambda: "processes: %s" % (
                 "%d (%d execs), counted by strace -f" % _processes(tmp)
                 if _processes(tmp) else "?"))


def bench_make(build, tmp, rounds, quick, row):
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    d = os.path.join(tmp, "src")
    shutil.copytree(src, d, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", "build", "build-*", "work.*"))
    b = os.path.join(tmp, "b")
    target = [os.path.join(b, "rte-read")] if quick else ["all"]

    def clean():
        shutil.rmtree(b, ignore_errors=True)

    _measure("make -j2 of this project%s" % (" (rte-read)" if quick else ""),
             _variants(build, tmp), rounds,
             ["make", "-s", "-j2", "BUILD=" + b] + target, d, clean, row,
             {"shim": 1.05}, lambda: "sources copied, built from scratch "
             "each run; processes: %s" % ("%d (%d execs), counted by "
                                          "strace -f" % _processes(tmp)
                                          if _processes(tmp) else "?"))


def bench_workloads(build, rounds, quick, row):
    tmp = tempfile.mkdtemp(prefix="rte-bench-work-")
    try:
        bench_configure(build, tmp, 1 if quick else min(rounds, 3), row)
        bench_make(build, tmp, 1 if quick else min(rounds, 2), quick, row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _blocks(d):
    n, total = 0, 0
    for f in os.listdir(d):
        if f.endswith(".events"):
            try:
                total += os.lstat(os.path.join(d, f)).st_blocks * 512
                n += 1
            except OSError:
                pass
    return n, total


def bench_footprint(build, quick, row):
    """1,000 (100 with --quick) traced `sleep` processes alive at once."""
    n = 100 if quick else 1000
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    d = tempfile.mkdtemp(prefix="rte-bench-live-", dir=base)
    env = dict(_env(), LD_PRELOAD=os.path.join(build, "librte.so"),
               OCAML_RUNTIME_EVENTS_START="1", OCAML_RUNTIME_EVENTS_DIR=d)
    procs = []
    try:
        for _ in range(n):
            procs.append(subprocess.Popen(["sleep", "600"], env=env))
        deadline = time.monotonic() + 60
        while _blocks(d)[0] < n and time.monotonic() < deadline:
            time.sleep(0.1)
        files, total = _blocks(d)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            p.wait()
        shutil.rmtree(d, ignore_errors=True)
    per = total / max(files, 1) / 1024
    row("footprint: %d live traced processes, their files" % n,
        total / 1048576, "MiB", None, None, "<= 64 KiB per process",
        files == n and per <= 64,
        "%d files in %s, %.1f KiB each (allocated blocks)" % (
            files, base or "the temporary directory", per))
