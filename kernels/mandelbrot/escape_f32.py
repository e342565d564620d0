"""The Mandelbrot escape-time arithmetic in float32: escape.py's one description of the per-pixel
arithmetic (`escape._make_escape`), instantiated with float32 multiplies and adds, its CPU twin and
the GPU slice kernel (the app's warp launch is escape_warp_f32.py's).

`mul32`/`add32` round both operands to float32 and return the float32 result, so every operation
escape.py writes (its constants are Python floats) is a float32 one: the float64 values that
numba's typing leaves in a few variables (`x = 0.0` before a float32 is assigned) only ever hold
float32 values, and the compiler drops the conversions (a test compiles the kernels to PTX and
counts no float64 arithmetic in the warp kernel). On the GPU they are libdevice's `fmul_rn` /
`fadd_rn`, never contracted into FMAs, so the GPU performs the CPU's float32 operations exactly and
both give the same escape counts. The smooth fraction is made in float64 from |z_n|^2, as for
float64 frames (escape.finish_kernel), so values differ between the targets only where the
logarithms do.

Pixel coordinates: `pixel_axes` computes each column's real part and each row's imaginary part on
the host exactly as the float64 kernels compute them, then rounds them once to float32. The
kernels read them from two small arrays, so no float64 arithmetic is left on the GPU (where a
consumer card runs float64 at 1/64 of float32's rate) and the CPU twin reads the same numbers.
"""
from __future__ import annotations

import operator

import numpy as np
from numba import njit, prange

from ..backend import simulator_enabled
from ..cpu_chunks import WORKERS, claim, enter, leave, reset
from . import escape as mk

f32 = np.float32


def pixel_axes(args: tuple, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """(xs, ys): the real part of each of `cols` columns and the imaginary part of each of `rows`
    buffer rows, as float32, for escape kernels' grid arguments `args` (renderer.PixelGrid.args:
    grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter). Computed in float64 with the
    float64 kernels' operations in their order, then rounded once."""
    grid_row0, grid_col0, cx, cy, step, half_w, half_h = args[:7]
    gx = (np.arange(cols, dtype=np.int64) + int(grid_col0)).astype(np.float64) + 0.5 - half_w
    gy = (np.arange(rows, dtype=np.int64) + int(grid_row0)).astype(np.float64) + 0.5 - half_h
    xs = float(cx) + gx * float(step)
    ys = float(cy) - gy * float(step)
    return xs.astype(np.float32), ys.astype(np.float32)


# ---------------------------------------------------------------- CPU twin (numba, parallel)

@njit(cache=True)
def _mul_cpu(a, b):
    return f32(a) * f32(b)


@njit(cache=True)
def _add_cpu(a, b):
    return f32(a) + f32(b)


_escape_cpu, _escape_pair_cpu = mk._make_escape(_mul_cpu, _add_cpu, njit)[:2]


@njit(cache=True)
def escape_value32(x, y, max_iter):
    """Smooth escape value of one point (float32 coordinates), the float32 arithmetic (CPU)."""
    return _escape_cpu(f32(x), f32(y), max_iter)


@njit(parallel=True, cache=True)
def escape_rows_cpu32(values, band_row0, band_rows, stride, xs, ys, max_iter, stop):
    """escape.escape_rows_cpu in float32: fill values[band_row0 : band_row0 + band_rows] of a
    buffer whose row r has imaginary part ys[r] and column c real part xs[c] (pixel_axes). Rows in
    the same coprime order, claimed; `stop` the same control block, its flag read before each pair
    of pixels."""
    cols = values.shape[1]
    reset(stop)               # every call claims its pieces from 0
    for _w in prange(stop[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        k = claim(stop)
        while k < band_rows and mk._read_flag(stop) == 0:
            ran = True
            br = band_row0 + (k * stride) % band_rows
            y = ys[br]
            for c in range(0, cols - 1, 2):
                if mk._read_flag(stop) != 0:
                    break
                va, vb = _escape_pair_cpu(xs[c], xs[c + 1], y, max_iter)
                values[br, c] = va
                values[br, c + 1] = vb
            if cols % 2:
                c = cols - 1
                values[br, c] = _escape_cpu(xs[c], y, max_iter)
            k = claim(stop)
        leave(stop, clocks, ran)


# ---------------------------------------------------------------- GPU (numba-cuda)

from .escape_gpu import cuda  # noqa: E402 (the GPU half of this file needs numba.cuda)

if cuda is not None:
    if simulator_enabled():
        def _mul_gpu(a, b):
            return f32(a) * f32(b)

        def _add_gpu(a, b):
            return f32(a) + f32(b)
    else:
        from numba.cuda import libdevice

        @cuda.jit(device=True, inline="always")
        def _mul_gpu(a, b):
            return libdevice.fmul_rn(f32(a), f32(b))

        @cuda.jit(device=True, inline="always")
        def _add_gpu(a, b):
            return libdevice.fadd_rn(f32(a), f32(b))

    _, _, _advance_gpu, _shortcut_gpu, _, _zstep_gpu = mk._make_escape(
        _mul_gpu, _add_gpu, cuda.jit(device=True), cuda.jit(device=True, inline="always"))

    @cuda.jit(cache=True)
    def escape_slice_kernel32(values, zx, zy, alive, band_row0, band_rows, xs, ys, n0, n1,
                              max_iter):
        """escape.escape_slice_kernel in float32 (z kept in float32 zx, zy), the pixel
        coordinates read from xs, ys (pixel_axes)."""
        c, r = cuda.grid(2)
        running = 0
        if c < values.shape[1] and r < band_rows:
            br = band_row0 + r
            if n0 == 0 or values[br, c] < 0.0:
                zr = f32(0.0)
                zi = f32(0.0)
                if n0 > 0:
                    zr = zx[br, c]
                    zi = zy[br, c]
                v, zr, zi = _advance_gpu(xs[c], ys[br], zr, zi, n0, n1, max_iter)
                values[br, c] = v
                if v < 0.0:
                    zx[br, c] = zr
                    zy[br, c] = zi
                    running = 1
        count = cuda.syncthreads_count(running)
        if count > 0 and cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
            cuda.atomic.add(alive, 0, count)
else:  # pragma: no cover - only where numba-cuda is broken
    escape_slice_kernel32 = None
    _mul_gpu = _add_gpu = operator.mul
