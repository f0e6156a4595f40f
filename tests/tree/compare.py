#!/usr/bin/env python3
"""compare.py - the process tree of one command as strace saw it and as
rte recorded it must be the same: the same processes, each with the same
parent, the same argv of every successful exec, the same exit status or
signal (tests/tree/run.sh); a posix_spawn child that could not exec
(strace: its failed execs, exit 127) is its parent's rte.spawn_failed,
with the same argv.

    compare.py STRACE_FILE RTE_JSONL [--lost-images]
                                         exit 0 if equal, else 1

--lost-images: a process of which rte has no image (its file could not be
made: a reused pid whose name a kept file still holds) may have execs in
strace; its parent and end must still be right.

STRACE_FILE: `strace -f -s 1000000 -e trace=process -o FILE CMD` and
RTE_JSONL: `rte-read -f jsonl DIR`, of one run of CMD traced by both (so
that the pids are the same), with PRESERVE.

A process is keyed by (pid, life): a pid that comes back after its end
(a reused pid) is a new process. The root (strace's first pid) has no
parent to compare. rte's argv may be cut (argv_cut): it must then be a
prefix of strace's, with the same count.
"""
import json
import re
import sys


def unescape(s):
    """Bytes of a strace string literal body (C escapes)."""
    out = bytearray()
    i = 0
    simple = {"n": 10, "t": 9, "r": 13, "v": 11, "f": 12, "a": 7, "b": 8,
              '"': 34, "\\": 92, "'": 39, "?": 63}
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode("latin-1")
            i += 1
            continue
        n = s[i + 1]
        if n in simple:
            out.append(simple[n])
            i += 2
        elif n == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", s[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        else:
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
    return bytes(out)


STR = r'"((?:[^"\\]|\\.)*)"'


def parse_argv(rest):
    """The argv list of `execve("path", [...], ...` (rest after "execve(")."""
    m = re.match(STR + r", \[", rest)
    if not m:
        return None
    pos = m.end()
    argv = []
    while rest[pos] != "]":
        m = re.compile(STR).match(rest, pos)
        if not m:
            return None
        argv.append(unescape(m.group(1)))
        pos = m.end()
        if rest.startswith(", ", pos):
            pos += 2
    return argv


class Tree:
    def __init__(self):
        self.life = {}      # pid -> current life number
        self.ended = set()  # (pid, life) ended
        self.procs = {}     # (pid, life) -> dict

    def key(self, pid, creating=False, link=False):
        """The current life of pid; a new one if this line is about a pid
        whose life ended, unless it links a parent to an ended child that
        had none yet (a vfork child ends before its parent returns)."""
        life = self.life.get(pid, 0)
        k = (pid, life)
        if creating and k in self.ended and not (
                link and self.procs.get(k, {}).get("parent") is None):
            life += 1
            self.life[pid] = life
        return (pid, life)

    def proc(self, key):
        return self.procs.setdefault(key, {"parent": None, "argv": [],
                                           "exit": None})


def strace_tree(path):
    t = Tree()
    pending = {}  # pid -> clone flags of an unfinished call
    pending_exec = {}  # pid -> argv of an unfinished execve
    threads = set()
    root = None
    for line in open(path, encoding="latin-1"):
        m = re.match(r"(\d+) +(.*)", line.rstrip("\n"))
        if not m:
            continue
        pid, rest = int(m.group(1)), m.group(2)
        if root is None:
            root = pid
        if pid in threads:
            continue
        me = t.key(pid, creating=True)
        t.proc(me)
        if rest.startswith("execve("):
            argv = parse_argv(rest[len("execve("):])
            if rest.endswith("<unfinished ...>"):
                pending_exec[pid] = argv
            elif re.search(r"\) += 0$", rest):
                t.proc(me)["argv"].append(argv)
            else:
                t.proc(me)["failed_exec"] = argv
            continue
        if rest.startswith("<... execve resumed>"):
            argv = pending_exec.pop(pid, None)
            if re.search(r"\) += 0$", rest):
                t.proc(me)["argv"].append(argv)
            else:
                t.proc(me)["failed_exec"] = argv
            continue
        m = re.match(r"\+\+\+ exited with (\d+) \+\+\+", rest)
        if m:
            t.proc(me)["exit"] = ("status", int(m.group(1)))
            t.ended.add(me)
            continue
        m = re.match(r"\+\+\+ killed by (SIG\w+)", rest)
        if m:
            t.proc(me)["exit"] = ("signal", m.group(1))
            t.ended.add(me)
            continue
        m = re.match(r"(clone3?|fork|vfork)\((.*)", rest)
        r = re.match(r"<\.\.\. (clone3?|fork|vfork) resumed>(.*)", rest)
        if m or r:
            body = (m or r).group(2)
            flags = pending.pop(pid, "") if r else body
            if body.endswith("<unfinished ...>"):
                pending[pid] = flags
                continue
            mm = re.search(r"= (\d+)(?: <.*>)?$", body)
            if not mm:
                continue
            child = int(mm.group(1))
            if "CLONE_THREAD" in flags:
                threads.add(child)
                continue
            ck = t.key(child, creating=True, link=True)
            t.proc(ck)["parent"] = me
    return t, root


def failed_spawns(st, rte_fails, unmatched):
    """Pair each spawn that failed in rte (its parent's rte.spawn_failed:
    parent key, argv, no pid) with the process strace saw for it: a child
    of that parent that never exec'd, whose last exec failed with that
    argv, exited 127 (glibc's child of a posix_spawn that cannot exec),
    among the strace keys `unmatched` (in strace, not in rte). Returns
    (the paired strace keys, the errors)."""
    paired, errors = set(), []
    for parent, argv, err in rte_fails:
        for k in sorted(unmatched - paired):
            s = st.procs[k]
            if s["parent"] and s["parent"][0] == parent[0] and not s["argv"] \
                    and s.get("failed_exec") == argv and s["exit"] == ("status", 127):
                paired.add(k)
                break
        else:
            errors.append("spawn of %r by %s failed (%s) in rte: no such child in strace"
                          % (argv, parent, err))
    return paired, errors


def rte_tree(path):
    t = Tree()
    t.spawn_fails = []  # (parent key, argv, error name)
    images = {}
    for line in open(path, encoding="utf-8"):
        ev = json.loads(line)
        if ev.get("kind") == "lost":
            continue
        pid = ev["pid"]
        name = ev.get("name") or ev.get("event")
        me = t.key(pid, creating=True)
        p = t.proc(me)
        if name in ("fork_parent", "rte.spawn"):
            child = ev["data"] if name == "fork_parent" else ev["value"]
            ck = t.key(child, creating=True, link=True)
            c = t.proc(ck)
            if c["parent"] not in (None, me):
                c["conflict"] = "two parents: %s and %s" % (c["parent"], me)
            c["parent"] = me
        elif name == "rte.proc" and "proc" in ev:
            pr = ev["proc"]
            # JSON strings: UTF-8 as it is, any other byte XX as \udcXX
            argv = [a.encode("utf-8", "surrogateescape") for a in pr.get("argv", [])]
            img = images.setdefault(me, [])
            img.append(pr)
            if pr.get("fork"):
                p["fork_ppid"] = pr["ppid"]
                p["fork_argv"] = argv
            else:
                p["argv"].append(argv)
                p.setdefault("argc", []).append(pr["argc"])
                p.setdefault("cut", []).append(pr.get("argv_cut", False))
                if len(img) == 1:
                    p["exec_ppid"] = pr["ppid"]
        elif name == "rte.spawn_failed" and "spawn_failed" in ev:
            sf = ev["spawn_failed"]
            t.spawn_fails.append((me, [a.encode("utf-8", "surrogateescape")
                                       for a in sf.get("argv", [])],
                                  sf.get("error", sf["errno"])))
        elif name == "rte.exit" and "exit" in ev:
            p["self_exit"] = exit_of(ev["exit"])
        elif name == "rte.reap" and "exit" in ev:
            ck = t.key(ev["exit"]["pid"])
            c = t.proc(ck)
            c["reap_exit"] = exit_of(ev["exit"])
            c["reaper"] = me
            t.ended.add(ck)
    for key, p in t.procs.items():
        se, re_ = p.get("self_exit"), p.get("reap_exit")
        if se and re_ and se != re_:
            p["conflict"] = "own end %s, reaped as %s" % (se, re_)
        p["exit"] = se or re_
        if p["parent"] is None and "fork_ppid" in p:
            p["parent"] = (p["fork_ppid"], None)
        elif p["parent"] is None and "exec_ppid" in p:
            p["parent"] = (p["exec_ppid"], None)
        if "fork_ppid" in p and p["parent"][0] != p["fork_ppid"]:
            p["conflict"] = "fork_child ppid %d, linked to %s" % (
                p["fork_ppid"], p["parent"])
    return t


def exit_of(e):
    if "status" in e:
        return ("status", e["status"])
    if "signal" in e:
        return ("signal", e["signal"])
    return None


def main():
    lost_ok = "--lost-images" in sys.argv[3:]
    st, root = strace_tree(sys.argv[1])
    rt = rte_tree(sys.argv[2])
    sk = set(st.procs)
    rk = set(rt.procs)
    paired, errors = failed_spawns(st, rt.spawn_fails, sk - rk)
    sk -= paired
    for k in sorted(sk - rk):
        errors.append("%s: in strace, not in rte" % (k,))
    for k in sorted(rk - sk):
        errors.append("%s: in rte, not in strace" % (k,))
    for k in sorted(sk & rk):
        s, r = st.procs[k], rt.procs[k]
        if "conflict" in r:
            errors.append("%s: rte disagrees with itself: %s"
                          % (k, r["conflict"]))
        if k[0] != root:
            sp = s["parent"][0] if s["parent"] else None
            rp = r["parent"][0] if r["parent"] else None
            if sp != rp:
                errors.append("%s: parent %s in strace, %s in rte"
                              % (k, sp, rp))
        if s["exit"] != r["exit"]:
            errors.append("%s: end %s in strace, %s in rte"
                          % (k, s["exit"], r["exit"]))
        sa, ra = s["argv"], r["argv"]
        if k[0] == root and len(sa) > len(ra):
            sa = sa[len(sa) - len(ra):]  # env(1), which set LD_PRELOAD
        if not ra and lost_ok:
            continue
        if len(sa) != len(ra):
            errors.append("%s: %d execs in strace, %d images in rte"
                          % (k, len(sa), len(ra)))
            continue
        for i, (a, b) in enumerate(zip(sa, ra)):
            if r["argc"][i] != len(a):
                errors.append("%s: exec %d: argc %d in strace, %d in rte"
                              % (k, i, len(a), r["argc"][i]))
            if r["cut"][i]:
                ok = len(b) <= len(a) and a[:len(b) - 1] == b[:-1] and \
                    a[len(b) - 1].startswith(b[-1])
            else:
                ok = a == b
            if not ok:
                errors.append("%s: exec %d: argv %r in strace, %r in rte"
                              % (k, i, a[:8], b[:8]))
    for e in errors:
        print("compare: " + e)
    print("compare: %d processes (%d spawns that failed), %d differences"
          % (len(sk) + len(paired), len(paired), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
