"""The GPU half of colour.py: the colouring steps compiled for numba.cuda (statistics, histogram,
cumulative fractions, colours). The Colourer (colourer.py) imports it at the first GPU frame, so
a CPU frame never imports numba.cuda.
"""
from __future__ import annotations

import math

from numba import float64 as _f64
from numba import int32 as _i32
from numba import int64 as _i64

from .colour import (
    CDF_SHARED,
    HIST_BINS,
    HISTOGRAM,
    REDUCE_THREADS,
    S_COUNT,
    S_MAX,
    S_MIN,
    _make_colour,
)
# numba.cuda (None where it does not import) and the rounded multiply and add, chosen once
from ..loops.escape_gpu import _gpu_add, _gpu_mul, cuda

if cuda is not None:
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
