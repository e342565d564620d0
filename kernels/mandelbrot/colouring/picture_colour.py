"""One colour per value in a picture made of parts (strips, a poster's bands): the mappings that
rest on the picture's statistics ("log": the smallest escaped value; "histogram": the range and the
histogram of the escaped values, colour.py) take them from the whole picture, not from each part.

Two passes: the parts' values are kept as they come (`WholePicture.add`: in host memory, or in a
temporary file beside the output when memory is short) while their range is merged; then the
histogram of every part is binned over that range and summed (on the device for a GPU), and each
part is coloured with the fixed statistics as the colour kernel's inputs (`FixedStats`). The
values are computed once; the colour pass re-reads them. With "sqrt" nothing of this is needed.
"""
from __future__ import annotations

import math
import os
import shutil
import tempfile
from dataclasses import dataclass

import numpy as np

from ...buffers import BufferPool, host_available_bytes
from ...timing import JobTimer
from .colour import (
    COLOUR_BLOCK,
    HIST_BINS,
    N_STATS,
    REDUCE_GRID,
    S_COUNT,
    S_MAX,
    S_MIN,
    SIM_BLOCK,
    SIM_REDUCE_GRID,
    cdf_cpu,
    histogram_cpu,
    needs_stats,
    stats_cpu,
)

# kept values may take at most this share of the memory the OS can hand out; beyond, a file
RAM_SHARE = 0.5


@dataclass(frozen=True)
class FixedStats:
    """A whole picture's statistics as the colour kernel takes them: stats (N_STATS,) float64
    (smallest and largest escaped value, their number) and cdf (HIST_BINS + 1,) float64."""
    stats: np.ndarray
    cdf: np.ndarray


def empty_range() -> np.ndarray:
    return np.array([math.inf, -math.inf, 0.0])


def value_range(values: np.ndarray, max_iter: int) -> np.ndarray:
    """(smallest, largest, number) of the escaped values in a host array."""
    out = empty_range()
    stats_cpu(np.ascontiguousarray(values, np.float64), int(max_iter), out)
    return out


def merge_range(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([min(a[S_MIN], b[S_MIN]), max(a[S_MAX], b[S_MAX]), a[S_COUNT] + b[S_COUNT]])


def fixed_stats(rng: np.ndarray, hist: np.ndarray | None = None) -> FixedStats:
    cdf = np.zeros(HIST_BINS + 1, np.float64)
    if hist is not None:
        cdf_cpu(np.asarray(hist, np.int64), cdf)
    return FixedStats(np.ascontiguousarray(rng, np.float64), cdf)


def _sync(stream):
    from numba import cuda
    if stream is not None:
        stream.synchronize()
    else:
        cuda.synchronize()


def _device_rows(pool: BufferPool, name: str, n: int, rows: int, w: int, dtype, stream):
    """The first n rows of a pooled (rows, w) device buffer (one allocation for every part)."""
    return pool.device(name, (rows, w), dtype, stream=stream)[:n]


def histogram_part(colourer, pool, values: np.ndarray, rows: int, max_iter: int,
                   rng: np.ndarray, timer, stream=None) -> np.ndarray:
    """The histogram (HIST_BINS,) int64 of one part's host values, binned over the whole
    picture's range `rng` (so the parts' histograms add up to the picture's); on the device for
    a GPU, as the one-piece frame's is."""
    max_iter = int(max_iter)
    if not colourer.backend.is_gpu:
        hist = np.zeros(HIST_BINS, np.int64)
        with timer.phase("kernel", detail="colourise"):
            histogram_cpu(np.ascontiguousarray(values), max_iter, rng, hist)
        return hist
    sim = colourer.backend.simulated
    n, w = values.shape
    dev = _device_rows(pool, "part-values", n, rows, w, np.float64, stream)
    drng = colourer.pool.device("fixed-stats", (N_STATS,), np.float64, stream=stream)
    dhist = colourer.pool.device("hist", (HIST_BINS,), np.int64, stream=stream)
    scratch = colourer.pool.device("stats", (N_STATS,), np.float64, stream=stream)
    bx, by = SIM_BLOCK if sim else COLOUR_BLOCK
    with timer.phase("h2d", gpu=True, nbytes=values.nbytes + rng.nbytes, gate=False):
        dev.copy_to_device(np.ascontiguousarray(values), stream=stream or 0)
        drng.copy_to_device(np.ascontiguousarray(rng, np.float64), stream=stream or 0)
    from .colour_gpu import histogram_kernel, stats_init_kernel   # numba.cuda: the GPU's only
    with timer.phase("kernel", gpu=True, detail="colourise"):
        stats_init_kernel[4, 8 if sim else 256, stream or 0](scratch, dhist)
        histogram_kernel[SIM_REDUCE_GRID if sim else REDUCE_GRID, (bx, by), stream or 0](
            dev, max_iter, drng, dhist)
    hist = np.empty(HIST_BINS, np.int64)
    with timer.phase("d2h", gpu=True, nbytes=hist.nbytes, gate=False):
        dhist.copy_to_host(hist, stream=stream or 0)
    _sync(stream)
    return hist


def colour_part(colourer, pool, values: np.ndarray, rows: int, spec, max_iter: int,
                fixed: FixedStats, timer, stream=None, out: np.ndarray | None = None) -> np.ndarray:
    """One part's host values coloured with the picture's statistics: uint8 RGBA (n, w, 4), in
    `out` when given (on a GPU: values up, the colour kernel there, the RGBA home)."""
    n, w = values.shape
    if out is None:
        out = np.empty((n, w, 4), np.uint8)
    words = out.view(np.uint32).reshape(n, w)
    if not colourer.backend.is_gpu:
        colourer.colour(np.ascontiguousarray(values), words, spec, max_iter, timer, fixed=fixed)
        return out
    dev = _device_rows(pool, "part-values", n, rows, w, np.float64, stream)
    rgba = _device_rows(pool, "part-rgba", n, rows, w, np.uint32, stream)
    with timer.phase("h2d", gpu=True, nbytes=values.nbytes, gate=False):
        dev.copy_to_device(np.ascontiguousarray(values), stream=stream or 0)
    colourer.colour(dev, rgba, spec, max_iter, timer, stream, fixed=fixed)
    with timer.phase("d2h", gpu=True, nbytes=out.nbytes, gate=False):
        rgba.copy_to_host(words, stream=stream or 0)
    _sync(stream)
    return out


class KeptValues:
    """The whole picture's values (h, w) float64 while its parts arrive: in host memory when it
    has room (RAM_SHARE of what is available), else in an unnamed temporary file in `folder`
    (written and read with plain calls: a full disk is an OSError, never a fault)."""

    def __init__(self, h: int, w: int, folder: str | None = None):
        self.h, self.w = int(h), int(w)
        nbytes = self.h * self.w * 8
        avail = host_available_bytes()
        self._ram = self._fh = None
        if avail is None or nbytes <= avail * RAM_SHARE:
            self._ram = np.empty((self.h, self.w), np.float64)
            return
        folder = folder or tempfile.gettempdir()
        free = shutil.disk_usage(folder).free
        if nbytes > free:
            raise OSError(f"colouring the picture as one needs its values kept ({nbytes / 2 ** 30:.1f} "
                          f"GiB) but {folder} has {free / 2 ** 30:.1f} GiB free")
        self._fh = tempfile.TemporaryFile(dir=folder, prefix=".values-")

    def put(self, row0: int, values: np.ndarray) -> None:
        if self._ram is not None:
            self._ram[row0:row0 + values.shape[0]] = values
            return
        data = np.ascontiguousarray(values, np.float64)
        view, offset = memoryview(data).cast("B"), int(row0) * self.w * 8
        while view:
            done = os.pwrite(self._fh.fileno(), view, offset)
            view, offset = view[done:], offset + done

    def get(self, row0: int, n: int) -> np.ndarray:
        if self._ram is not None:
            return self._ram[row0:row0 + n]
        out = np.empty((n, self.w), np.float64)
        view, offset = memoryview(out).cast("B"), int(row0) * self.w * 8
        while view:
            got = os.preadv(self._fh.fileno(), [view], offset)
            if got <= 0:
                raise OSError("the kept values ended early")
            view, offset = view[got:], offset + got
        return out

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
        self._ram = self._fh = None


class ArrayValues:
    """KeptValues' reading side over values already in an array (a memory map)."""

    def __init__(self, array: np.ndarray):
        self.array = array

    def get(self, row0: int, n: int) -> np.ndarray:
        return np.ascontiguousarray(self.array[row0:row0 + n])

    def close(self) -> None:
        pass


class WholePicture:
    """A picture of `size` coloured as one: `add(row0, values)` every part (any order, host
    arrays, copied), or a `source` holding them all (ArrayValues, then `measure()`), then
    `strips()` for the coloured strips of `rows` rows, top first. With a mapping that needs no
    statistics the parts are still kept, so callers need not ask."""

    def __init__(self, colourer, size, spec, max_iter: int, rows: int, stream=None,
                 folder: str | None = None, source=None):
        self.colourer, self.spec, self.max_iter = colourer, spec, int(max_iter)
        self.w, self.h = int(size[0]), int(size[1])
        self.rows, self.stream = max(1, min(int(rows), self.h)), stream
        self.kept = source if source is not None else KeptValues(self.h, self.w, folder)
        self.range = empty_range()
        self.fixed: FixedStats | None = None
        self.pool = BufferPool(colourer.backend)     # the parts' device buffers go with it

    def add(self, row0: int, values: np.ndarray) -> None:
        self.kept.put(int(row0), values)
        self.range = merge_range(self.range, value_range(values, self.max_iter))

    def measure(self, cancel=None) -> None:
        """The range of values already in the source (a picture whose parts were kept elsewhere,
        such as a poster's parts folder), instead of add() for each part."""
        self.range = empty_range()
        for r0, n in self._cuts():
            if cancel is not None:
                cancel.check()
            self.range = merge_range(self.range, value_range(self.kept.get(r0, n), self.max_iter))

    def _cuts(self):
        return [(r0, min(self.rows, self.h - r0)) for r0 in range(0, self.h, self.rows)]

    def statistics(self, cancel=None) -> FixedStats:
        """The whole picture's statistics (the histogram summed over its parts when needed)."""
        if self.fixed is not None:
            return self.fixed
        hist = None
        if getattr(self.spec, "mapping", "sqrt") == "histogram":
            timer = JobTimer(self.colourer.backend, self.stream, "histogram")
            hist = np.zeros(HIST_BINS, np.int64)
            for r0, n in self._cuts():
                if cancel is not None:
                    cancel.check()
                hist += histogram_part(self.colourer, self.pool, self.kept.get(r0, n), self.rows,
                                       self.max_iter, self.range, timer, self.stream)
            timer.finish()
        self.fixed = fixed_stats(self.range, hist)
        return self.fixed

    def strips(self, cancel=None, out: np.ndarray | None = None):
        """(row0, uint8 RGBA (n, w, 4)) per strip; the array is reused for the next strip unless
        `out` (the whole picture's RGBA, e.g. a memory map) is given to colour into."""
        fixed = self.statistics(cancel)
        buf = None
        for r0, n in self._cuts():
            if cancel is not None:
                cancel.check()
            if out is not None:
                dest = out[r0:r0 + n]
            else:
                if buf is None:
                    buf = np.empty((self.rows, self.w, 4), np.uint8)
                dest = buf[:n]
            timer = JobTimer(self.colourer.backend, self.stream, "colour")
            colour_part(self.colourer, self.pool, self.kept.get(r0, n), self.rows, self.spec,
                        self.max_iter, fixed, timer, self.stream, out=dest)
            timer.finish()
            yield r0, dest

    def close(self) -> None:
        self.kept.close()
        self.pool.clear()


def whole_strips(colourer, value_strips, size, spec, max_iter: int, rows: int, stream=None,
                 cancel=None, progress=None, folder: str | None = None):
    """Strips of uint8 RGBA coloured as one picture from `value_strips` (an iterator of (row0,
    host float64 values), each valid until the next): every strip's values first (progress
    (fraction) after each), then the colours. The iterator is closed whatever happens."""
    pic = WholePicture(colourer, size, spec, max_iter, rows, stream, folder)
    h = int(size[1])
    try:
        for r0, values in value_strips:
            pic.add(r0, values)
            if progress is not None:
                progress((r0 + values.shape[0]) / h)
        yield from pic.strips(cancel)
    finally:
        close = getattr(value_strips, "close", None)
        if close is not None:
            close()
        pic.close()


def needs_whole_picture(spec, values: bool) -> bool:
    """Whether a picture of `spec` in parts must be coloured as one: colours (not values) in a
    mapping that rests on the picture's statistics."""
    return not values and needs_stats(getattr(spec, "mapping", "sqrt"))
