"""pyspawn.py - a Python program's children (tests/tree/run.sh): subprocess
(vfork+exec in CPython), multiprocessing (fork, the child exits 5) and
os.system (exit 4); exits 0 if every status is as expected."""
import multiprocessing
import os
import subprocess
import sys


def child():
    sys.exit(5)


def main():
    ok = subprocess.run(["sh", "-c", "exit 3"]).returncode == 3
    ctx = multiprocessing.get_context("fork")
    p = ctx.Process(target=child)
    p.start()
    p.join()
    ok = ok and p.exitcode == 5
    ok = ok and os.waitstatus_to_exitcode(os.system("exit 4")) == 4
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
