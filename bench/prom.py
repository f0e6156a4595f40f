#!/usr/bin/env python3
"""bench/prom.py BUILD [--quick] - the exporter's rows of `make bench`.

100 live traced processes (bench/prom_writer, 20 span names each) under one
`rte-read --serve`: the median time of a scrape (goal: under 50 ms) and the
exporter's CPU over a few seconds while every writer writes RATE events a
second (RTE_BENCH_PROM_RATE, default 100000; goal: under 10 % of one core),
each printed with its goal and the ratio to it. A scrape is timed from the
request until the last byte of its body is in, read into a buffer kept
from one scrape to the next (as Prometheus's scraper keeps its buffers),
not decoded: Python's own allocation and decoding of a 4.7 MiB body (25-40
ms more on a busy 2-core VM) are the client's work, not the exporter's.
The exporter's CPU is its own rusage: utime + stime of /proc/PID/stat
(every thread of the process: the reader and libmicrohttpd's), over the
window, whatever the writers use. Lost words are those the exporter saw:
during that window (steady state: the exporter keeps up if none), and in
all since the writers started (100 processes starting at once on a small
machine may lose words before the exporter first reads them). Loopback
only; every process started here is stopped here.
"""
import http.client
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

B = sys.argv[1] if len(sys.argv) > 1 else "build"
QUICK = "--quick" in sys.argv
PROCS, NAMES = (20, 20) if QUICK else (100, 20)
# events/s per writer: the 100 k (on a small machine the writers
# themselves cannot reach it: the row says what was read)
RATE = int(os.environ.get("RTE_BENCH_PROM_RATE", "100000"))
SECS = 8 if QUICK else 15
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


BODY = bytearray(64 << 20)


def scrape_time(url):
    """The time of one GET of url until its whole body is in BODY."""
    host = url.split("/")[2]
    t = time.perf_counter()
    c = http.client.HTTPConnection(host, timeout=30)
    try:
        c.request("GET", "/metrics")
        r = c.getresponse()
        mv, n = memoryview(BODY), 0
        while True:
            k = r.readinto(mv[n:])
            if not k:
                break
            n += k
        dt = time.perf_counter() - t
    finally:
        c.close()
    if r.status != 200 or n != int(r.getheader("Content-Length", -1)):
        sys.exit("bench/prom.py: a scrape failed: status %d, %d bytes" % (r.status, n))
    return dt


def scrape(url):
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=30) as r:
        body = r.read().decode()
    return time.perf_counter() - t, body


def metric(body, name):
    m = re.search(r"^%s (\S+)$" % name, body, re.M)
    return float(m.group(1)) if m else 0.0


def metric_sum(body, name):
    return sum(float(x) for x in re.findall(r"^%s\{.*\} (\S+)$" % name, body, re.M))


def lost_words(body):
    return sum(float(x) for x in re.findall(r"^rte_lost_words_total\{.*\} (\S+)$",
                                            body, re.M))


def main():
    d = tempfile.mkdtemp(prefix="rte-bench-prom.")
    env = dict(os.environ, OCAML_RUNTIME_EVENTS_START="1",
               OCAML_RUNTIME_EVENTS_DIR=d)
    ex = subprocess.Popen([B + "/rte-read", "--serve", "127.0.0.1:0", d],
                          stderr=subprocess.PIPE, text=True)
    line = ex.stderr.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", line)
    if not m:
        ex.kill()
        sys.exit("bench/prom.py: the exporter did not start: " + line)
    url = "http://127.0.0.1:%s/metrics" % m.group(1)
    ws = [subprocess.Popen([B + "/bench/prom_writer", str(NAMES), str(RATE),
                            str(SECS)], env=env) for _ in range(PROCS)]
    try:
        end = time.time() + 20
        while time.time() < end:
            body = scrape(url)[1]
            # label sets by exe (the default): every writer is in one
            if metric_sum(body, "rte_processes") >= PROCS and \
                    body.count('rte_span_duration_seconds_count{') >= NAMES:
                break
            time.sleep(0.2)
        body = scrape(url)[1]
        e0, l0 = metric(body, "rte_exporter_read_events_total"), lost_words(body)
        c0, t0 = cpu_s(ex.pid), time.time()
        time.sleep(3 if QUICK else 5)
        cpu = (cpu_s(ex.pid) - c0) / (time.time() - t0) * 100
        body = scrape(url)[1]
        rate = (metric(body, "rte_exporter_read_events_total") - e0) / \
            (time.time() - t0)
        lost_window = lost_words(body) - l0
        times = [scrape_time(url) * 1000 for _ in range(10)]
        body = scrape(url)[1]
        ms = statistics.median(times)
        lost = lost_words(body)
        print("%-52s %10.1f ms   goal %6.1f ms   ratio %.2f" %
              ("prom: scrape %d procs x %d names (%d KiB)" %
               (PROCS, NAMES, len(body) // 1024), ms, 50.0, ms / 50.0))
        # the same processes, but one label set each (--per-process): the
        # exposition that grows with the processes
        pp = subprocess.Popen([B + "/rte-read", "--serve", "127.0.0.1:0",
                               "--per-process", d], stderr=subprocess.PIPE, text=True)
        try:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", pp.stderr.readline())
            purl = "http://127.0.0.1:%s/metrics" % m.group(1)
            end = time.time() + 20
            while time.time() < end:
                pbody = scrape(purl)[1]
                if pbody.count('rte_span_duration_seconds_count{') >= PROCS * NAMES:
                    break
                time.sleep(0.2)
            ptimes = [scrape_time(purl) * 1000 for _ in range(10)]
            pms = statistics.median(ptimes)
            print("%-52s %10.1f ms   goal %6.1f ms   ratio %.2f" %
                  ("prom: scrape --per-process %d x %d (%d KiB)" %
                   (PROCS, NAMES, len(pbody) // 1024), pms, 50.0, pms / 50.0))
        finally:
            pp.kill()
            pp.wait()
        print("%-52s %10.1f %%    goal %6.1f %%    ratio %.2f   (read %.2f M events/s)" %
              ("prom: exporter CPU, %d writers x %d ev/s" % (PROCS, RATE),
               cpu, 10.0, cpu / 10.0, rate / 1e6))
        print("%-52s %10d words   goal %6d       (since start: %d words, events read: %d)" %
              ("prom: lost words during the CPU window", lost_window, 0, lost,
               metric(body, "rte_exporter_read_events_total")))
    finally:
        for w in ws:
            w.kill()
            w.wait()
        ex.send_signal(signal.SIGTERM)
        try:
            ex.wait(timeout=10)
        except subprocess.TimeoutExpired:
            ex.kill()
            ex.wait()
        subprocess.run(["rm", "-rf", d])


main()
