"""The sorted launch's first passes: which pixels will take longest, so that they start first.

A frame of a few thousand iterations per resident lane ends when its slowest lanes do: with the
pixels handed out in picture order, an interior pixel (all max_iter iterations) taken late keeps
its warp running long after the others ran out of work. Handing out the longest pixels first
leaves only short ones for the end. Nobody knows a pixel's count before iterating it, but counts
vary smoothly away from the boundary, so a sparse sample predicts them:

1. `probe_kernel`: every pixel on a grid of stride `sample` (rows and columns) iterates up to
   `probe` iterations. One that escapes (or is inside, when probe reaches max_iter) is finished
   for good: its result is stored exactly as escape_warp_kernel would store it. The sample's
   estimate is its count, or "more than probe".
2. `count_kernel`: every other pixel's estimate is the largest of the samples around it (the
   2 x 2 nearest with reach 1, 4 x 4 with reach 2: a filament that passes between the nearest
   samples is still seen), its class the estimate's bit length (NCLASSES classes); a histogram
   per class.
3. `scatter_kernel`: the pixels' list, classes in descending order (within a class, by thread
   block: neighbours stay together, so stores stay nearly coalesced).

escape_warp_kernel then takes its segments from the list. The arithmetic per pixel is unchanged,
so the values equal every other launch's bit for bit.
"""
from __future__ import annotations

import numpy as np

from . import escape as mk

# classes of estimated cost: bit lengths 0 (a cardioid/bulb pixel) .. NCLASSES - 1 and beyond
NCLASSES = 16
# one sample per SAMPLE x SAMPLE pixels; samples iterate at most PROBE iterations. Measured on the
# GPU by `--bench --only mandelbrot-divergence` (variants "sorted ..."); see renderer.py.
SAMPLE = 4
PROBE = 256
REACH = 2


def sample_shape(rows: int, cols: int, sample: int) -> tuple[int, int]:
    """(rows, columns) of the sample grid of a rows x cols band."""
    return -(-rows // sample), -(-cols // sample)


if mk.cuda is not None:
    cuda = mk.cuda
    _add, _mul, _shortcut = mk._gpu_add, mk._gpu_mul, mk._shortcut_gpu
    _BAILOUT2 = mk.BAILOUT2

    @cuda.jit(cache=True)
    def probe_kernel(values, counts, est, sample, probe, band_row0, band_rows, grid_row0,
                     grid_col0, cx, cy, step, half_w, half_h, max_iter):
        """Iterate the band's sample pixels (rows and columns multiple of `sample`) up to `probe`
        iterations. est[sr, sc] >= 0: finished, that many iterations (0 for the cardioid/bulb
        test); < 0: not finished after -est - 1 iterations."""
        sc, sr = cuda.grid(2)
        r = sr * sample
        c = sc * sample
        if r < band_rows and c < values.shape[1]:
            row = band_row0 + r
            gx = float(grid_col0 + c) + 0.5 - half_w
            gy = float(grid_row0 + row) + 0.5 - half_h
            px = _add(cx, _mul(gx, step))
            py = _add(cy, -_mul(gy, step))
            if _shortcut(px, py):
                values[row, c] = float(max_iter)
                counts[row, c] = 0
                est[sr, sc] = 0
                return
            lim = min(probe, max_iter)
            x = 0.0
            y = 0.0
            x2 = 0.0
            y2 = 0.0
            n = 0
            while n < lim:
                n += 1
                y = _add(_mul(_add(x, x), y), py)
                x = _add(_add(x2, -y2), px)
                x2 = _mul(x, x)
                y2 = _mul(y, y)
                r2 = _add(x2, y2)
                if r2 > _BAILOUT2:
                    values[row, c] = r2
                    counts[row, c] = n
                    est[sr, sc] = n
                    return
            if n >= max_iter:
                values[row, c] = float(max_iter)
                counts[row, c] = 0
                est[sr, sc] = max_iter
            else:
                est[sr, sc] = -(n + 1)

    @cuda.jit(device=True)
    def _pixel_class(est, sample, reach, nsr, nsc, r, c):
        """The class of band pixel (r, c): the bit length of the largest estimate among the
        samples sr - reach + 1 .. sr + reach (and the same for columns) around it, at most
        NCLASSES - 1; -1 for a sample that is finished."""
        sr = r // sample
        sc = c // sample
        if r == sr * sample and c == sc * sample and est[sr, sc] >= 0:
            return -1
        cost = 0
        for i in range(max(sr - reach + 1, 0), min(sr + reach, nsr - 1) + 1):
            for j in range(max(sc - reach + 1, 0), min(sc + reach, nsc - 1) + 1):
                cost = max(cost, abs(est[i, j]))
        k = 0
        while cost > 0 and k < NCLASSES - 1:
            k += 1
            cost >>= 1
        return k

    @cuda.jit(device=True)
    def _tally(est, sample, reach, local, band_rows, cols):
        """The block's pixels counted per class in `local` (shared, NCLASSES): returns this
        thread's index in the block, its pixel (r, c), its class (-1: none) and its rank among
        the block's pixels of that class. Both kernels below start with it."""
        t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
        if t < NCLASSES:
            local[t] = 0
        cuda.syncthreads()
        c, r = cuda.grid(2)
        k = -1
        rank = 0
        if r < band_rows and c < cols:
            k = _pixel_class(est, sample, reach, -(-band_rows // sample), -(-cols // sample), r, c)
            if k >= 0:
                rank = cuda.atomic.add(local, k, 1)
        cuda.syncthreads()
        return t, r, c, k, rank

    @cuda.jit(cache=True)
    def count_kernel(est, sample, reach, hist, band_rows, cols):
        """hist[k] += pixels of class k (hist zero at launch): one atomic per class and block."""
        local = cuda.shared.array(NCLASSES, np.int32)
        t, _, _, _, _ = _tally(est, sample, reach, local, band_rows, cols)
        if t < NCLASSES and local[t] > 0:
            cuda.atomic.add(hist, t, local[t])

    @cuda.jit(cache=True)
    def scatter_kernel(est, sample, reach, hist, cursor, order, band_rows, cols):
        """order[...] = r * cols + c for every pixel still to do, class NCLASSES - 1 first; hist
        from count_kernel, cursor (zero at launch) counts the entries given out per class."""
        local = cuda.shared.array(NCLASSES, np.int32)
        base = cuda.shared.array(NCLASSES, np.int32)
        t, r, c, k, rank = _tally(est, sample, reach, local, band_rows, cols)
        if t < NCLASSES and local[t] > 0:
            start = 0
            for j in range(t + 1, NCLASSES):
                start += hist[j]
            base[t] = start + cuda.atomic.add(cursor, t, local[t])
        cuda.syncthreads()
        if k >= 0:
            order[base[k] + rank] = r * cols + c
else:  # pragma: no cover - only where numba-cuda is broken
    probe_kernel = count_kernel = scatter_kernel = None
