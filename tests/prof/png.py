"""png.py - what a screenshot shows, for tests/prof/views.sh: decodes an
8-bit RGB or RGBA PNG (as headless Chromium writes them; zlib only) and
prints JSON: width, height, the share of pixels that are not the page's
background (white or the flame graph's #f8f8f0), the distinct colours,
and the shares of reddish and bluish pixels.

Usage: python3 png.py FILE.png
"""
import json
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * bpp
    prev, out = bytearray(stride), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.extend(tuple(line[x:x + 3]) for x in range(0, stride, bpp))
        prev = line
    return w, h, out


w, h, px = pixels(sys.argv[1])
bg = {(255, 255, 255), (0xf8, 0xf8, 0xf0)}
n = len(px) or 1
print(json.dumps({
    "width": w, "height": h,
    "drawn": sum(1 for p in px if p not in bg) / n,
    "colours": len(set(px)),
    "red": sum(1 for r, g, b in px if r > g + 60 and r > b + 60) / n,
    "blue": sum(1 for r, g, b in px if b > r + 60 and b > g + 60) / n,
}))
