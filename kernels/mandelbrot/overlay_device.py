"""The overlays' small kernels, GPU and CPU twins: an overlay layer coloured into the frame's RGBA
words where it lies, a layer's largest value, and the iterations layer derived from a frame's
values (the CPU's escape kernel, and the GPU's sliced frames, keep no counts).

Colouring follows overlays.Scale (the NumPy twin is overlays.colour_host): value x of layer k, or
100 * layer k / layer den where den >= 0 (NaN where that is 0), t on a linear or log scale, LUT
entry round(t * 255), NO_VALUE_RGBA where the value is NaN.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .escape import cuda
from .overlays import LUT_SIZE, T_USEFUL, colour_host

BLOCK = (32, 8)
SIM_BLOCK = (8, 8)


@njit(parallel=True, cache=True)
def iterations_from_values_cpu(values, layers, row0, cx, cy, step, half_w, half_h, max_iter):
    """layers[F_ITER] of a float64 frame from its smooth values: floor(v) + 1 where the pixel
    escaped, max_iter inside, 0 where the cardioid/bulb test answers without iterating (the
    kernels' own shortcut, same formula). Buffer row r is picture row row0 + r."""
    rows, cols = values.shape
    for r in prange(rows):
        y = cy - (float(row0 + r) + 0.5 - half_h) * step
        for c in range(cols):
            x = cx + (float(c) + 0.5 - half_w) * step
            v = values[r, c]
            if v < max_iter:
                layers[0, r, c] = int(math.floor(v)) + 1
            else:
                xq = x - 0.25
                y2 = y * y
                q = xq * xq + y2
                xb = x + 1.0
                inside = q * (q + xq) <= 0.25 * y2 or xb * xb + y2 <= 0.0625
                layers[0, r, c] = 0 if inside else max_iter


def colour_cpu(shown: np.ndarray, scale, out: np.ndarray) -> np.ndarray:
    """The CPU's colouring: overlays.colour_host into `out` (H, W) uint32."""
    np.copyto(out, colour_host(shown, scale))
    return out


if cuda is not None:
    from .escape import _gpu_add, _gpu_mul, _shortcut_gpu

    @cuda.jit(cache=True)
    def iterations_from_values_kernel(values, layers, totals, row0, cx, cy, step, half_w,
                                      half_h, max_iter):
        """iterations_from_values_cpu on the device (the kernels' arithmetic for the pixel's
        place), adding the iterations to totals[T_USEFUL]."""
        c, r = cuda.grid(2)
        if c < values.shape[1] and r < values.shape[0]:
            v = values[r, c]
            n = 0
            if v < max_iter:
                n = int(math.floor(v)) + 1
            else:
                gx = float(c) + 0.5 - half_w
                gy = float(row0 + r) + 0.5 - half_h
                px = _gpu_add(cx, _gpu_mul(gx, step))
                py = _gpu_add(cy, -_gpu_mul(gy, step))
                if not _shortcut_gpu(px, py):
                    n = max_iter
            layers[0, r, c] = n
            cuda.atomic.add(totals, T_USEFUL, n)

    @cuda.jit(cache=True)
    def layer_max_kernel(layers, k, out):
        """out[0] = the largest value of layers[k] (int32), one atomic per thread."""
        i0 = cuda.grid(1)
        stride = cuda.gridsize(1)
        h = layers.shape[1]
        w = layers.shape[2]
        best = np.int32(0)              # the array's type: the atomic takes it as it is
        i = i0
        while i < h * w:
            r = i // w
            v = layers[k, r, i - r * w]
            if v > best:
                best = v
            i += stride
        cuda.atomic.max(out, 0, best)

    @cuda.jit(cache=True)
    def colour_layer_kernel(layers, k, den, rgba, lo, hi, log_scale, lut, none_word):
        """rgba[r, c] = the LUT word of layers[k] (or 100 * layers[k] / layers[den]) on the
        scale (lo, hi, log_scale); none_word where the ratio has no value."""
        c, r = cuda.grid(2)
        if c < rgba.shape[1] and r < rgba.shape[0]:
            x = float(layers[k, r, c])
            if den >= 0:
                d = layers[den, r, c]
                if d <= 0:
                    rgba[r, c] = none_word
                    return
                x = 100.0 * x / float(d)
            if log_scale:
                t = math.log(1.0 + max(x - lo, 0.0)) / math.log(1.0 + (hi - lo))
            else:
                t = (x - lo) / (hi - lo)
            t = min(max(t, 0.0), 1.0)
            rgba[r, c] = lut[int(t * (LUT_SIZE - 1) + 0.5)]
else:  # pragma: no cover - only where numba-cuda is broken
    iterations_from_values_kernel = layer_max_kernel = colour_layer_kernel = None


def grid2(shape, simulated: bool):
    """(blocks, threads) covering an (H, W) array with the 2-d kernels above."""
    bx, by = SIM_BLOCK if simulated else BLOCK
    h, w = shape
    return ((w + bx - 1) // bx, (h + by - 1) // by), (bx, by)


def reduce_grid(simulated: bool):
    return (2, 32) if simulated else (264, 256)

