"""perffds.py - the perf clock's descriptors (RTE_PROFILE_CLOCK=perf), for
tests/prof/run.sh: two busy threads and the main thread, then a fork child
that counts its own, then an exec without librte.so that counts what it
inherited. Prints "parent N LOW", "child N", "exec N": N perf_event
descriptors in /proc/self/fd, LOW the lowest.

perffds.py reuse SIG: a daemon's close-all loop, then a pipe's write end
dup2'd onto the number the main thread's event had, then SIG blocked and
unblocked (the profiler stops and starts that thread's event), and a
thread started and ended: prints "reuse ok" if the pipe still carries
its bytes."""
import os
import sys
import threading
import time


def perf_fds():
    n = []
    for f in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + f) == "anon_inode:[perf_event]":
                n.append(int(f))
        except OSError:
            pass
    return sorted(n)


if len(sys.argv) > 2 and sys.argv[1] == "reuse":
    import signal
    sig = int(sys.argv[2])
    low = perf_fds()[0]
    os.closerange(3, 4096)
    r, w = os.pipe()
    os.dup2(w, low)
    signal.pthread_sigmask(signal.SIG_BLOCK, {sig})
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    t = threading.Thread(target=lambda: sum(range(100000)))
    t.start()
    t.join()
    os.write(low, b"hello")
    print("reuse", "ok" if os.read(r, 5) == b"hello" else "broken")
    sys.exit(0)
if len(sys.argv) > 1 and sys.argv[1] == "count":
    print("exec", len(perf_fds()))
    sys.exit(0)
stop = False


def spin():
    while not stop:
        sum(range(1000))


ts = [threading.Thread(target=spin) for _ in range(2)]
for t in ts:
    t.start()
time.sleep(0.3)
fds = perf_fds()
print("parent", len(fds), min(fds or [-1]), flush=True)
pid = os.fork()
if pid == 0:
    sum(range(100000))
    print("child", len(perf_fds()), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
stop = True
for t in ts:
    t.join()
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
os.execve(sys.executable, [sys.executable, sys.argv[0], "count"], env)
