#!/usr/bin/env python3
"""summary_check.py - rte-read's process tree (summary-json's "tree", the
text summary's tree and -f chrome's process tracks) says what strace saw
and what the JSONL records say (tests/tree/run.sh).

    summary_check.py STRACE EV.JSONL SUMMARY.JSON SUMMARY.TXT CHROME.JSON
                     [--max-lines N] [--fold] [--lost-images]

Recounted here, with this file's own code (and compare.py's parsers of
strace and of the JSONL records):
- every process strace saw is one entry of the tree, keyed (pid, life):
  the same parent pid, the same end (status or signal), the argv of its
  last exec (a prefix, with the same count, when cut); no other entry
  but reaped-only ones;
- cpu_user_ns, cpu_sys_ns and max_rss_kib equal the process's own
  rte.exit record, else the rte.reap record of its parent;
- the text summary: every failed process marked '!' on a line of its
  pid; at most N lines (--max-lines); with --fold, a folded line
  ("NAME ×K"); the critical path: starts at the root, each step a child
  of the one before that ended last;
- Chrome: every process's track named by its command line, a lifetime
  slice with its end in args, a flow from the parent to every child that
  has one; the processes without a file of their own (reaped only) too;
- a spawn that failed: an entry of no pid, no end, wall 0, failed, under
  its parent, paired with the child strace saw fail to exec (compare.py);
  a '!' line "- ... ENOENT ... argv0 (spawn failed: ...)"; a Chrome
  instant on its parent's main thread.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def tree_keys(tree):
    """(pid, life) -> entry, lives in the order of the document (time)."""
    out, life = {}, {}
    for e in tree:
        n = life.get(e["pid"], 0)
        life[e["pid"]] = n + 1
        out[(e["pid"], n)] = e
    return out


def usage_records(path):
    """(pid, life) -> rusage of rte.exit (own) or rte.reap (parent's)."""
    t = compare.Tree()
    own, reaped = {}, {}
    for line in open(path, encoding="utf-8"):
        ev = json.loads(line)
        if ev.get("kind") == "lost":
            continue
        name = ev.get("name") or ev.get("event")
        me = t.key(ev["pid"], creating=True)
        t.proc(me)
        if name in ("fork_parent", "rte.spawn"):
            child = ev["data"] if name == "fork_parent" else ev["value"]
            ck = t.key(child, creating=True, link=True)
            t.proc(ck)["parent"] = me
        elif name == "rte.exit" and "exit" in ev:
            own[me] = ev["exit"]
        elif name == "rte.reap" and "exit" in ev:
            ck = t.key(ev["exit"]["pid"])
            t.proc(ck)
            reaped[ck] = ev["exit"]
            t.ended.add(ck)
    return own, reaped


def main():
    a = sys.argv[1:]
    strace, jsonl, sjson, stxt, chrome = a[:5]
    opts = a[5:]
    max_lines = int(opts[opts.index("--max-lines") + 1]) if "--max-lines" in opts else None
    fold = "--fold" in opts
    lost_ok = "--lost-images" in opts
    errors = []
    st, root = compare.strace_tree(strace)
    doc = json.load(open(sjson, encoding="utf-8"))
    fails = [e for e in doc["tree"] if e["spawn_failed"]]
    tree = tree_keys([e for e in doc["tree"] if not e["spawn_failed"]])
    own, reaped = usage_records(jsonl)
    # spawns that failed: an entry of no pid under its parent, paired with
    # the child strace saw fail to exec (compare.py's rule)
    paired, errs = compare.failed_spawns(
        st, [((e["parent_pid"], 0), [x.encode("utf-8", "surrogateescape")
                                     for x in e["argv"] or []],
              e["spawn_failed"]["error"]) for e in fails],
        set(st.procs) - set(tree))
    errors += errs
    for e in fails:
        if e["pid"] is not None or e["exit"] is not None or not e["failed"] or \
                e["wall_ns"] != 0 or e["ppid"] != e["parent_pid"]:
            errors.append("spawn failed %r: pid %r exit %r failed %r wall %r ppid %r"
                          % (e["argv"], e["pid"], e["exit"], e["failed"],
                             e["wall_ns"], e["ppid"]))
    for k in sorted(set(st.procs) - set(tree) - paired):
        errors.append("%s: in strace, not in the tree" % (k,))
    for k in sorted(set(tree) - set(st.procs)):
        if not tree[k]["reaped_only"]:
            errors.append("%s: in the tree, not in strace" % (k,))
    for k in sorted(set(st.procs) & set(tree)):
        s, e = st.procs[k], tree[k]
        if k[0] != root:
            sp = s["parent"][0] if s["parent"] else None
            if sp != e["parent_pid"]:
                errors.append("%s: parent %s in strace, %s in the tree"
                              % (k, sp, e["parent_pid"]))
        want = compare.exit_of(e["exit"]) if e["exit"] else None
        if s["exit"] != want:
            errors.append("%s: end %s in strace, %s in the tree"
                          % (k, s["exit"], want))
        if s["argv"] and not (lost_ok and e["argv"] is None):
            sa = s["argv"][-1]
            ta = [x.encode("utf-8", "surrogateescape") for x in (e["argv"] or [])]
            if e["argc"] != len(sa):
                errors.append("%s: argc %d in strace, %d in the tree"
                              % (k, len(sa), e["argc"]))
            if e["argv_cut"]:
                ok = ta and len(ta) <= len(sa) and sa[:len(ta) - 1] == ta[:-1] \
                    and sa[len(ta) - 1].startswith(ta[-1])
            else:
                ok = sa == ta
            if not ok:
                errors.append("%s: argv %r in strace, %r in the tree"
                              % (k, sa[:6], ta[:6]))
        rec = own.get(k) or reaped.get(k)
        for f in ("cpu_user_ns", "cpu_sys_ns", "max_rss_kib"):
            if rec and e[f] != rec[f]:
                errors.append("%s: %s %s in the tree, %s in the records"
                              % (k, f, e[f], rec[f]))
            if not rec and e[f] is not None:
                errors.append("%s: %s without a record" % (k, f))
    # the text
    lines = open(stxt, encoding="utf-8").read().split("\n")
    if max_lines is not None and len(lines) > max_lines:
        errors.append("text: %d lines, more than %d" % (len(lines), max_lines))
    byline = {}
    for ln in lines:
        m = re.match(r"([! ]) *(\d+) ", ln)
        if m:
            byline.setdefault(int(m.group(2)), []).append(m.group(1))
    for e in doc["tree"]:
        if e["failed"] and not e["spawn_failed"] and "!" not in byline.get(e["pid"], []):
            errors.append("text: failed %d not marked" % e["pid"])
    for e in fails:
        if not any(re.match(r"! +- .* %s +.*%s.* \(spawn failed: [^)]*\)$"
                            % (re.escape(e["spawn_failed"]["error"]),
                               re.escape(e["argv"][0])), ln) for ln in lines):
            errors.append("text: no line of the failed spawn %r" % e["argv"])
    if fold and not any("×" in ln for ln in lines):
        errors.append("text: nothing folded")
    cp = [ln for ln in lines if ln.startswith("critical path:")]
    if len(cp) != 1:
        errors.append("text: %d critical path lines" % len(cp))
    else:
        steps = [int(s.split()[0]) for s in cp[0][len("critical path:"):].split("→")
                 if s.strip() and s.strip() != "…"]
        pe = {}
        for e in doc["tree"]:
            pe.setdefault(e["pid"], e)
        roots = [e for e in doc["tree"] if e["parent_pid"] is None]
        top = max(roots, key=lambda e: e["wall_ns"])
        if steps[0] != top["pid"]:
            errors.append("critical path starts at %d, root %d" % (steps[0], top["pid"]))
        for a_, b_ in zip(steps, steps[1:]):
            kids = [e for e in doc["tree"] if e["parent_pid"] == a_ and not e["spawn_failed"]]
            last = max(e["end_ts"] for e in kids) if kids else None
            if not any(e["pid"] == b_ and e["end_ts"] == last for e in kids):
                errors.append("critical path: %d is not the child of %d that ended last"
                              % (b_, a_))
    # Chrome
    cd = json.load(open(chrome, encoding="utf-8"))
    evs = cd["traceEvents"] if isinstance(cd, dict) else cd
    names = {e["pid"]: e["args"]["name"] for e in evs
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    life = {}  # pid -> the exits of its slices (a reused pid: one a life)
    for e in evs:
        if e.get("ph") == "X" and e.get("cat") == "lifetime":
            life.setdefault(e["pid"], []).append(e["args"].get("exit"))
    flows = {(e.get("id"), e["ph"]): e for e in evs if e.get("cat") == "spawn"}
    for e in fails:  # an instant on the parent's main thread
        if not any(x.get("ph") == "i" and x.get("cat") == "spawn failed" and
                   x["pid"] == e["parent_pid"] and x["tid"] == e["parent_pid"] and
                   x["args"].get("spawn_failed") == e["spawn_failed"]["error"] and
                   x["name"].startswith(e["argv"][0]) for x in evs):
            errors.append("chrome: no instant of the failed spawn %r" % e["argv"])
    for e in doc["tree"]:
        if e["spawn_failed"]:
            continue
        if e["pid"] not in names:
            errors.append("chrome: %d has no process track" % e["pid"])
        if e["argv"] is None and not e["reaped_only"]:
            continue
        if e["argv"] is not None and \
                e["argv"][0].split("/")[-1] not in names.get(e["pid"], ""):
            errors.append("chrome: %d named %r" % (e["pid"], names.get(e["pid"])))
        if e["pid"] not in life:
            errors.append("chrome: %d has no lifetime slice" % e["pid"])
        elif e["exit"] and e["exit"].get("status", e["exit"].get("signal")) \
                not in life[e["pid"]]:
            errors.append("chrome: %d slice exits %r, want %r" % (e["pid"], life[e["pid"]],
                                                                   e["exit"]))
    want_flows = sum(1 for e in doc["tree"]
                     if e["parent_pid"] is not None and not e["spawn_failed"])
    got = sum(1 for k in flows if k[1] == "s")
    if got < want_flows:
        errors.append("chrome: %d spawn flows, want %d" % (got, want_flows))
    for e in errors:
        print("summary_check: " + e)
    print("summary_check: %d processes, %d differences" % (len(doc["tree"]), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
