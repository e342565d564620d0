"""The float32 escape arithmetic compiled for the GPU and its sliced kernel (escape.py says how
float32 frames compute; the app's warp launch is escape_warp_f32.py's).
"""
from __future__ import annotations

import operator

import numpy as np

from ..backend import simulator_enabled
from . import escape as mk
from .escape_gpu import cuda

f32 = np.float32


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
        coordinates read from xs, ys (escape.pixel_axes)."""
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
