"""Draw the app icons (static/icon-32.png, icon-192.png, icon-512.png and
icon-maskable-512.png) with the standard library only: two cards on the table's dark
blue. Run again after a change: `python scripts/make_icons.py`."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"
BG = (15, 28, 43)
BACK = (35, 75, 116)
EDGE = (74, 120, 166)
FRONT = (255, 207, 74)
INK = (27, 36, 48)


def rounded(x, y, box, r):
    """Inside a rounded rectangle box = (x0, y0, x1, y1)?"""
    x0, y0, x1, y1 = box
    if not (x0 <= x <= x1 and y0 <= y <= y1):
        return False
    cx = min(max(x, x0 + r), x1 - r)
    cy = min(max(y, y0 + r), y1 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def colour(u, v, maskable):
    """The colour at (u, v) in 0..1; a maskable icon keeps its drawing in the middle 80%."""
    if maskable:
        u, v = (u - 0.1) / 0.8, (v - 0.1) / 0.8
    elif not rounded(u, v, (0, 0, 1, 1), 0.18):
        return None  # transparent corners
    if rounded(u, v, (0.4, 0.2, 0.84, 0.84), 0.07):
        # the front card shows a bold "-" (the best cards of the game are negative)
        if 0.52 <= u <= 0.72 and 0.48 <= v <= 0.56:
            return INK
        return FRONT
    if rounded(u, v, (0.14, 0.14, 0.56, 0.76), 0.06):
        if rounded(u, v, (0.16, 0.16, 0.54, 0.74), 0.05):
            return BACK
        return EDGE
    return BG


def png(size: int, maskable: bool) -> bytes:
    rows = []
    n = 2  # samples per axis (antialiasing)
    for y in range(size):
        row = bytearray([0])
        for x in range(size):
            acc = [0, 0, 0, 0]
            for sy in range(n):
                for sx in range(n):
                    c = colour((x + (sx + 0.5) / n) / size, (y + (sy + 0.5) / n) / size, maskable)
                    if c is not None:
                        acc[0] += c[0]
                        acc[1] += c[1]
                        acc[2] += c[2]
                        acc[3] += 255
            k = n * n
            alpha = acc[3] // k
            if alpha:
                covered = acc[3] // 255
                row += bytes([acc[0] // covered, acc[1] // covered, acc[2] // covered, alpha])
            else:
                row += b"\0\0\0\0"
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    for name, size, maskable in (
        ("icon-32.png", 32, False),
        ("icon-192.png", 192, False),
        ("icon-512.png", 512, False),
        ("icon-maskable-512.png", 512, True),
    ):
        (STATIC / name).write_bytes(png(size, maskable))
        print(name, (STATIC / name).stat().st_size, "bytes")


if __name__ == "__main__":
    main()
