"""Colouring escape values on the device: a CUDA version of every step (colour_gpu.py) and its
CPU twin (here); colourer.Colourer runs them.

A pixel's value v (the smooth count of escape.py; v >= max_iter inside the set) becomes a phase s,
folded into a mirrored walk through the palette LUT (0 → 1 → 0 → …, so a palette that is not
cyclic shows no seam). Three mappings from v to s:

* "sqrt" (today's default for float64 frames): s = offset + density · 0.125 · sqrt(v). Fine up to a
  few thousand iterations; at 10^5–10^7 iterations every pixel of a deep frame sits on a count
  near the same large number, where sqrt barely changes, and the frame comes out in one colour.
* "log": s = offset + density · 0.5 · log(1 + v - vmin), vmin the smallest escaped value of the
  frame (found on the device). Subtracting vmin is the automatic part: a deep frame whose counts
  run from 568,000 to 572,000 gets the same bands as a shallow one from 0 to 4,000.
* "histogram": s = offset + density · F(v), F the fraction of the frame's escaped pixels below v
  (histogram equalisation: every colour of one pass covers the same area). The histogram has
  HIST_BINS bins over log(1 + v - vmin) and F is interpolated within a bin, so neighbouring
  values keep apart.

Statistics (vmin, vmax, the number of escaped pixels, the histogram, its cumulative fractions) are
computed on the device from the values where they lie; only the finished RGBA crosses the bus.
Both targets use the same explicitly rounded multiplies and adds (see escape.py), so CPU and GPU
pick the same palette entries except where libm's and libdevice's log differ in the last bit.
"""
from __future__ import annotations

import math
import operator

import numpy as np
from numba import njit, prange

from ...cpu_chunks import WORKERS, claim, enter, leave, control, reset
from ..requests.request import MAPPINGS      # decided once, with the requests that name them

SQRT, LOG, HISTOGRAM = range(3)
# palette passes per unit of the mapping's phase, at density 1
SQRT_SCALE = 0.125        # per unit of sqrt(v): today's default
LOG_SCALE = 0.5           # per e-fold of (1 + v - vmin)
HIST_PASSES = 1.0         # the whole frame spans this many passes
HIST_BINS = 1024
# stats slots (float64): smallest and largest escaped value, number of escaped pixels
S_MIN, S_MAX, S_COUNT = range(3)
N_STATS = 3
COLOUR_BLOCK = (32, 8)
SIM_BLOCK = (8, 8)
# reductions: a fixed grid of blocks that loop over the frame (few atomics at the end)
REDUCE_GRID = (16, 16)
SIM_REDUCE_GRID = (2, 2)
REDUCE_THREADS = 256      # threads per block of the reductions (COLOUR_BLOCK's 32 x 8)
CDF_THREADS = 256
CDF_SHARED = CDF_THREADS + 1     # a shared array's shape must be one constant, not an expression
SIM_CDF_THREADS = 4


def mapping_index(name: str) -> int:
    if name not in MAPPINGS:
        raise ValueError(f"unknown colour mapping {name!r}; choose one of: {', '.join(MAPPINGS)}")
    return MAPPINGS.index(name)


def phase_scale(mapping: str, density: float) -> float:
    """What the kernels multiply the mapping's phase by: one mirrored palette pass per 1/this."""
    return float(density) * (SQRT_SCALE, LOG_SCALE, HIST_PASSES)[mapping_index(mapping)]


def needs_stats(mapping: str) -> bool:
    return mapping_index(mapping) != SQRT


def pack_rgba(rgba_rows: np.ndarray) -> np.ndarray:
    """(N, 4) uint8 RGBA → (N,) uint32 with the same bytes in memory (so stores stay RGBA)."""
    return np.ascontiguousarray(rgba_rows, dtype=np.uint8).view(np.uint32).reshape(-1).copy()


def pack_colour(rgba) -> int:
    return int(np.asarray(rgba, dtype=np.uint8).reshape(1, 4).view(np.uint32)[0, 0])


def _make_colour(mul, add, jit):
    """The per-pixel arithmetic, written once; returns (bin_scale, bin_position, colour)."""

    @jit
    def bin_scale(vmin, vmax):
        """HIST_BINS / log(1 + vmax - vmin): bins per unit of log(1 + v - vmin); 0 when the
        frame has fewer than two distinct escaped values."""
        if not vmax > vmin:
            return 0.0
        return float(HIST_BINS) / math.log1p(add(vmax, -vmin))

    @jit
    def bin_position(v, vmin, scale):
        """Where v falls among the bins: (bin, fraction within it)."""
        d = add(v, -vmin)
        d = max(d, 0.0)
        t = mul(math.log1p(d), scale)
        b = int(t)
        if b > HIST_BINS - 1:
            b = HIST_BINS - 1
        elif b < 0:
            b = 0
        f = add(t, -float(b))
        if f > 1.0:
            f = 1.0
        elif f < 0.0:
            f = 0.0
        return b, f

    @jit
    def colour(value, max_iter, mode, dens, offset, vmin, scale, cdf, lut, interior):
        if value >= max_iter:
            return interior
        if mode == SQRT:
            s = add(offset, mul(dens, math.sqrt(value)))
        elif mode == LOG:
            d = add(value, -vmin)
            d = max(d, 0.0)
            s = add(offset, mul(dens, math.log1p(d)))
        else:
            b, f = bin_position(value, vmin, scale)
            lo = cdf[b]
            s = add(offset, mul(dens, add(lo, mul(f, add(cdf[b + 1], -lo)))))
        # p = s mod 2 folded back on [0, 1], so that a palette that is not cyclic has no seam
        p = add(s, -mul(2.0, math.floor(mul(s, 0.5))))
        if p > 1.0:
            p = add(2.0, -p)
        last = lut.shape[0] - 1
        idx = int(add(mul(p, float(last)), 0.5))
        if idx > last:
            idx = last
        elif idx < 0:
            idx = 0
        return lut[idx]

    return bin_scale, bin_position, colour


# ---------------------------------------------------------------- CPU twin (numba, parallel)

# Plain IEEE operators, helpers inlined: wrapping each multiply and add in an inlined function of
# its own made the parallel loops' compile slower and the loops no faster
_bin_scale_cpu, _bin_position_cpu, _colour_cpu = _make_colour(operator.mul, operator.add,
                                                               njit(inline="always"))


@njit(cache=True)
def stats_cpu(values, max_iter, stats):
    """stats[S_MIN], stats[S_MAX], stats[S_COUNT] over the escaped pixels (values < max_iter).
    One thread: a pass of compares takes milliseconds even at 4K, where a parallel loop cost
    seconds of compile at every first start (docs/PERFORMANCE.md, "Cold and warm start")."""
    rows, cols = values.shape
    a = np.inf
    b = -np.inf
    n = 0
    for r in range(rows):
        for c in range(cols):
            v = values[r, c]
            if v < max_iter:
                a = min(a, v)
                b = max(b, v)
                n += 1
    stats[S_MIN] = a
    stats[S_MAX] = b
    stats[S_COUNT] = float(n)


@njit(parallel=True, cache=True)
def histogram_bins_cpu(values, max_iter, stats, bins, ctl):
    """bins[r, c] = the histogram bin of each escaped pixel (bin_position), -1 for the rest; rows
    claimed and stamped through the control block ctl (cpu_chunks: the pass's time)."""
    rows, cols = values.shape
    vmin = stats[S_MIN]
    scale = _bin_scale_cpu(stats[S_MIN], stats[S_MAX])
    reset(ctl)               # every call claims its pieces from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        r = claim(ctl)
        while r < rows:
            ran = True
            for c in range(cols):
                v = values[r, c]
                if v < max_iter:
                    b, _f = _bin_position_cpu(v, vmin, scale)
                    bins[r, c] = b
                else:
                    bins[r, c] = -1
            r = claim(ctl)
        leave(ctl, clocks, ran)


@njit(cache=True)
def count_bins_cpu(bins, hist):
    """hist[b] = the pixels in bin b, counted on one thread: per-thread histograms merged
    afterwards took erratic times under numba's parallel loops, this one is steady."""
    for b in range(HIST_BINS):
        hist[b] = 0
    rows, cols = bins.shape
    for r in range(rows):
        for c in range(cols):
            b = bins[r, c]
            if b >= 0:
                hist[b] += 1


def histogram_cpu(values, max_iter, stats, hist):
    """hist[b] = escaped pixels whose value falls in bin b (bins of bin_position): the bins
    found in parallel, then counted on one thread. The colourer times the two apart."""
    bins = np.empty(values.shape, dtype=np.int16)
    histogram_bins_cpu(values, max_iter, stats, bins, control())
    count_bins_cpu(bins, hist)


@njit(cache=True)
def cdf_cpu(hist, cdf):
    """cdf[k] = (pixels in bins below k) / all of them, k = 0 .. HIST_BINS (zeros when none)."""
    total = 0
    for b in range(HIST_BINS):
        total += hist[b]
    run = 0
    for b in range(HIST_BINS):
        cdf[b] = float(run) / float(total) if total > 0 else 0.0
        run += hist[b]
    cdf[HIST_BINS] = 1.0 if total > 0 else 0.0


@njit(parallel=True, cache=True)
def colour_rows_cpu(values, rgba, max_iter, mode, dens, offset, stats, cdf, lut, interior, ctl):
    """rgba (H, W) uint32 = colour of each value through the packed LUT; rows claimed and
    stamped through the control block ctl (cpu_chunks: the pass's time)."""
    rows, cols = values.shape
    vmin = stats[S_MIN]
    scale = _bin_scale_cpu(stats[S_MIN], stats[S_MAX])
    reset(ctl)               # every call claims its pieces from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        r = claim(ctl)
        while r < rows:
            ran = True
            for c in range(cols):
                rgba[r, c] = _colour_cpu(values[r, c], max_iter, mode, dens, offset, vmin, scale,
                                         cdf, lut, interior)
            r = claim(ctl)
        leave(ctl, clocks, ran)


# ---------------------------------------------------------------- elsewhere

# the CUDA twins are colour_gpu.py's and the Colourer, which runs either, is colourer.py's: only GPU
# frames import numba.cuda
