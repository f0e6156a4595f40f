"""bench/benv.py: the environment every bench row starts from, the
caller's own without its tracing settings (OCAML_RUNTIME_EVENTS_*,
RTE_*, OCAMLRUNPARAM, CAMLRUNPARAM), so that a row measures only what it
sets itself. Shared by bench/run.py and the row modules beside it."""
import os


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OCAML_RUNTIME_EVENTS") and not k.startswith("RTE_")}
    env.pop("OCAMLRUNPARAM", None)
    env.pop("CAMLRUNPARAM", None)
    return env
