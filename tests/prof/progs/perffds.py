"""perffds.py - the perf clock's descriptors (RTE_PROFILE_CLOCK=perf), for
tests/prof/run.sh: two busy threads and the main thread, then a fork child
that counts its own, then an exec without librte.so that counts what it
inherited. Prints "parent N LOW", "child N", "exec N": N perf_event
descriptors in /proc/self/fd, LOW the lowest."""
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
