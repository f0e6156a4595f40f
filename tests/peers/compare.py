#!/usr/bin/env python3
"""compare.py - compare CPython regression results, plain against traced.

    compare.py WORK          report on the runs tests/peers/run.py left in
                             WORK; exit 1 if any test's result differs
                             between the plain runs and a traced mode, or
                             a traced mode left files behind; 0 otherwise
    compare.py --self-test   check this script on fake result files it
                             writes (a planted difference must be found)

WORK holds one folder per run (MODES below, in that order); each holds,
per regression module M, what `python3 -m test -j1 --junit-xml M.xml M`
left: M.xml (absent if the worker died before reporting), M.rc (its exit
status) and M.out (its output), and optionally `leftover`: one line per
file the mode should not have left, and `canary`: why the mode's
environment did not trace a small program, and `kept`: files the mode
leaves by design (a crashed process's), listed but not counted (run.py
writes all three).

The outcome of a test case is pass, fail, error or skip (from the
<failure>, <error> and <skipped> children of its <testcase>); a test
absent from a run is "missing" there. Each module also has a pseudo test
"M [module]" whose outcome is regrtest's exit status and its "Tests
result:" line, so a crash, a timeout or an altered environment (regrtest
runs with --fail-env-changed) shows even when no test case changes.

The plain run is made twice ("plain" and "plain2"). A test whose outcome
differs between the two is flaky without rte: it is not compared, and it
is listed as such, with what each traced mode gave, so that nothing is
hidden.
"""
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

PLAIN = ("plain", "plain2")
TRACED = ("trace", "prof", "alloc", "rte-run")
MODES = PLAIN + TRACED
DESCR = {
    "trace": "LD_PRELOAD=librte.so OCAML_RUNTIME_EVENTS_START=1",
    "prof": "the same + RTE_PROFILE=997",
    "alloc": "the same + RTE_ALLOC=1",
    "rte-run": "rte-run -q -- ...",
}


def case_reason(case):
    """A failing test's exception (what follows its traceback's last
    frame), on one line."""
    for child in case:
        if child.tag in ("error", "failure"):
            lines = (child.text or child.get("message") or "").splitlines()
            frames = [i for i, l in enumerate(lines) if l.startswith("  File ")]
            if frames:
                lines = lines[frames[-1] + 2:]
            text = " | ".join(l.strip() for l in lines if l.strip())
            return text[:300]
    return ""


def case_outcome(case):
    """pass, fail, error or skip for one <testcase> element."""
    tags = {child.tag for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "fail"
    if "skipped" in tags:
        return "skip"
    return "pass"


def module_outcome(folder, module):
    """'rc=N RESULT' for one module's run, or None if it was not run."""
    rc_path = os.path.join(folder, module + ".rc")
    if not os.path.exists(rc_path):
        return None
    with open(rc_path) as f:
        rc = f.read().strip()
    result = "no result line"
    out_path = os.path.join(folder, module + ".out")
    if os.path.exists(out_path):
        with open(out_path, errors="replace") as f:
            for line in f:
                m = re.match(r"Tests result: (.*)", line.strip())
                if m:
                    result = m.group(1)
    return "rc=%s %s" % (rc, result)


REASONS = {}


def load_run(folder):
    """{test: outcome} of one run folder (test cases and module lines);
    REASONS[(folder, test)] is a failing test's exception line."""
    results = {}
    if not os.path.isdir(folder):
        return None
    modules = sorted(n[:-3] for n in os.listdir(folder) if n.endswith(".rc"))
    for module in modules:
        results[module + " [module]"] = module_outcome(folder, module)
        xml_path = os.path.join(folder, module + ".xml")
        if not os.path.exists(xml_path):
            continue
        try:
            tree = ET.parse(xml_path)
        except ET.ParseError as e:
            results[module + " [junit]"] = "unreadable: %s" % e
            continue
        for case in tree.iter("testcase"):
            name = case.get("name") or "?"
            # A test reported twice (subtests) keeps its worst outcome.
            out = case_outcome(case)
            prev = results.get(name)
            if prev is None or RANK[out] > RANK[prev]:
                results[name] = out
                REASONS[(folder, name)] = case_reason(case)
    return results


RANK = {"pass": 0, "skip": 1, "fail": 2, "error": 3}


def load_lines(folder, name):
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def compare(work, out=sys.stdout):
    """Print the report; return the number of problems found."""
    runs = {mode: load_run(os.path.join(work, mode)) for mode in MODES}
    if runs["plain"] is None:
        print("peers: %s/plain: no plain run to compare with" % work, file=out)
        return 1
    p1 = runs["plain"]
    p2 = runs["plain2"] if runs["plain2"] is not None else p1
    problems = 0
    names = set(p1) | set(p2)
    flaky = sorted(n for n in names if p1.get(n) != p2.get(n))
    stable = names - set(flaky)
    compared = [m for m in TRACED if runs[m] is not None]
    print("peers: %d tests and modules run plain twice, %d stable, "
          "%d flaky without rte (not compared)"
          % (len(names), len(stable), len(flaky)), file=out)
    for mode in compared:
        res = runs[mode]
        diffs = []
        for name in sorted(stable | set(res)):
            if name in flaky:
                continue
            want = p1.get(name, "missing")
            got = res.get(name, "missing")
            if want != got:
                diffs.append((name, want, got))
        left = load_lines(os.path.join(work, mode), "leftover")
        canary = load_lines(os.path.join(work, mode), "canary")
        kept = load_lines(os.path.join(work, mode), "kept")
        counts = {}
        for o in res.values():
            if o in RANK:
                counts[o] = counts.get(o, 0) + 1
        print("\n== %s (%s): %d differ from plain; %d left behind; %s"
              % (mode, DESCR[mode], len(diffs), len(left),
                 ", ".join("%s %d" % (k, counts[k]) for k in sorted(counts))),
              file=out)
        for name, want, got in diffs:
            print("  DIFF %s: plain %s, %s %s" % (name, want, mode, got),
                  file=out)
            why = REASONS.get((os.path.join(work, mode), name))
            if why:
                print("       %s" % why, file=out)
        for line in left:
            print("  LEFT %s" % line, file=out)
        for line in canary:
            print("  NOT TRACED %s" % line, file=out)
        for line in kept:
            print("  kept, as designed: %s" % line, file=out)
        problems += len(diffs) + len(left) + len(canary)
    missing = [m for m in TRACED if runs[m] is None]
    if missing:
        print("\npeers: modes not run: %s" % " ".join(missing), file=out)
    if flaky:
        print("\n== flaky without rte (plain and plain2 differ; not compared)",
              file=out)
        for name in flaky:
            traced = ", ".join("%s %s" % (m, runs[m].get(name, "missing"))
                               for m in compared)
            print("  FLAKY %s: plain %s, plain2 %s; %s"
                  % (name, p1.get(name, "missing"), p2.get(name, "missing"),
                     traced), file=out)
    print("\npeers: %s" % ("%d differences" % problems if problems
                          else "no difference"), file=out)
    return problems


# --- self-test: fake runs with known differences -------------------------

def _write_run(work, mode, module, cases, rc=0, result="SUCCESS",
               xml=True, leftover=()):
    folder = os.path.join(work, mode)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, module + ".rc"), "w") as f:
        f.write("%d\n" % rc)
    with open(os.path.join(folder, module + ".out"), "w") as f:
        f.write("== Tests result: x ==\n\nTests result: %s\n" % result)
    xml_path = os.path.join(folder, module + ".xml")
    if not xml and os.path.exists(xml_path):
        os.unlink(xml_path)
    if xml:
        suite = ET.Element("testsuites")
        ts = ET.SubElement(suite, "testsuite")
        for name, outcome in cases.items():
            case = ET.SubElement(ts, "testcase", name=name)
            tag = {"fail": "failure", "error": "error",
                   "skip": "skipped"}.get(outcome)
            if tag:
                ET.SubElement(case, tag, message="planted").text = (
                    "Traceback:\nAssertionError: planted in %s" % mode)
        ET.ElementTree(suite).write(xml_path)
    if leftover:
        with open(os.path.join(folder, "leftover"), "a") as f:
            f.writelines(line + "\n" for line in leftover)


def self_test():
    import io
    errors = []

    def check(what, cond):
        if not cond:
            errors.append(what)

    base = {"test.test_a.A.test_one": "pass", "test.test_a.A.test_two": "skip",
            "test.test_a.A.test_flaky": "pass"}
    with tempfile.TemporaryDirectory() as work:
        # Identical runs in every mode: no difference, exit status 0.
        for mode in MODES:
            _write_run(work, mode, "test_a", base)
        buf = io.StringIO()
        check("identical runs reported as different", compare(work, buf) == 0)
        check("identical runs: no 'no difference' line",
              "peers: no difference" in buf.getvalue())

        # Planted: one test fails under prof, flaky plain, a module whose
        # worker died under alloc (no XML, rc 2), a file left by trace.
        _write_run(work, "plain2", "test_a",
                   dict(base, **{"test.test_a.A.test_flaky": "fail"}))
        _write_run(work, "prof", "test_a",
                   dict(base, **{"test.test_a.A.test_one": "fail"}),
                   rc=2, result="FAILURE")
        _write_run(work, "alloc", "test_a", {}, rc=2, result="FAILURE",
                   xml=False)
        _write_run(work, "trace", "test_a", base,
                   leftover=["test_a: 123.events"])
        with open(os.path.join(work, "rte-run", "canary"), "w") as f:
            f.write("0 ring_start, not >= 2\n")
        with open(os.path.join(work, "alloc", "kept"), "w") as f:
            f.write("test_a: 1 crashed processes' files (9.events)\n")
        buf = io.StringIO()
        n = compare(work, buf)
        rep = buf.getvalue()
        check("planted differences not counted exactly (%d)" % n, n == 7)
        check("a crash file kept by design not listed",
              "kept, as designed: test_a: 1 crashed" in rep)
        check("rte-run's failed canary not reported",
              "NOT TRACED 0 ring_start" in rep)
        check("prof's failing test not reported",
              "DIFF test.test_a.A.test_one: plain pass, prof fail" in rep)
        check("prof's failing test's reason not shown",
              "AssertionError: planted in prof" in rep)
        check("prof's module status not reported",
              "DIFF test_a [module]: plain rc=0 SUCCESS, prof rc=2 FAILURE"
              in rep)
        check("alloc's missing tests not reported",
              "DIFF test.test_a.A.test_two: plain skip, alloc missing" in rep)
        check("trace's leftover not reported", "LEFT test_a: 123.events" in rep)
        check("flaky test compared", "DIFF test.test_a.A.test_flaky" not in rep)
        check("flaky test not listed",
              "FLAKY test.test_a.A.test_flaky: plain pass, plain2 fail; "
              "trace pass, prof pass, alloc missing, rte-run pass" in rep)
        check("rte-run's tests reported as different",
              "== rte-run (rte-run -q -- ...): 0 differ" in rep)
    if errors:
        for e in errors:
            print("compare.py --self-test: FAIL: %s" % e)
        print(rep)
        return 1
    print("compare.py --self-test: ok (planted differences found)")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    return 1 if compare(argv[1]) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
