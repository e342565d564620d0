"""The overlays' small kernels, GPU and CPU twins: an overlay coloured into the frame's RGBA words
where it lies, a layer's largest value, and the iterations layer derived from a frame's values.

A float64 frame's overlays are coloured straight from what its escape pass left: the iterations
from the values (the app's own kernels ran: no twin, colour_iterations_kernel in place of the
picture's colouring; CPU twin iterations_from_values_cpu then overlays.colour_host), the lane
efficiency from the values and the lane-iterations of escape_warp_overlay_kernel
(colour_lanes_kernel; twin overlays.shown_values then colour_host). Deep frames' layers are
coloured by colour_layer_kernel.

Colouring follows overlays.Scale (the NumPy twin is overlays.colour_host): value x of layer k, or
100 * layer k / layer den where den >= 0 (NaN where that is 0), t on a linear or log scale, LUT
entry round(t * 255), NO_VALUE_RGBA where the value is NaN.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..loops.escape_gpu import cuda
from .overlays import LUT_SIZE, colour_host

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


def float64_layers(values, args, into=None, slots=None) -> np.ndarray:
    """The (2, H, W) int32 layers of a float64 frame on the host (overlays.F_ITER, F_SLOTS) from
    its values and escape arguments `args`: the iterations, and `slots` the lane-iterations
    (0 when none were counted)."""
    if into is None:
        into = np.empty((2,) + values.shape, np.int32)
    iterations_from_values_cpu(values, into, args[0], *args[2:])
    into[1] = 0 if slots is None else slots
    return into


def colour_cpu(shown: np.ndarray, scale, out: np.ndarray) -> np.ndarray:
    """The CPU's colouring: overlays.colour_host into `out` (H, W) uint32."""
    np.copyto(out, colour_host(shown, scale))
    return out


if cuda is not None:
    from ..loops.escape_gpu import _gpu_add, _gpu_mul, _shortcut_gpu

    @cuda.jit(device=True)
    def _iterations_at(values, r, c, row0, cx, cy, step, half_w, half_h, max_iter):
        """iterations_from_values_cpu's count of pixel (r, c), with the kernels' arithmetic for
        its place (the cardioid/bulb test only where the value says it never escaped)."""
        v = values[r, c]
        if v < max_iter:
            return int(math.floor(v)) + 1
        gx = float(c) + 0.5 - half_w
        gy = float(row0 + r) + 0.5 - half_h
        px = _gpu_add(cx, _gpu_mul(gx, step))
        py = _gpu_add(cy, -_gpu_mul(gy, step))
        if _shortcut_gpu(px, py):
            return 0
        return max_iter

    @cuda.jit(device=True)
    def _lut_word(x, lo, span, log_scale, lut):
        """The LUT word of x on the scale (lo, span: hi - lo, or log(1 + hi - lo) when log)."""
        if log_scale:
            t = math.log(1.0 + max(x - lo, 0.0)) / span
        else:
            t = (x - lo) / span
        t = min(max(t, 0.0), 1.0)
        return lut[int(t * (LUT_SIZE - 1) + 0.5)]

    @cuda.jit(cache=True)
    def colour_iterations_kernel(values, rgba, row0, cx, cy, step, half_w, half_h, max_iter,
                                 lo, span, log_scale, lut):
        """rgba[r, c] = the iterations overlay of a float64 frame, from its values alone: the
        frame ran the app's own kernels, this pass replaces its colouring."""
        c, r = cuda.grid(2)
        if c < rgba.shape[1] and r < rgba.shape[0]:
            n = _iterations_at(values, r, c, row0, cx, cy, step, half_w, half_h, max_iter)
            rgba[r, c] = _lut_word(float(n), lo, span, log_scale, lut)

    @cuda.jit(cache=True)
    def colour_lanes_kernel(values, slots, rgba, max_iter, lo, span, lut, none_word):
        """rgba[r, c] = the lane-efficiency overlay: 100 × the pixel's iterations (from its
        value) / its lane-iterations (slots, escape_warp_overlay_kernel's); none_word where it
        has none (the cardioid/bulb test answered it)."""
        c, r = cuda.grid(2)
        if c < rgba.shape[1] and r < rgba.shape[0]:
            s = slots[r, c]
            if s <= 0:
                rgba[r, c] = none_word
                return
            v = values[r, c]
            n = max_iter
            if v < max_iter:
                n = int(math.floor(v)) + 1
            rgba[r, c] = _lut_word(100.0 * float(n) / float(s), lo, span, False, lut)

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
    colour_iterations_kernel = colour_lanes_kernel = layer_max_kernel = colour_layer_kernel = None


def span_of(scale) -> float:
    """colour_iterations_kernel's `span` of an overlays.Scale: computed once on the host."""
    return math.log(1.0 + (scale.hi - scale.lo)) if scale.log else scale.hi - scale.lo


def grid2(shape, simulated: bool):
    """(blocks, threads) covering an (H, W) array with the 2-d kernels above."""
    bx, by = SIM_BLOCK if simulated else BLOCK
    h, w = shape
    return ((w + bx - 1) // bx, (h + by - 1) // by), (bx, by)


def reduce_grid(simulated: bool):
    return (2, 32) if simulated else (264, 256)

