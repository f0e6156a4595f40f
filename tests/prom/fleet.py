#!/usr/bin/env python3
"""tests/prom/fleet.py - the fleet checks of tests/prom/run.sh (t_fleet,
t_labels, t_push_replace): an exporter's totals per label set, as a
Prometheus server stores them, against the summary of the same files.

  totals EXPO SUMMARY [LABELS]  the exposition file EXPO (no pid label on
                                any series) sums, over its label sets, to
                                the summary-json file SUMMARY's totals:
                                processes, events, lost words, runtime
                                phase time, every span's count and sum;
                                LABELS k=v,... must be on every rte_ series
  prom-totals SECS SUMMARY PROM...
                                until every Prometheus server PROM has
                                stored the totals of SUMMARY (instant
                                queries, after the processes ended), and
                                they are the same in all of them
  series-same EXPO1 EXPO2       the two expositions have the same series
                                (names and label sets), values aside
  drop-mid PORT                 a scraper that reads a few bytes of the
                                body and disconnects; the next scrape is
                                whole
  pg-group PG JOB INSTANCE SUMMARY
                                the Pushgateway PG holds one group for
                                JOB/INSTANCE whose totals are SUMMARY's
"""
import json
import socket
import sys
import time

sys.path.insert(0, __import__("os").path.dirname(__file__))
from check import die, get, parse_expo, query_samples as query  # noqa: E402


def want_totals(summary):
    d = json.load(open(summary))
    t = {"processes": len(d["processes"]), "events": 0, "lost_words": 0,
         "phase_ns": 0}
    for p in d["processes"]:
        t["events"] += p["events"]
        t["lost_words"] += p["lost_words"]
        t["phase_ns"] += p["runtime_phase_ns"]
        for x in p["spans"]:
            if x["count"]:
                t["span %s count" % x["name"]] = t.get("span %s count" % x["name"], 0) + x["count"]
                t["span %s ns" % x["name"]] = t.get("span %s ns" % x["name"], 0) + x["total_ns"]
    return t


def got_totals(samples):
    t = {"processes": 0, "events": 0, "lost_words": 0, "phase_ns": 0}
    for n, lab, v in samples:
        if n == "rte_processes_ended_total":
            t["processes"] += v
        elif n == "rte_events_total":
            t["events"] += v
        elif n == "rte_lost_words_total":
            t["lost_words"] += v
        elif n == "rte_runtime_phase_seconds_total":
            t["phase_ns"] += round(v * 1e9)
        elif n == "rte_span_duration_seconds_count":
            k = "span %s count" % lab["name"]
            t[k] = t.get(k, 0) + v
        elif n == "rte_span_duration_seconds_sum":
            k = "span %s ns" % lab["name"]
            t[k] = t.get(k, 0) + round(v * 1e9)
    return {k: int(v) for k, v in t.items()}


def diff(w, g):
    return [(k, w.get(k), g.get(k)) for k in sorted(set(w) | set(g)) if w.get(k) != g.get(k)]


def totals(expo, summary, labels=""):
    samples = [s for s in parse_expo(open(expo).read()) if s[0].startswith("rte_")
               and not s[0].startswith("rte_exporter_")]
    want = dict(kv.split("=", 1) for kv in labels.split(",") if kv)
    for n, lab, v in samples:
        if "pid" in lab:
            die("%s%s: a pid label without --per-process" % (n, lab))
        if any(lab.get(k) != x for k, x in want.items()):
            die("%s%s: not the labels %s" % (n, lab, want))
    w, g = want_totals(summary), got_totals(samples)
    if w != g:
        die("%s vs %s: %s" % (expo, summary, diff(w, g)))
    print("ok: %s: the totals of %d processes equal summary-json's" % (expo, w["processes"]))


def stored(prom):
    """The samples Prometheus holds now (an instant query: the last
    scrape's values of every series that is not stale)."""
    out = []
    for n in ("rte_processes_ended_total", "rte_events_total", "rte_lost_words_total",
              "rte_runtime_phase_seconds_total", "rte_span_duration_seconds_count",
              "rte_span_duration_seconds_sum"):
        out += query(prom, n)
    return out


def prom_totals(secs, summary, *proms):
    end = time.time() + float(secs)
    w = want_totals(summary)
    got = {}
    while time.time() < end:
        try:
            got = {p: got_totals(stored(p)) for p in proms}
            if all(g == w for g in got.values()):
                print("ok: %d Prometheus servers store the totals of %d processes,"
                      " equal to summary-json's" % (len(proms), w["processes"]))
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    die("Prometheus vs summary-json after %s s: %s" % (
        secs, {p: diff(w, g) for p, g in got.items()}))


def series_of(expo):
    return {(n, tuple(sorted(lab.items()))) for n, lab, v in parse_expo(open(expo).read())
            if n.startswith("rte_") and not n.startswith("rte_exporter_")}


def series_same(a, b):
    sa, sb = series_of(a), series_of(b)
    if sa != sb:
        die("series differ: only in %s: %s; only in %s: %s" % (
            a, sorted(sa - sb)[:5], b, sorted(sb - sa)[:5]))
    print("ok: the same %d series after more processes" % len(sa))


def drop_mid(port):
    """Scrapers that read the first bytes of the answer and leave (a
    small receive buffer: the rest of a large body is still to be sent),
    then a whole scrape: the same length as one before them."""
    port = int(port)
    st, _, before = get("http://127.0.0.1:%d/metrics" % port)
    for _ in range(5):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        s.recv(100)
        s.close()
    st, _, body = get("http://127.0.0.1:%d/metrics" % port)
    if st != 200 or "rte_exporter_scrapes_total" not in body:
        die("no whole scrape after scrapers left mid-body: %s" % st)
    strip = lambda t: [ln for ln in t.splitlines() if not ln.startswith("rte_exporter_scrape")]
    if len(strip(body)) != len(strip(before)):
        die("a scrape after scrapers left mid-body: %d lines, before %d" %
            (len(strip(body)), len(strip(before))))
    print("ok: scrapers that leave mid-body (of %d KiB); the next scrape is whole"
          % (len(body) // 1024))


def pg_group(pg, job, instance, summary):
    st, _, body = get(pg + "/metrics")
    samples = [s for s in parse_expo(body) if s[1].get("job") == job]
    inst = {s[1].get("instance") for s in samples if s[0].startswith("rte_")}
    if inst != {instance}:
        die("groups of job %s: instances %s, want %s" % (job, inst, instance))
    samples = [(n, {k: v for k, v in lab.items() if k not in ("job", "instance")}, v)
               for n, lab, v in samples]
    w, g = want_totals(summary), got_totals(samples)
    if w != g:
        die("the gateway's job %s vs %s: %s" % (job, summary, diff(w, g)))
    print("ok: the gateway holds job %s instance %s with the totals of %s" % (job, instance, summary))


def main(a):
    cmds = {"totals": totals, "prom-totals": prom_totals, "series-same": series_same,
            "drop-mid": drop_mid, "pg-group": pg_group}
    if not a or a[0] not in cmds:
        die("unknown command %s" % a[:1])
    cmds[a[0]](*a[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
