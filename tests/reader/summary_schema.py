#!/usr/bin/env python3
"""summary_schema.py SCHEMA_MD JSON... - check summary-json documents
against the table of doc/SUMMARY-JSON.md: every key documented, of its
documented type, and every documented key present (inside arrays that are
not empty). The contents of `gc` and `crashes[]` are checked elsewhere,
those of `tree[].exit` (one of two forms) by tests/tree/summary_check.py."""
import json
import re
import sys

TYPES = {bool: "bool", int: "int", float: "number", str: "string",
         type(None): "null", list: "array", dict: "object"}


def schema(path):
    out = {}
    for line in open(path):
        m = re.match(r"\| `([^`]+)` \| ([a-z\\|]+) \|", line)
        if m:
            out[m.group(1)] = set(m.group(2).replace("\\", "").split("|"))
    return out


def walk(o, path, seen, bad, sch):
    if path in ("processes[].gc", "crashes[]", "tree[].exit"):
        return
    if isinstance(o, dict):
        for k, v in o.items():
            p = f"{path}.{k}" if path else k
            check(v, p, seen, bad, sch)
        for k in sch:
            if k.startswith(path + "." if path else "") and "[" not in k[len(path):].lstrip(".") \
                    and "." not in k[len(path) + (1 if path else 0):] and k not in seen:
                bad.append(f"documented key missing: {k}")
    elif isinstance(o, list):
        for v in o:
            check(v, path + "[]", seen, bad, sch)


def check(v, p, seen, bad, sch):
    seen.add(p)
    t = TYPES[type(v)]
    if p not in sch:
        bad.append(f"undocumented key: {p}")
    elif t not in sch[p]:
        bad.append(f"{p}: {t}, documented {'|'.join(sorted(sch[p]))}")
    walk(v, p, seen, bad, sch)


def main():
    sch = schema(sys.argv[1])
    bad = []
    for f in sys.argv[2:]:
        seen = set()
        walk(json.load(open(f)), "", seen, bad, sch)
    for b in sorted(set(bad)):
        print("FAIL:", b)
    if not bad:
        print(f"ok: {len(sys.argv) - 2} summary-json document(s) follow {sys.argv[1]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
