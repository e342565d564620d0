"""Escape launches that only benches, tools and tests select (their settings: launch_settings.py);
the app runs escape_warp.py's and never imports this module. They are what the app's launches are
measured against (`--bench --only mandelbrot-launch`, `mandelbrot-divergence`,
tools/f32_block_sweep.py; docs/notes/performance-history.md), on escape.py's arithmetic, so every
launch gives the same values bit for bit.

float64, `variant(name, knobs)` for Renderer(launch=...):

* "grid", `escape_kernel`: one thread per pixel; a warp runs as long as its slowest pixel.
* "persistent", `escape_persistent_kernel`: a fixed grid of threads that each take their next
  pixel from an atomic counter on their own, a chunk of iterations at a time.
* "sorted": escape_warp_kernel handed the pixels longest first. A frame ends when its slowest
  lanes do: in picture order, an interior pixel taken late keeps its warp running long after the
  others ran out of work. Counts vary smoothly away from the boundary, so a sparse sample
  predicts them: `probe_kernel` iterates a grid of samples up to `probe` iterations (one that
  finishes is stored for good), `count_kernel` classes every other pixel by the largest estimate
  of the samples around it (its bit length) and counts the classes, `scatter_kernel` lists the
  pixels, classes in descending order, for escape_warp_kernel to take its segments from.

float32, `warp_kernel32(steps, blocks)` for WarpLaunch32's `kernel`: the app's kernel at another
step grouping, for a sweep (tools/f32_block_sweep.py). The kernel the app ran before it (a branch
after every block of steps, an escaped block's redo inside every look at the warp) was a bench
variant here until issue 36 removed it, its comparison done (docs/notes/performance-history.md).
"""
from __future__ import annotations

import numpy as np

from ..loops import escape_gpu as mk
from ..loops import escape_warp as ew
from ..loops.escape import BAILOUT2
from ..loops.escape_gpu import cuda
from ..loops.formula_twins import twin
from ..frames.gpu_target import THRESH, WARPS_PER_SM, CountedLaunch, WarpLaunch
from .launch_settings import (BLOCKS_PER_SM, CHUNK, F32_BLOCK, GRAB, PROBE, REACH, SAMPLE,
                              SIM_PERSISTENT, THREADS)

# the float32 grouping a sweep runs by default
BLOCK_STEPS, BLOCKS_PER_LOOK = F32_BLOCK or (ew.BLOCK_STEPS, ew.BLOCKS_PER_LOOK)

# classes of estimated cost: bit lengths 0 (a cardioid/bulb pixel) .. NCLASSES - 1 and beyond
NCLASSES = 16


def sample_shape(rows: int, cols: int, sample: int) -> tuple[int, int]:
    """(rows, columns) of the sample grid of a rows x cols band."""
    return -(-rows // sample), -(-cols // sample)


if cuda is not None:
    from ..loops.escape_gpu import _escape_gpu, _point_gpu, _shortcut_gpu, _step_gpu

    @cuda.jit(cache=True)
    def escape_kernel(values, band_row0, band_rows, grid_row0, grid_col0,
                      cx, cy, step, half_w, half_h, max_iter):
        """One thread per pixel of rows band_row0 .. band_row0 + band_rows of `values`."""
        c, r = cuda.grid(2)
        if c < values.shape[1] and r < band_rows:
            br = band_row0 + r
            x, y = _point_gpu(br, c, grid_row0, grid_col0, cx, cy, step, half_w, half_h)
            values[br, c] = _escape_gpu(x, y, max_iter)

    @cuda.jit(cache=True)
    def escape_persistent_kernel(values, counts, counter, grab, chunk, band_row0, band_rows,
                                 grid_row0, grid_col0, cx, cy, step, half_w, half_h,
                                 max_iter):
        """escape_kernel's pixels by a fixed grid of threads that each take `grab` consecutive
        pixels at a time: first the run at grab x its thread index, then runs from the atomic
        counter (counter[0], zero at launch). A pixel is iterated `chunk` iterations at a time;
        between chunks a thread whose pixel is done stores it as escape_warp_kernel does and moves
        to its next one, so the lanes of a warp stay busy until the frame runs out of pixels."""
        cols = values.shape[1]
        total = band_rows * cols
        nthreads = cuda.gridsize(1)
        i = cuda.grid(1) * grab
        end = min(i + grab, total)
        fresh = True            # (r, c) must be found from i by a division
        busy = False
        r = c = 0
        px = py = x = y = x2 = y2 = r2 = 0.0
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
                    px, py = _point_gpu(r, c, grid_row0 + band_row0, grid_col0, cx, cy, step,
                                        half_w, half_h)
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
                    x = y = x2 = y2 = 0.0
                    break
                if not busy:
                    break                           # no pixels left: this thread is done
            lim = min(n + chunk, max_iter)
            escaped = False
            while n < lim:
                n += 1
                x, y, x2, y2, r2 = _step_gpu(x, y, x2, y2, px, py)
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
            px, py = _point_gpu(row, c, grid_row0, grid_col0, cx, cy, step, half_w, half_h)
            if _shortcut_gpu(px, py):
                values[row, c] = float(max_iter)
                counts[row, c] = 0
                est[sr, sc] = 0
                return
            lim = min(probe, max_iter)
            x = y = x2 = y2 = 0.0
            n = 0
            while n < lim:
                n += 1
                x, y, x2, y2, r2 = _step_gpu(x, y, x2, y2, px, py)
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


class GridLaunch:
    """escape_kernel: one thread per pixel, blocks of gpu.block."""

    counted = False

    def run(self, gpu, values, counts, b0, n, args, timer):
        cols = values.shape[1]
        bx, by = gpu.block
        blocks = ((cols + bx - 1) // bx, (n + by - 1) // by)
        with timer.phase("kernel", gpu=True):
            gpu.kernel(escape_kernel, blocks, (bx, by))(values, b0, n, *args)


class PersistentLaunch(CountedLaunch):
    """escape_persistent_kernel: `chunk` iterations between checks, `grab`
    pixels per fetch from the counter."""

    counter_dtype = np.int64
    threads = THREADS
    sim_grid = SIM_PERSISTENT
    cap = False

    def __init__(self, chunk: int = CHUNK, grab: int = GRAB):
        super().__init__(BLOCKS_PER_SM)
        self.chunk, self.grab = int(chunk), int(grab)

    def dispatcher(self):
        return escape_persistent_kernel

    def escape(self, gpu, values, counts, counter, b0, n, args, grid, finish):
        nblocks, threads = grid
        escape_persistent_kernel[nblocks, threads, gpu.stream](
            values, counts, counter, self.grab, self.chunk, b0, n, *args)


class SortedLaunch(WarpLaunch):
    """The warp launch on a list of the pixels, longest first, as one sample per `sample` x
    `sample` pixels iterated `probe` iterations predicts them (a pixel's estimate the largest of
    the `reach` x 2 samples around it each way)."""

    def __init__(self, thresh: int, warps_per_sm: int, sample: int = SAMPLE,
                 probe: int = PROBE, reach: int = REACH):
        super().__init__(thresh, warps_per_sm)
        self.sample, self.probe, self.reach = int(sample), int(probe), int(reach)
        self._meta_views = None         # (meta, hist, cursor)

    def order(self, gpu, values, counts, b0, n, args, finish):
        """Queue the first passes for band rows b0 .. b0 + n: the samples' results go into
        values/counts; returns (order, hist) for the warp kernel."""
        blocks, block = finish
        s, pool = gpu.stream, gpu.pool
        rows, cols = values.shape
        nsr, nsc = sample_shape(n, cols, self.sample)
        est = pool.device("order-est", sample_shape(rows, cols, self.sample), np.int32,
                          stream=s)
        order = pool.device("order", (rows * cols,), np.int32, stream=s)
        meta = pool.device("order-meta", (2 * NCLASSES,), np.int32, stream=s)
        if self._meta_views is None or self._meta_views[0] is not meta:
            # the same view objects every frame: prepared launches convert them once
            self._meta_views = (meta, meta[:NCLASSES], meta[NCLASSES:])
        _, hist, cursor = self._meta_views
        bx, by = block
        gpu.kernel(mk.zero_kernel, 1, 2 * NCLASSES)(meta)
        gpu.kernel(probe_kernel, ((nsc + bx - 1) // bx, (nsr + by - 1) // by), block)(
            values, counts, est, self.sample, self.probe, b0, n, *args)
        gpu.kernel(count_kernel, blocks, block)(est, self.sample, self.reach, hist, n, cols)
        gpu.kernel(scatter_kernel, blocks, block)(est, self.sample, self.reach, hist, cursor,
                                                     order, n, cols)
        return order, hist


VARIANTS = ("persistent", "grid", "sorted")


def variant(name: str, *, chunk: int = CHUNK, grab: int = GRAB, thresh: int = THRESH,
            warps_per_sm: int = WARPS_PER_SM, sample: int = SAMPLE, probe: int = PROBE,
            reach: int = REACH):
    """The launch object for a variant's name ("grid", "persistent" or "sorted") and its knobs,
    for Renderer(launch=...): "persistent" runs `chunk` iterations between checks and takes
    `grab` pixels per fetch; "sorted" hands out the pixels longest first, as predicted by one
    sample per `sample` x `sample` pixels iterated `probe` iterations, a pixel's estimate the
    largest of the `reach` x 2 samples around it each way, on the warp launch's `thresh` and
    `warps_per_sm`; "grid" is one thread per pixel (the Renderer's `block`)."""
    if int(chunk) < 1 or int(grab) < 1:
        raise ValueError(f"chunk and grab must be at least 1, got {chunk} and {grab}")
    if int(sample) < 1 or int(probe) < 1 or int(reach) < 1:
        raise ValueError(f"sample, probe and reach must be at least 1, got {sample}, {probe} "
                         f"and {reach}")
    if name == "grid":
        return GridLaunch()
    if name == "persistent":
        return PersistentLaunch(chunk, grab)
    if name == "sorted":
        return SortedLaunch(thresh, warps_per_sm, sample, probe, reach)
    raise ValueError(f"no launch variant {name!r}; choose one of: warp, {', '.join(VARIANTS)}")


_BUILT: dict = {}


def warp_kernel32(steps: int = BLOCK_STEPS, blocks: int = BLOCKS_PER_LOOK):
    """escape_warp_kernel32 grouping `blocks` blocks of `steps` steps a look, for WarpLaunch32's
    `kernel`: the app's kernel at its own grouping, else a twin compiled with that grouping's
    globals, once a process (outside numba's disk cache, which keys on the name and source that
    the twins share)."""
    key = (int(steps), int(blocks))
    if key == (ew.BLOCK_STEPS, ew.BLOCKS_PER_LOOK):
        return ew.escape_warp_kernel32
    if key not in _BUILT:
        fn = ew.escape_warp_kernel32.py_func
        _BUILT[key] = cuda.jit(cache=False)(twin(fn, fn.__name__, _BLOCK=np.int32(key[0]),
                                                 _LOOK=ew._look_of(*key)))
    return _BUILT[key]
