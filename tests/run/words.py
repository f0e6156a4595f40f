"""tests/run/words.py FILE: per ring of a plain ring file (a source ring
file or a --no-compress capture), one line "RING HEAD TAIL KEPT PAD":
its header's head and tail, and over the words [max(head, tail - size),
tail) still in the ring, the words of real messages (KEPT) and of padding
messages (PAD: runtime type 0, id 0). Only rings with a tail are listed.
Reads the file with its own parser of doc/FORMAT.md (sections 4 to 6),
not the consumer library, so that the drain's counts are checked against
an independent reading."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
(version, rings, rh_bytes, _rsb, size, hoff, doff, _coff) = struct.unpack_from("<8Q", data, 0)
assert version == 1, "not a ring file of version 1"
for r in range(rings):
    head, tail = struct.unpack_from("<2Q", data, hoff + r * rh_bytes)
    if tail == 0:
        continue
    at, kept, pad = max(head, tail - size), 0, 0
    base = doff + r * size * 8
    while at < tail:
        h = struct.unpack_from("<Q", data, base + (at % size) * 8)[0]
        n = h >> 54
        if n == 0:
            sys.exit("ring %d: a message of length 0 at %d" % (r, at))
        if h & ~(0x3FF << 54) == 0:
            pad += n
        else:
            kept += n
        at += n
    print(r, head, tail, kept, pad)
