"""RGBA pictures encoded as PNG on every core: slices of rows filtered with PNG's "Up" filter by
NumPy and deflated on threads (both let the GIL go), each slice a run-length-only deflate stream
of its own and an IDAT chunk of its own, joined into one zlib stream as pigz joins them.

Pillow filters and deflates on one thread, several times slower even at its fastest setting
(docs/PERFORMANCE.md, "Start-up"). Run-length matches never reach back past their own slice, so a
slice needs nothing from the one before it; the file decodes to the same pixels
(tests/cli/test_render_pixels.py) and is somewhat larger than at Pillow's level 6. Chunks go to
the file in order as they are done: besides the picture, memory holds the slices under way and
the compressed ones waiting for their turn.
"""
from __future__ import annotations

import io
import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
UP = 2                              # PNG's filter type "Up": each byte minus the one above it
SLICE_MIN, SLICE_MAX = 1 << 18, 1 << 23     # bytes of filtered rows per slice
ZLIB_HEADER = b"\x78\x01"           # deflate, 32 KiB window, "fastest" (check: 0x7801 % 31 == 0)
ADLER_BASE = 65521


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def adler32_combine(a1: int, a2: int, len2: int) -> int:
    """The Adler-32 of two pieces joined, from each piece's (zlib's adler32_combine)."""
    rem = len2 % ADLER_BASE
    s1 = ((a1 & 0xFFFF) + (a2 & 0xFFFF) + ADLER_BASE - 1) % ADLER_BASE
    s2 = (rem * (a1 & 0xFFFF) + (a1 >> 16) + (a2 >> 16) + ADLER_BASE - rem) % ADLER_BASE
    return s1 | (s2 << 16)


def _slice(raw: np.ndarray, r0: int, r1: int, last: bool) -> tuple[bytes, int, int]:
    """Rows r0 .. r1 of `raw` (h, 4w) as PNG scanlines (filter byte, then each byte minus the one
    above it: uint8 arithmetic wraps modulo 256 as PNG's does), deflated: (deflate, adler, len)."""
    lines = np.empty((r1 - r0, raw.shape[1] + 1), np.uint8)
    lines[:, 0] = UP
    if r0 == 0:                     # the first row's "above" is zeros
        lines[0, 1:] = raw[0]
        np.subtract(raw[1:r1], raw[:r1 - 1], out=lines[1:, 1:])
    else:
        np.subtract(raw[r0:r1], raw[r0 - 1:r1 - 1], out=lines[:, 1:])
    data = memoryview(lines).cast("B")
    c = zlib.compressobj(1, zlib.DEFLATED, -15, 8, zlib.Z_RLE)
    # a sync flush ends a slice on a byte boundary without ending the stream
    body = c.compress(data) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)
    return body, zlib.adler32(data), len(data)


def write_png_to(fh, rgba: np.ndarray, threads: int | None = None) -> None:
    """(h, w, 4) uint8 RGBA, row 0 at the top, as a PNG file into the binary file `fh`, deflated
    on up to `threads` threads (default: this process's cores)."""
    rgba = np.ascontiguousarray(rgba)
    h, w = rgba.shape[:2]
    if not (h and w):
        raise ValueError(f"a PNG picture has pixels: got {w}×{h}")
    raw = rgba.reshape(h, w * 4)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = max(1, threads or cores or 1)
    line = w * 4 + 1
    # two slices a thread evens out their speeds; the bounds keep a thread's work worth starting
    # and the slices under way small beside the picture
    rows = max(1, min(SLICE_MAX, max(SLICE_MIN, h * line // (2 * threads))) // line)
    cuts = [(r0, min(h, r0 + rows)) for r0 in range(0, h, rows)]
    fh.write(SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)))
    adler = 1
    with ThreadPoolExecutor(min(threads, len(cuts)), thread_name_prefix="png") as pool:
        done = pool.map(lambda cut: _slice(raw, cut[0], cut[1], cut[1] == h), cuts)
        for i, (body, part, n) in enumerate(done):
            adler = adler32_combine(adler, part, n)
            if i == 0:
                body = ZLIB_HEADER + body
            if i == len(cuts) - 1:
                body += struct.pack(">I", adler)
            fh.write(_chunk(b"IDAT", body))
    fh.write(_chunk(b"IEND", b""))


def encode_png(rgba: np.ndarray, threads: int | None = None) -> bytes:
    """write_png_to's file as bytes."""
    out = io.BytesIO()
    write_png_to(out, rgba, threads)
    return out.getvalue()
