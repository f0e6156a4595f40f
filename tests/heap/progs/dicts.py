# dicts.py - a Python program building dicts: a 200 000-entry dict built
# and dropped (the peak), many small short-lived dicts, and 20 000 entries
# kept in a global until exit (the leak, as heaptrack sees it: Python does
# not free its objects at exit).
import sys

def build(n):
    return {("key%d" % i): [i, str(i)] for i in range(n)}

def churn(n):
    t = 0
    for i in range(n):
        d = {"a": i, "b": i + 1}
        t += len(d)
    return t

KEPT = []

def keep(n):
    KEPT.append(build(n))

big = build(200000)
del big
print(churn(100000))
keep(20000)
sys.stdout.flush()
