"""bench/ocaml.py: OCaml 5.2's own producer as the comparison row of rte's
int event (group "producer" of bench/run.py): bench/ocaml_int.ml built
with an OCaml 5.2 ocamlopt if one is found, else the row says
"skipped: no ocaml"."""
import os
import shutil
import statistics
import subprocess
import tempfile

import benv  # bench/benv.py: the clean starting environment


def find_ocamlopt():
    """An OCaml 5.2 ocamlopt: $RTE_OCAMLOPT, ocamlopt on PATH, or the
    build in /work/oc/5.2 (this project's machines); None if none is 5.2."""
    for c in (os.environ.get("RTE_OCAMLOPT"), shutil.which("ocamlopt"),
              "/work/oc/5.2/bin/ocamlopt"):
        if not c or not os.access(c, os.X_OK):
            continue
        p = subprocess.run([c, "-version"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, check=False)
        if p.returncode == 0 and p.stdout.strip().startswith("5.2"):
            return c
    return None


def bench_ocaml(tmp, rounds, events, rte_int, row, parse_lines, run):
    """OCaml 5.2's own int user event (bench/ocaml_int.ml) against rte's of
    this run: the format's reference producer."""
    name = "producer: OCaml 5.2 int user event"
    opt = find_ocamlopt()
    if opt is None:
        row(name, float("nan"), "ns/event", None, None, None, None,
            "skipped: no ocaml (no OCaml 5.2 ocamlopt: RTE_OCAMLOPT, PATH)")
        return
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ocaml_int.ml")
    d = tempfile.mkdtemp(prefix="ocaml-", dir=tmp)
    shutil.copy(src, d)
    exe = os.path.join(d, "ocaml_int")
    p = subprocess.run([opt, "-I", "+unix", "-I", "+runtime_events", "unix.cmxa",
                        "runtime_events.cmxa", "ocaml_int.ml", "-o", exe], cwd=d,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       check=False)
    if p.returncode != 0:
        row(name, float("nan"), "ns/event", None, None, None, None,
            "skipped: %s cannot build bench/ocaml_int.ml: %s" % (opt, p.stdout.strip()[:200]))
        return
    env = benv.clean_env()
    env.pop("LD_PRELOAD", None)
    env["OCAML_RUNTIME_EVENTS_DIR"] = d
    m = parse_lines(run([exe, str(events), str(rounds)], env=env))
    v = statistics.median(m["ocaml_int"])
    row(name, v, "ns/event", "rte int event, this run", rte_int, None, None,
        "ratio = OCaml / rte; Runtime_events.User.write, %s" % opt)
