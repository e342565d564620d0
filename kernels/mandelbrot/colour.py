"""Colouring escape values on the device: a CUDA version of every step and its CPU twin.

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

from .. import palettes
from ..backend import simulator_enabled
from ..buffers import BufferPool

MAPPINGS = ("sqrt", "log", "histogram")
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
def histogram_cpu(values, max_iter, stats, hist):
    """hist[b] = escaped pixels whose value falls in bin b (bins of bin_position). The bins (a
    logarithm each) are found in parallel, then counted on one thread: per-thread histograms
    merged afterwards took erratic times under numba's parallel loops, this one is steady."""
    rows, cols = values.shape
    vmin = stats[S_MIN]
    scale = _bin_scale_cpu(stats[S_MIN], stats[S_MAX])
    bins = np.empty((rows, cols), dtype=np.int16)
    for r in prange(rows):
        for c in range(cols):
            v = values[r, c]
            if v < max_iter:
                b, _ = _bin_position_cpu(v, vmin, scale)
                bins[r, c] = b
            else:
                bins[r, c] = -1
    for b in range(HIST_BINS):
        hist[b] = 0
    for r in range(rows):
        for c in range(cols):
            b = bins[r, c]
            if b >= 0:
                hist[b] += 1


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
def colour_rows_cpu(values, rgba, max_iter, mode, dens, offset, stats, cdf, lut, interior):
    """rgba (H, W) uint32 = colour of each value through the packed LUT."""
    rows, cols = values.shape
    vmin = stats[S_MIN]
    scale = _bin_scale_cpu(stats[S_MIN], stats[S_MAX])
    for r in prange(rows):
        for c in range(cols):
            rgba[r, c] = _colour_cpu(values[r, c], max_iter, mode, dens, offset, vmin, scale, cdf,
                                     lut, interior)


# ---------------------------------------------------------------- GPU (numba-cuda)

GPU_IMPORT_ERROR = None
try:
    from numba import cuda
    from numba import float64 as _f64
    from numba import int32 as _i32
    from numba import int64 as _i64
except Exception as exc:  # the CPU path must work even where numba-cuda does not import
    cuda = None
    GPU_IMPORT_ERROR = exc

if cuda is not None:
    if simulator_enabled():
        _gpu_mul, _gpu_add = operator.mul, operator.add
    else:
        from numba.cuda import libdevice
        _gpu_mul, _gpu_add = libdevice.dmul_rn, libdevice.dadd_rn

    _bin_scale_gpu, _bin_position_gpu, _colour_gpu = _make_colour(_gpu_mul, _gpu_add,
                                                                   cuda.jit(device=True))

    @cuda.jit(cache=True)
    def stats_init_kernel(stats, hist):
        """stats to (inf, -inf, 0) and the histogram to zeros, before the reductions add to them."""
        i = cuda.grid(1)
        if i == 0:
            stats[S_MIN] = math.inf
            stats[S_MAX] = -math.inf
            stats[S_COUNT] = 0.0
        while i < hist.shape[0]:
            hist[i] = 0
            i += cuda.gridsize(1)

    @cuda.jit(cache=True)
    def stats_kernel(values, max_iter, stats):
        """Smallest and largest escaped value and their number: each thread loops over its share
        of the frame, each block reduces in shared memory and adds its result with one atomic."""
        smin = cuda.shared.array(REDUCE_THREADS, _f64)
        smax = cuda.shared.array(REDUCE_THREADS, _f64)
        scnt = cuda.shared.array(REDUCE_THREADS, _i64)
        rows, cols = values.shape
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        nt = cuda.blockDim.x * cuda.blockDim.y
        tid = ty * cuda.blockDim.x + tx
        lo = math.inf
        hi = -math.inf
        n = 0
        r = cuda.blockIdx.y * cuda.blockDim.y + ty
        while r < rows:
            c = cuda.blockIdx.x * cuda.blockDim.x + tx
            while c < cols:
                v = values[r, c]
                if v < max_iter:
                    lo = min(lo, v)
                    hi = max(hi, v)
                    n += 1
                c += cuda.gridDim.x * cuda.blockDim.x
            r += cuda.gridDim.y * cuda.blockDim.y
        smin[tid] = lo
        smax[tid] = hi
        scnt[tid] = n
        cuda.syncthreads()
        half = nt // 2
        while half > 0:
            if tid < half:
                smin[tid] = min(smin[tid], smin[tid + half])
                smax[tid] = max(smax[tid], smax[tid + half])
                scnt[tid] += scnt[tid + half]
            cuda.syncthreads()
            half //= 2
        if tid == 0 and scnt[0] > 0:
            cuda.atomic.min(stats, S_MIN, smin[0])
            cuda.atomic.max(stats, S_MAX, smax[0])
            cuda.atomic.add(stats, S_COUNT, float(scnt[0]))

    @cuda.jit(cache=True)
    def histogram_kernel(values, max_iter, stats, hist):
        """hist[b] += escaped pixels in bin b: counted per block in shared memory first."""
        sh = cuda.shared.array(HIST_BINS, _i32)
        rows, cols = values.shape
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        nt = cuda.blockDim.x * cuda.blockDim.y
        tid = ty * cuda.blockDim.x + tx
        b = tid
        while b < HIST_BINS:
            sh[b] = 0
            b += nt
        cuda.syncthreads()
        vmin = stats[S_MIN]
        scale = _bin_scale_gpu(stats[S_MIN], stats[S_MAX])
        r = cuda.blockIdx.y * cuda.blockDim.y + ty
        while r < rows:
            c = cuda.blockIdx.x * cuda.blockDim.x + tx
            while c < cols:
                v = values[r, c]
                if v < max_iter:
                    k, _ = _bin_position_gpu(v, vmin, scale)
                    cuda.atomic.add(sh, k, 1)
                c += cuda.gridDim.x * cuda.blockDim.x
            r += cuda.gridDim.y * cuda.blockDim.y
        cuda.syncthreads()
        b = tid
        while b < HIST_BINS:
            if sh[b] != 0:
                cuda.atomic.add(hist, b, int(sh[b]))
            b += nt

    @cuda.jit(cache=True)
    def cdf_kernel(hist, cdf):
        """cdf as cdf_cpu computes it, by one block: each thread sums a run of bins, thread 0
        turns the runs' sums into the totals before each run, each thread writes its run."""
        part = cuda.shared.array(CDF_SHARED, _i64)
        tid = cuda.threadIdx.x
        nt = cuda.blockDim.x
        per = (HIST_BINS + nt - 1) // nt
        b0 = min(tid * per, HIST_BINS)
        b1 = min(b0 + per, HIST_BINS)
        s = 0
        for b in range(b0, b1):
            s += hist[b]
        part[tid] = s
        cuda.syncthreads()
        if tid == 0:
            run = 0
            for k in range(nt):
                t = part[k]
                part[k] = run
                run += t
            part[nt] = run
            cdf[HIST_BINS] = 1.0 if run > 0 else 0.0
        cuda.syncthreads()
        total = part[nt]
        run = part[tid]
        for b in range(b0, b1):
            cdf[b] = float(run) / float(total) if total > 0 else 0.0
            run += hist[b]

    @cuda.jit(cache=True)
    def colour_kernel(values, rgba, max_iter, mode, dens, offset, stats, cdf, lut, interior):
        """rgba (H, W) uint32 = colour of each value: one 4-byte store per pixel."""
        c, r = cuda.grid(2)
        if c < values.shape[1] and r < values.shape[0]:
            vmin = stats[S_MIN]
            scale = _bin_scale_gpu(stats[S_MIN], stats[S_MAX]) if mode == HISTOGRAM else 0.0
            rgba[r, c] = _colour_gpu(values[r, c], max_iter, mode, dens, offset, vmin, scale, cdf,
                                     lut, interior)
else:  # pragma: no cover - only where numba-cuda is broken
    stats_init_kernel = stats_kernel = histogram_kernel = cdf_kernel = colour_kernel = None


class Colourer:
    """Colours value buffers on one backend with a request's palette, density, offset, interior
    colour and mapping (any object with those attributes). Keeps the packed palette tables (on the
    device for a GPU) and the small statistics buffers between frames. Use from one thread."""

    def __init__(self, backend):
        self.backend = backend
        self.pool = BufferPool(backend)
        self._luts: dict[str, object] = {}
        self.warm_mappings: set = set()     # mappings whose kernels warm() has compiled
        self._launchers = None              # (stream, kernels.launch.Launchers) of the last frame

    def _launch(self, dispatcher, grid, block, stream):
        """`dispatcher[grid, block, stream]`, prepared once per stream (kernels/launch.py)."""
        if stream is None or isinstance(stream, int):       # the default stream
            return dispatcher[grid, block, stream or 0]
        if self._launchers is None or self._launchers[0] is not stream:
            from ..launch import Launchers
            self._launchers = (stream, Launchers(stream))
        return self._launchers[1](dispatcher, grid, block)

    def lut(self, name: str, timer, stream=None):
        hit = self._luts.get(name)
        if hit is not None:
            return hit
        packed = pack_rgba(palettes.lut(name))
        if self.backend.is_gpu:
            dev = self.pool.device(f"lut:{name}", packed.shape, np.uint32, stream=stream)
            with timer.phase("h2d", gpu=True, nbytes=packed.nbytes):
                dev.copy_to_device(packed, stream=stream)
            hit = dev
        else:
            hit = packed
        self._luts[name] = hit
        return hit

    def colour(self, values, rgba, spec, max_iter: int, timer, stream=None, fixed=None):
        """rgba (H, W) uint32 ← colours of values (H, W) float64, both where the backend keeps
        them (device arrays on a GPU). Timed as kernel time, detail "colourise". `fixed`: the
        statistics (an object with host arrays `stats` and `cdf`, picture_colour.FixedStats) of
        the whole picture these values are a part of, used instead of the values' own."""
        lut = self.lut(spec.palette, timer, stream)
        mode = mapping_index(getattr(spec, "mapping", "sqrt"))
        dens = phase_scale(MAPPINGS[mode], spec.density)
        offset = float(spec.offset) % 1.0
        interior = pack_colour(spec.interior)
        max_iter = int(max_iter)
        if fixed is not None and mode != SQRT:
            colour_fixed(self, values, rgba, (max_iter, mode, dens, offset, lut, interior), timer,
                         stream, fixed)
        elif self.backend.is_gpu:
            self._colour_gpu(values, rgba, max_iter, mode, dens, offset, lut, interior, timer, stream)
        else:
            stats = self.pool.host("stats", (N_STATS,), np.float64, pinned=False)
            cdf = self.pool.host("cdf", (HIST_BINS + 1,), np.float64, pinned=False)
            with timer.phase("kernel", detail="colourise"):
                stats[:] = (math.inf, -math.inf, 0.0)
                if mode != SQRT:
                    stats_cpu(values, max_iter, stats)
                if mode == HISTOGRAM:
                    hist = self.pool.host("hist", (HIST_BINS,), np.int64, pinned=False)
                    histogram_cpu(values, max_iter, stats, hist)
                    cdf_cpu(hist, cdf)
                colour_rows_cpu(values, rgba, max_iter, mode, dens, offset, stats, cdf, lut, interior)

    def _colour_gpu(self, values, rgba, max_iter, mode, dens, offset, lut, interior, timer, stream):
        sim = self.backend.simulated
        rows, cols = values.shape
        stats = self.pool.device("stats", (N_STATS,), np.float64, stream=stream)
        hist = self.pool.device("hist", (HIST_BINS,), np.int64, stream=stream)
        cdf = self.pool.device("cdf", (HIST_BINS + 1,), np.float64, stream=stream)
        bx, by = SIM_BLOCK if sim else COLOUR_BLOCK
        blocks = ((cols + bx - 1) // bx, (rows + by - 1) // by)
        rgrid = SIM_REDUCE_GRID if sim else REDUCE_GRID
        with timer.phase("kernel", gpu=True, detail="colourise"):
            launch = self._launch
            launch(stats_init_kernel, 4, 256 if not sim else 8, stream)(stats, hist)
            if mode != SQRT:
                launch(stats_kernel, rgrid, (bx, by), stream)(values, max_iter, stats)
            if mode == HISTOGRAM:
                launch(histogram_kernel, rgrid, (bx, by), stream)(values, max_iter, stats, hist)
                launch(cdf_kernel, 1, SIM_CDF_THREADS if sim else CDF_THREADS, stream)(hist, cdf)
            launch(colour_kernel, blocks, (bx, by), stream)(values, rgba, max_iter, mode, dens,
                                                            offset, stats, cdf, lut, interior)

    def warm(self, timer, stream=None, mappings=MAPPINGS):
        """Compile the colouring kernels of `mappings` (a 3×4 frame in each) not yet compiled.
        The GPU compiles them all at once; the CPU only those asked for (each one's compile is
        part of a first start's wait)."""
        if self.backend.is_gpu:
            mappings = MAPPINGS
        todo = [m for m in MAPPINGS if m in mappings and m not in self.warm_mappings]
        if not todo:
            return
        vals = np.array([[1.0, 2.5, 9.0, 40.0], [3.0, 40.0, 7.0, 12.0], [40.0, 5.5, 6.0, 8.0]])
        from types import SimpleNamespace
        if self.backend.is_gpu:
            dv = cuda.to_device(vals, stream=stream)
            out = cuda.device_array((3, 4), np.uint32, stream=stream)
        else:
            dv, out = vals, np.empty((3, 4), np.uint32)
        for m in todo:
            spec = SimpleNamespace(palette=palettes.DEFAULT, density=1.0, offset=0.0,
                                   interior=(0, 0, 0, 255), mapping=m)
            self.colour(dv, out, spec, 40, timer, stream)
            self.warm_mappings.add(m)


def colour_fixed(colourer, values, rgba, params, timer, stream, fixed) -> None:
    """Colourer.colour's pass with `fixed` statistics: the colour kernel alone, the statistics
    its inputs. `params`: (max_iter, mode, density, offset, lut, interior) as colour() makes them."""
    max_iter, mode, dens, offset, lut, interior = params
    if not colourer.backend.is_gpu:
        with timer.phase("kernel", detail="colourise"):
            colour_rows_cpu(values, rgba, max_iter, mode, dens, offset, fixed.stats, fixed.cdf,
                            lut, interior)
        return
    stats = colourer.pool.device("fixed-stats", (N_STATS,), np.float64, stream=stream)
    cdf = colourer.pool.device("fixed-cdf", (HIST_BINS + 1,), np.float64, stream=stream)
    with timer.phase("h2d", gpu=True, nbytes=fixed.stats.nbytes + fixed.cdf.nbytes):
        stats.copy_to_device(fixed.stats, stream=stream or 0)
        cdf.copy_to_device(fixed.cdf, stream=stream or 0)
    rows, cols = values.shape
    bx, by = SIM_BLOCK if colourer.backend.simulated else COLOUR_BLOCK
    blocks = ((cols + bx - 1) // bx, (rows + by - 1) // by)
    with timer.phase("kernel", gpu=True, detail="colourise"):
        colour_kernel[blocks, (bx, by), stream or 0](values, rgba, max_iter, mode, dens, offset,
                                                     stats, cdf, lut, interior)
