"""RGBA pictures encoded as PNG on every core: the rows filtered with PNG's "Up" filter by NumPy,
then deflated in slices on threads (zlib lets the GIL go), each slice a run-length-only stream of
its own, joined into one zlib stream as pigz joins them.

Pillow filters and deflates on one thread, several times slower even at its fastest setting
(docs/PERFORMANCE.md, "Start-up"). Run-length matches never reach back past their own slice, so a
slice needs nothing from the one before it; the file decodes to the same pixels
(tests/cli/test_render_pixels.py); the file is somewhat larger than at Pillow's level 6.
"""
from __future__ import annotations

import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
UP = 2                  # PNG's filter type "Up": each byte minus the one above it
SLICE_BYTES = 1 << 19   # smallest slice worth a thread of its own
IDAT_BYTES = 1 << 30
ZLIB_HEADER = b"\x78\x01"   # deflate, 32 KiB window, "fastest" (a check value: 0x7801 % 31 == 0)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def filtered(rgba: np.ndarray) -> np.ndarray:
    """The PNG scanlines of (h, w, 4) uint8 RGBA: each row's filter byte (Up), then its bytes
    minus the row above's (uint8 arithmetic wraps modulo 256, as PNG's filters do)."""
    h, w = rgba.shape[:2]
    raw = rgba.reshape(h, w * 4)
    out = np.empty((h, w * 4 + 1), np.uint8)
    out[:, 0] = UP
    out[0, 1:] = raw[0]                     # the first row's "above" is zeros
    np.subtract(raw[1:], raw[:-1], out=out[1:, 1:])
    return out


def _deflate(data: memoryview, last: bool) -> bytes:
    c = zlib.compressobj(1, zlib.DEFLATED, -15, 8, zlib.Z_RLE)
    # a sync flush ends a slice on a byte boundary without ending the stream
    return c.compress(data) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


def zlib_stream(data: bytes | memoryview, threads: int | None = None) -> bytes:
    """`data` as one zlib stream, deflated in slices on up to `threads` threads (default: cores)."""
    view = memoryview(data).cast("B")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = max(1, min(threads or cores or 1, len(view) // SLICE_BYTES))
    step = -(-len(view) // threads)
    parts = [(view[i:i + step], i + step >= len(view)) for i in range(0, len(view), step)] \
        or [(view, True)]
    if len(parts) == 1:
        body = [_deflate(*parts[0])]
    else:
        with ThreadPoolExecutor(len(parts), thread_name_prefix="png") as pool:
            body = list(pool.map(lambda p: _deflate(*p), parts))
    return ZLIB_HEADER + b"".join(body) + struct.pack(">I", zlib.adler32(view))


def encode_png(rgba: np.ndarray, threads: int | None = None) -> bytes:
    """The PNG file of (h, w, 4) uint8 RGBA, row 0 at the top."""
    h, w = rgba.shape[:2]
    header = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)     # 8 bits, RGBA, no interlace
    idat = zlib_stream(filtered(np.ascontiguousarray(rgba)), threads)
    # a chunk holds under 2 GiB: a huge picture's stream goes in several (decoders join them)
    idats = [_chunk(b"IDAT", idat[i:i + IDAT_BYTES]) for i in range(0, len(idat), IDAT_BYTES)]
    return b"".join([SIGNATURE, _chunk(b"IHDR", header), *idats, _chunk(b"IEND", b"")])
