"""bench/drain.py: the rows of rte-run's live drain (issue 26), called by
bench/run.py (group "drain").

- the highest event rate 2 writer threads can sustain without a lost
  word, with the drain (rte-run's defaults) and without it (--no-drain:
  the rings read after the command, as before the drain), both printed
  and their ratio; the rates tried are a ladder, the figure the highest
  rung passed in every round;
- the disk a capture takes per event (span events, 2 words each),
  packed (zstd, the default) and --no-compress;
- the drain's cost on a program writing 1 M events a second: the
  program's own CPU time (it prints it, and its wall time) drained / not
  drained, the same ring size for both, so that only the drain differs.
  The lossless rates are for runs of half a second (0.2 s with --quick):
  read after the fact, a ring holds a fixed number of events, whatever
  the rate.

The program is tests/run/spans (tests/run/progs/spans.c).
"""
import os
import statistics
import subprocess
import tempfile

import benv  # bench/benv.py: the clean starting environment

LADDER = (0.05e6, 0.1e6, 0.25e6, 0.5e6, 1e6, 2e6, 5e6, 10e6, 20e6, 50e6)


def _env():
    return benv.clean_env()


def _rte_run(build, args, env, tmp):
    """rte-run -q ARGS; returns (exit status, stdout)."""
    p = subprocess.run([os.path.join(build, "rte-run"), "-q"] + args, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       cwd=tmp, check=False)
    if p.returncode not in (0, 121):
        raise RuntimeError("rte-run %s failed (%d): %s" % (" ".join(args), p.returncode,
                                                         p.stderr.strip()))
    return p.returncode, p.stdout


def _lossless(build, env, tmp, rate, drain, seconds):
    """1 if 2 threads at `rate` events/s in all (for `seconds`) lose nothing."""
    pairs = max(1000, int(rate / 2 * seconds / 2))
    args = ["--fail-on-lost"] + ([] if drain else ["--no-drain"])
    st, _ = _rte_run(build, args + ["--", os.path.join(build, "tests/run/spans"),
                                    str(pairs), "2", str(rate / 2)], env, tmp)
    return st == 0


def _highest(build, env, tmp, drain, rounds, seconds):
    best = 0.0
    for rate in LADDER:
        if not all(_lossless(build, env, tmp, rate, drain, seconds) for _ in range(rounds)):
            break
        best = rate
    return best


def _bytes_per_event(build, env, tmp, plain):
    """Disk per span event of the captures of 2 threads x 500 k pairs (at
    1 M events/s: lossless), packed (the default) or --no-compress."""
    d = tempfile.mkdtemp(prefix="cap-", dir=tmp)
    out = os.path.join(d, "t")
    _rte_run(build, (["--no-compress"] if plain else []) +
             ["-d", out, "--", os.path.join(build, "tests/run/spans"),
              "500000", "2", "1000000"], env, tmp)
    disk = 0
    for n in os.listdir(out):
        if n.endswith(".events"):
            disk += os.stat(os.path.join(out, n)).st_blocks * 512
    subprocess.run(["rm", "-rf", d], check=False)
    return disk / (2 * 500000 * 2)


def _work_for(build, env, per_pair_s):
    """The WORK of spans that makes one pair take per_pair_s untraced."""
    spans = os.path.join(build, "tests/run/spans")
    work, pairs = 64, 200000
    for _ in range(6):
        t = float(subprocess.run([spans, str(pairs), "1", "0", str(work)], env=env,
                                 stdout=subprocess.PIPE, text=True,
                                 check=True).stdout.split()[0])
        work = max(1, int(work * per_pair_s / (t / pairs)))
    return work


def bench_drain(build, rounds, quick, row):
    env = _env()
    tmp = tempfile.mkdtemp(prefix="rte-bench-drain-")
    seconds = 0.2 if quick else 0.5
    tries = 1 if quick else 3
    try:
        new = _highest(build, env, tmp, True, tries, seconds)
        old = _highest(build, env, tmp, False, tries, seconds)
        row("drain: highest rate, 0 lost (2 threads)", new / 1e6, "M ev/s",
            baseline="--no-drain (rings read after the command)",
            base_value=old / 1e6 if old else None, goal=">= 10 M ev/s",
            met=new >= 10e6,
            note="rungs %s M ev/s; all of %d rounds lossless" % (
                "/".join("%g" % (r / 1e6) for r in LADDER), tries))
        row("drain: disk per span event (capture, packed)",
            _bytes_per_event(build, env, tmp, False), "B/event",
            baseline="--no-compress (sparse ring file)",
            base_value=_bytes_per_event(build, env, tmp, True),
            note="a span event is 2 words (16 B plain); packed: zstd level 1 "
                 "per data extent (doc/FORMAT.md 16.1)")
        # 1 M events/s in all: 2 threads, each a pair every 4 us.
        work = _work_for(build, env, 4e-6)
        pairs = 100000 if quick else 500000
        cmd = ["--", os.path.join(build, "tests/run/spans"), str(pairs), "2", "0", str(work)]
        env_e = dict(env, OCAMLRUNPARAM="e=18")
        drained, plain = [], []
        for _ in range(max(3, rounds // 2)):
            drained.append([float(x) for x in _rte_run(build, cmd, env_e, tmp)[1].split()])
            plain.append([float(x) for x in
                          _rte_run(build, ["--no-drain"] + cmd, env_e, tmp)[1].split()])
        # CPU time: on a shared machine the wall time mostly measures the
        # neighbours; the program's own CPU seconds are what the drain
        # could add to (cache lines it pulls, preemptions).
        d = statistics.median(x[1] for x in drained)
        p = statistics.median(x[1] for x in plain)
        dw = statistics.median(x[0] for x in drained)
        pw = statistics.median(x[0] for x in plain)
        row("drain: cost at 1 M ev/s (program CPU time)", d * 1e3, "ms",
            baseline="the same, --no-drain (same 2^18 rings)", base_value=p * 1e3,
            goal="ratio <= 1.05", met=d / p <= 1.05,
            note="%d pairs x 2 threads, work %d; wall %.0f ms vs %.0f ms" % (
                pairs, work, dw * 1e3, pw * 1e3))
    finally:
        subprocess.run(["rm", "-rf", tmp], check=False)
