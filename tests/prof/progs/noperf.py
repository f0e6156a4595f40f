"""noperf.py PROG ARG... - exec PROG with perf_event_open refused (EACCES)
by a seccomp filter, as a container runtime's default profile does; for
tests/prof/run.sh (the perf clock's fallback). x86-64 only (the filter
names its system call number)."""
import ctypes
import os
import struct
import sys

NR_PERF_EVENT_OPEN = 298           # x86-64
EACCES = 13
LD_W_ABS, JEQ_K, RET_K = 0x20, 0x15, 0x06
RET_ERRNO, RET_ALLOW = 0x00050000, 0x7fff0000
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def ins(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


prog = (ins(LD_W_ABS, 0, 0, 0) +                  # the call's number
        ins(JEQ_K, 0, 1, NR_PERF_EVENT_OPEN) +
        ins(RET_K, 0, 0, RET_ERRNO | EACCES) +
        ins(RET_K, 0, 0, RET_ALLOW))
buf = ctypes.create_string_buffer(prog)
fp = Fprog(len(prog) // 8, ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
        libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fp),
                   0, 0) != 0:
    sys.exit("noperf: seccomp: %s" % os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
