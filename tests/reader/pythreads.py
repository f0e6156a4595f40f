"""tests/reader/pythreads.py - a real Python program for the Chrome tests
(tests/reader/views.sh), run by /usr/bin/python3 under rte-run: threads in
two waves (rings reused), a multiprocessing pool of forked workers that
start threads of their own, and a subprocess."""
import multiprocessing
import subprocess
import threading


def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def in_worker(n):
    ts = [threading.Thread(target=spin, args=(20000,)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return spin(n)


def wave(k):
    ts = [threading.Thread(target=spin, args=(50000,), name="wave%d-%d" % (k, i)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


if __name__ == "__main__":
    wave(0)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(3) as pool:
        pool.map(in_worker, [10000] * 6)
    wave(1)
    subprocess.run(["/bin/true"], check=True)
