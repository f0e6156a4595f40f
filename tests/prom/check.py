#!/usr/bin/env python3
"""tests/prom/check.py - the Python side of tests/prom/run.sh.

Every network call is bounded by a timeout and goes to 127.0.0.1 only.

  port                          print a free TCP port on 127.0.0.1
  wait-ready URL SECS           until URL answers 200 (else exit 1)
  get URL OUT [ACCEPT]          GET URL into OUT; print the status and type
  expo-vs-summary EXPO SUMMARY [LABELS]
                                the exposition text file EXPO (an exporter's
                                or a Pushgateway's /metrics) holds, for every
                                process of the summary-json file SUMMARY,
                                the same events, lost words, span counts and
                                span sums; LABELS k=v,... must be on each
  prom-wait PROM PIDS SECS      until Prometheus has scraped the final values
                                (rte_process_alive 0) of every pid, and at
                                least two scrapes of the exporter
  prom-alive PROM PIDS SECS     until Prometheus has seen every pid alive
  prom-vs-summary PROM SUMMARY  what Prometheus stored equals SUMMARY
  fetch-final URL PIDS OUT SECS [ACCEPT]
                                scrape until one answer holds the final
                                values (rte_process_alive 0) of every pid
                                of PIDS (comma-separated); write it to OUT
  per-thread EXPO SUMMARY       every process series has a ring label and
                                the sums over rings equal SUMMARY
  max-names EXPO SUMMARY        names past --max-names went to "other":
                                rte_names_limited 1, no user int lost
  hostile EXPO                  a name made to break the exposition stays one
                                label value: x"} 1, newline, fake_metric{a="\
                                then an invalid byte (as ?) and an e-acute
  raw PORT                      malformed requests and a slow client, then
                                a normal scrape still answers
  scrape-loop PORT SECS         scrape every 50 ms for SECS; every answer 200
  fetch-total URL N OUT SECS    scrape until the label sets' processes
                                ended add up to N and none is being read;
                                write that scrape to OUT
"""
import json
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

TIMEOUT = 10


def die(msg):
    print("check.py: " + msg, file=sys.stderr)
    sys.exit(1)


def get(url, accept=None):
    req = urllib.request.Request(url)
    if accept:
        req.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def parse_labels(s):
    """'a="x",b="y"' (the text format's escapes) into a dict."""
    out, i = {}, 0
    while i < len(s):
        eq = s.index("=", i)
        k = s[i:eq].strip().lstrip(",").strip()
        assert s[eq + 1] == '"', s
        j, v = eq + 2, []
        while s[j] != '"':
            if s[j] == "\\":
                j += 1
                v.append({"n": "\n"}.get(s[j], s[j]))
            else:
                v.append(s[j])
            j += 1
        out[k] = "".join(v)
        i = j + 1
        while i < len(s) and s[i] in ", ":
            i += 1
    return out


def parse_expo(text):
    """Samples as a list of (name, labels dict, float value)."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if "{" in line:
            name, rest = line.split("{", 1)
            lab, val = rest.rsplit("}", 1)
            labels = parse_labels(lab)
        else:
            name, val = line.split(" ", 1)
            labels = {}
        samples.append((name, labels, float(val.split()[0])))
    return samples


def by_pid(samples, name, extra=None):
    """{pid: sum of the values of samples `name` matching extra}."""
    out = {}
    for n, lab, v in samples:
        if n != name or "pid" not in lab:
            continue
        if extra and any(lab.get(k) != x for k, x in extra.items()):
            continue
        out[lab["pid"]] = out.get(lab["pid"], 0) + v
    return out


def expected(summary_path):
    """{pid: {key: value}} of summary-json: events, lost words, time in
    runtime phases, and the count and total of every span and phase name
    with matched ends."""
    d = json.load(open(summary_path))
    exp = {}
    for p in d["processes"]:
        e = {"events": p["events"], "lost_words": p["lost_words"],
             "phase_ns": p["runtime_phase_ns"]}
        for fam in ("spans", "phases"):
            for x in p[fam]:
                if x["count"]:
                    e["%s %s count" % (fam, x["name"])] = x["count"]
                    e["%s %s ns" % (fam, x["name"])] = x["total_ns"]
        exp[str(p["pid"])] = e
    if not exp:
        die("%s: no process" % summary_path)
    return exp


def secs_ns(v):
    return round(v * 1e9)


def got_of(samples):
    """The same keys from exposition samples."""
    got = {}

    def put(pid, key, v):
        got.setdefault(pid, {})
        got[pid][key] = got[pid].get(key, 0) + v

    fam = {"rte_span_duration_seconds": "spans",
           "rte_runtime_phase_duration_seconds": "phases"}
    for n, lab, v in samples:
        pid = lab.get("pid")
        if pid is None:
            continue
        got.setdefault(pid, {})
        if n == "rte_events_total":
            put(pid, "events", v)
        elif n == "rte_lost_words_total":
            put(pid, "lost_words", v)
        elif n == "rte_runtime_phase_seconds_total":
            put(pid, "phase_ns", secs_ns(v))
        elif n.endswith("_count") and n[:-6] in fam:
            put(pid, "%s %s count" % (fam[n[:-6]], lab["name"]), v)
        elif n.endswith("_sum") and n[:-4] in fam:
            put(pid, "%s %s ns" % (fam[n[:-4]], lab["name"]), secs_ns(v))
    return got


def compare(exp, got, where):
    bad = []
    for pid, e in exp.items():
        g = dict(got.get(pid, {}))
        g.setdefault("lost_words", 0)
        g.setdefault("phase_ns", 0)
        if g != e:
            keys = sorted(set(g) | set(e))
            bad.append("pid %s: summary-json vs %s: %s" % (pid, where, [
                (k, e.get(k), g.get(k)) for k in keys if e.get(k) != g.get(k)]))
    if bad:
        die("\n".join(bad))
    print("ok: %d processes: events, lost words, GC time, every span and phase"
          " (count, sum) equal summary-json (%s)" % (len(exp), where))


def expo_vs_summary(expo, summary, labels=""):
    samples = parse_expo(open(expo).read())
    want = dict(kv.split("=", 1) for kv in labels.split(",") if kv)
    if want:
        samples = [s for s in samples
                   if s[0].startswith("rte_") and
                   all(s[1].get(k) == v for k, v in want.items())]
    compare(expected(summary), got_of(samples), expo)


def query(prom, q):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    st, _, body = get(url)
    d = json.loads(body)
    if st != 200 or d.get("status") != "success":
        die("query %s: %s %s" % (q, st, body[:300]))
    return {r["metric"].get("pid", ""): float(r["value"][1])
            for r in d["data"]["result"]}


def prom_wait(prom, pids, secs):
    end = time.time() + float(secs)
    pids = set(pids.split(","))
    while time.time() < end:
        try:
            final = query(prom, "min_over_time(rte_process_alive[10m]) == 0")
            up = query(prom, 'count_over_time(up{job="rte"}[10m])')
            if pids <= set(final) and up.get("", 0) >= 2:
                print("ok: Prometheus scraped %d times, final values of %s"
                      % (up[""], ",".join(sorted(pids))))
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    die("Prometheus did not scrape the final values of %s in %s s" % (pids, secs))


def query_samples(prom, q):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    st, _, body = get(url)
    d = json.loads(body)
    if st != 200 or d.get("status") != "success":
        die("query %s: %s %s" % (q, st, body[:300]))
    return [(r["metric"].get("__name__", ""), r["metric"], float(r["value"][1]))
            for r in d["data"]["result"]]


def prom_vs_summary(prom, summary):
    # the last value of every rte_ series (stale markers are not samples)
    samples = []
    for n in ("rte_events_total", "rte_lost_words_total",
              "rte_runtime_phase_seconds_total",
              "rte_span_duration_seconds_count", "rte_span_duration_seconds_sum",
              "rte_runtime_phase_duration_seconds_count",
              "rte_runtime_phase_duration_seconds_sum"):
        for _, lab, v in query_samples(prom, "last_over_time(%s[10m])" % n):
            samples.append((n, lab, v))
    compare(expected(summary), got_of(samples), "Prometheus")


def prom_alive(prom, pids, secs):
    end = time.time() + float(secs)
    pids = set(pids.split(","))
    while time.time() < end:
        try:
            alive = query(prom, "max_over_time(rte_process_alive[10m]) == 1")
            if pids <= set(alive):
                print("ok: Prometheus saw %s alive" % ",".join(sorted(pids)))
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    die("Prometheus did not see %s alive in %s s" % (pids, secs))


def send_raw(port, data, wait_answer=True):
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    s.sendall(data)
    ans = b""
    if wait_answer:
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                ans += b
        except socket.timeout:
            pass
    s.close()
    return ans


def raw(port):
    port = int(port)
    url = "http://127.0.0.1:%d/metrics" % port
    # a slow client: half a request line, kept open while others are served
    slow = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    slow.sendall(b"GET /met")
    for bad in [b"\x00\xff\xfe garbage\r\n\r\n",
                b"GET /metrics HTTP/9.9\r\n\r\n",
                b"GET " + b"/" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
                b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * 5000 + b"\r\n",
                b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
                b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 999999\r\n\r\nab"]:
        ans = send_raw(port, bad, wait_answer=not bad.endswith(b"ab"))
        if ans and not ans.startswith(b"HTTP/1."):
            die("not an HTTP answer to %r: %r" % (bad[:30], ans[:80]))
    st, _, body = get(url)
    if st != 200 or "rte_exporter_scrapes_total" not in body:
        die("no scrape after malformed requests: %s" % st)
    st, _, _ = get(url)
    slow.close()
    print("ok: malformed requests and a slow client; the exporter still answers")


def scrape_loop(port, secs):
    url = "http://127.0.0.1:%d/metrics" % int(port)
    end, n = time.time() + float(secs), 0
    while time.time() < end:
        st, _, body = get(url)
        if st != 200:
            die("scrape %d: status %s" % (n, st))
        parse_expo(body)
        n += 1
        time.sleep(0.05)
    print("ok: %d scrapes while processes ended, every one answered" % n)


def fetch_final(url, pids, out, secs, accept=None):
    """Each process's final values come in one scrape (then it is
    dropped), not necessarily the same scrape for all: OUT gets, per pid,
    the sample lines of the scrape that showed it final; OUT.raw the
    last such scrape, whole."""
    end = time.time() + float(secs)
    pids = set(pids.split(","))
    got = {}
    while time.time() < end:
        st, ctype, body = get(url, accept)
        if st == 200:
            final = by_pid([x for x in parse_expo(body) if x[2] == 0],
                           "rte_process_alive")
            for pid in set(final) - set(got):
                got[pid] = [ln for ln in body.splitlines()
                            if not ln.startswith("#") and 'pid="%s"' % pid in ln]
                open(out + ".raw", "w").write(body)  # a whole scrape
        if pids <= set(got):
            lines = [ln for pid in sorted(got) for ln in got[pid]]
            if body.rstrip().endswith("# EOF"):
                lines.append("# EOF")
            open(out, "w").write("\n".join(lines) + "\n")
            open(out + ".type", "w").write(ctype + "\n")
            return
        time.sleep(0.1)
    die("no final values of %s in %s s (got %s)" % (pids, secs, sorted(got)))


def fetch_total(url, n, out, secs):
    end = time.time() + float(secs)
    ended = live = None
    while time.time() < end:
        st, _, body = get(url)
        if st == 200:
            smp = parse_expo(body)
            ended = sum(v for m, lab, v in smp if m == "rte_processes_ended_total")
            live = sum(v for m, lab, v in smp if m == "rte_processes")
            if ended == int(n) and live == 0:
                open(out, "w").write(body)
                return
        time.sleep(0.1)
    die("processes ended %s (want %s), still read %s after %s s" % (ended, n, live, secs))


def per_thread(expo, summary):
    samples = parse_expo(open(expo).read())
    for n, lab, v in samples:
        if "pid" in lab and n not in ("rte_process_alive", "rte_names_limited",
                                      "rte_processes", "rte_processes_started_total",
                                      "rte_processes_ended_total") \
                and "ring" not in lab:
            die("%s%s has no ring label" % (n, lab))
    rings = {lab["ring"] for n, lab, v in samples if "ring" in lab}
    if len(rings) < 3:
        die("only rings %s: the threads were not told apart" % rings)
    expo_vs_summary(expo, summary)


def max_names(expo, summary):
    samples = parse_expo(open(expo).read())
    d = json.load(open(summary))
    lim = by_pid(samples, "rte_names_limited")
    other = {lab["pid"]: 1 for n, lab, v in samples
             if lab.get("name") == "other" and "pid" in lab}
    ints = by_pid(samples, "rte_user_events_total", {"kind": "user_int"})
    for p in d["processes"]:
        pid = str(p["pid"])
        want = sum(e["count"] for e in p["user_ints"])
        if lim.get(pid) != 1 or not other.get(pid) or ints.get(pid) != want:
            die("pid %s: limited %s, other %s, user ints %s (want %s)"
                % (pid, lim.get(pid), other.get(pid), ints.get(pid), want))
    print("ok: --max-names: the rest under name=\"other\", nothing lost")


def hostile(expo):
    samples = parse_expo(open(expo).read())
    want = 'x"} 1\nfake_metric{a="\\?\u00e9'
    if any(n.startswith("fake_metric") for n, lab, v in samples):
        die("a name injected a metric")
    if not any(lab.get("name") == want for n, lab, v in samples):
        die("the hostile name is not one label value: %r" %
            sorted({lab.get("name") for n, lab, v in samples if "name" in lab}))
    print("ok: a hostile name is one escaped label value")


def main(a):
    if a[0] == "port":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
    elif a[0] == "wait-ready":
        end = time.time() + float(a[2])
        while time.time() < end:
            try:
                if get(a[1])[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        die("%s not ready in %s s" % (a[1], a[2]))
    elif a[0] == "get":
        st, ctype, body = get(a[1], a[3] if len(a) > 3 else None)
        open(a[2], "w").write(body)
        print(st, ctype)
    elif a[0] == "expo-vs-summary":
        expo_vs_summary(*a[1:])
    elif a[0] == "prom-wait":
        prom_wait(*a[1:])
    elif a[0] == "prom-alive":
        prom_alive(*a[1:])
    elif a[0] == "prom-vs-summary":
        prom_vs_summary(*a[1:])
    elif a[0] == "fetch-final":
        fetch_final(*a[1:])
    elif a[0] == "fetch-total":
        fetch_total(*a[1:])
    elif a[0] == "per-thread":
        per_thread(*a[1:])
    elif a[0] == "max-names":
        max_names(*a[1:])
    elif a[0] == "hostile":
        hostile(a[1])
    elif a[0] == "raw":
        raw(a[1])
    elif a[0] == "scrape-loop":
        scrape_loop(*a[1:])
    else:
        die("unknown command " + a[0])


if __name__ == "__main__":
    main(sys.argv[1:])
