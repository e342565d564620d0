"""Escape launches that only benches, tools and tests select (the app runs escape_warp.py's).

They keep the record of what the warp launch is measured against (`--bench --only
mandelbrot-launch` and `mandelbrot-divergence`; docs/notes/performance-history.md), with escape.py's
arithmetic,
so every launch gives the same values bit for bit:

* `escape_kernel` ("grid"): one thread per pixel. A warp runs as long as its slowest pixel while
  the lanes whose pixels escaped early idle.
* `escape_persistent_kernel` ("persistent"): a fixed grid of threads that each take their next
  pixel from an atomic counter on their own, a chunk of iterations at a time.
* The "sorted" launch: escape_warp_kernel handed the pixels longest first. A frame of a few
  thousand iterations per resident lane ends when its slowest lanes do: with the pixels handed
  out in picture order, an interior pixel taken late keeps its warp running long after the others
  ran out of work. Counts vary smoothly away from the boundary, so a sparse sample predicts them:

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

  escape_warp_kernel then takes its segments from the list.
"""
from __future__ import annotations

import numpy as np

from .escape import BAILOUT2
from .escape_gpu import cuda
from .launch_settings import PROBE, REACH, SAMPLE  # noqa: F401 (the sorted launch's, named here)

# classes of estimated cost: bit lengths 0 (a cardioid/bulb pixel) .. NCLASSES - 1 and beyond
NCLASSES = 16


def sample_shape(rows: int, cols: int, sample: int) -> tuple[int, int]:
    """(rows, columns) of the sample grid of a rows x cols band."""
    return -(-rows // sample), -(-cols // sample)


if cuda is not None:
    from .escape_gpu import _escape_gpu, _gpu_add, _gpu_mul, _shortcut_gpu, _zstep_gpu

    @cuda.jit(cache=True)
    def escape_kernel(values, band_row0, band_rows, grid_row0, grid_col0,
                      cx, cy, step, half_w, half_h, max_iter):
        """One thread per pixel of rows band_row0 .. band_row0 + band_rows of `values`."""
        c, r = cuda.grid(2)
        if c < values.shape[1] and r < band_rows:
            br = band_row0 + r
            gx = float(grid_col0 + c) + 0.5 - half_w
            gy = float(grid_row0 + br) + 0.5 - half_h
            x = _gpu_add(cx, _gpu_mul(gx, step))
            y = _gpu_add(cy, -_gpu_mul(gy, step))
            values[br, c] = _escape_gpu(x, y, max_iter)

    @cuda.jit(cache=True)
    def escape_persistent_kernel(values, counts, counter, grab, chunk, band_row0, band_rows,
                                 grid_row0, grid_col0, cx, cy, step, half_w, half_h,
                                 max_iter):
        """escape_kernel's pixels (rows band_row0 .. band_row0 + band_rows of `values`) by a fixed
        grid of threads that each take `grab` consecutive pixels at a time: first the run at
        grab x its thread index, then runs from the atomic counter (counter[0], zero at launch,
        counts pixels past the first runs). A pixel is iterated `chunk` iterations at a time;
        between chunks a thread whose pixel is done stores it and moves to its next one, so the
        lanes of a warp stay busy until the frame runs out of pixels.

        An escaped pixel gets values = |z_n|^2 and counts = n (finish_kernel makes the smooth
        value); one inside (max_iter reached, or the cardioid/bulb test) gets
        values = max_iter and counts = 0. Each step is the arithmetic of resume(), so the values
        equal escape_kernel's bit for bit."""
        cols = values.shape[1]
        total = band_rows * cols
        nthreads = cuda.gridsize(1)
        i = cuda.grid(1) * grab
        end = min(i + grab, total)
        fresh = True            # (r, c) must be found from i by a division
        busy = False
        r = 0
        c = 0
        px = 0.0
        py = 0.0
        x = 0.0
        y = 0.0
        x2 = 0.0
        y2 = 0.0
        r2 = 0.0
        n = 0
        while True:
            if not busy:
                while True:                         # the next pixel that needs iterating
                    if i >= end:
                        i = nthreads * grab + cuda.atomic.add(counter, 0, grab)
                        end = min(i + grab, total)
                        fresh = True
                    if i >= total:
                        break
                    if fresh:
                        r = i // cols
                        c = i - r * cols
                        fresh = False
                    gx = float(grid_col0 + c) + 0.5 - half_w
                    gy = float(grid_row0 + band_row0 + r) + 0.5 - half_h
                    px = _gpu_add(cx, _gpu_mul(gx, step))
                    py = _gpu_add(cy, -_gpu_mul(gy, step))
                    if _shortcut_gpu(px, py):
                        values[band_row0 + r, c] = float(max_iter)
                        counts[band_row0 + r, c] = 0
                        i += 1
                        c += 1
                        if c == cols:
                            c = 0
                            r += 1
                        continue
                    busy = True
                    n = 0
                    x = 0.0
                    y = 0.0
                    x2 = 0.0
                    y2 = 0.0
                    break
                if not busy:
                    break                           # no pixels left: this thread is done
            lim = min(n + chunk, max_iter)
            escaped = False
            while n < lim:
                n += 1
                x, y = _zstep_gpu(x, y, x2, y2, px, py)
                x2 = _gpu_mul(x, x)
                y2 = _gpu_mul(y, y)
                r2 = _gpu_add(x2, y2)
                if r2 > BAILOUT2:
                    escaped = True
                    break
            if escaped or n >= max_iter:
                if escaped:
                    values[band_row0 + r, c] = r2
                    counts[band_row0 + r, c] = n
                else:
                    values[band_row0 + r, c] = float(max_iter)
                    counts[band_row0 + r, c] = 0
                busy = False
                i += 1
                c += 1
                if c == cols:
                    c = 0
                    r += 1

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
            px = _gpu_add(cx, _gpu_mul(gx, step))
            py = _gpu_add(cy, -_gpu_mul(gy, step))
            if _shortcut_gpu(px, py):
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
                x, y = _zstep_gpu(x, y, x2, y2, px, py)
                x2 = _gpu_mul(x, x)
                y2 = _gpu_mul(y, y)
                r2 = _gpu_add(x2, y2)
                if r2 > BAILOUT2:
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
    escape_kernel = escape_persistent_kernel = None
    probe_kernel = count_kernel = scatter_kernel = None
