"""A first picture that needs no compile: the float64 escape pass and its colouring in NumPy, at a
reduced resolution, for the seconds a first start spends compiling the kernels.

The escape arithmetic is escape.py's operation for operation (the same pixel grid, the
cardioid/bulb shortcut, z² + c as x² − y² + cx and 2xy + cy, Burning Ship's |2xy| for 2xy and no
shortcut, IEEE doubles, nothing fused), so every pixel escapes at the same iteration as in the
CPU kernel: the preview's counts are the kernel's (`floor(value) + 1`). Only the smooth
fraction's logarithms are NumPy's, which may differ from libm's in the last bit. The colouring
follows colour.py's formulas; the picture is a preview all the same (Frame.meta["preview"]), and
the full frame replaces it once the kernels are ready.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ... import palettes
from ...frame import Frame
from ...timing import Timings
from ..colouring.colour import HIST_BINS, phase_scale
from ..loops.escape import _FRAC_MAX, _INV_LOG_BAILOUT2, BAILOUT2
from ..requests.formulas import BURNING_SHIP, MANDELBROT
from ..requests.request import MandelbrotRequest

SCALE = 4                  # the preview has at most 1/SCALE of the frame's width and height
# pixel-iterations at most (every pixel run to the limit), ~2.5 ns each in NumPy here: at most
# about 0.25 s on the GUI thread; a high iteration count shrinks the preview instead of delaying it
BUDGET = 1e8


def preview_scale(w: int, h: int, max_iter: int) -> int:
    """The divisor of the frame's sides for its preview: SCALE, more where the budget needs."""
    need = math.sqrt(max(1, w) * max(1, h) * max(1, int(max_iter)) / BUDGET)
    return max(SCALE, math.ceil(need))


@dataclass(frozen=True)
class PreviewRequest:
    """A NumPy preview of `frame` (a MandelbrotRequest) at 1/preview_scale() of its size."""
    frame: MandelbrotRequest

    @property
    def backend(self):
        return self.frame.backend

    @property
    def small(self) -> MandelbrotRequest:
        w, h = self.frame.size
        k = preview_scale(w, h, self.frame.max_iter)
        return MandelbrotRequest(self.frame.center_re, self.frame.center_im, self.frame.width,
                                 (max(1, w // k), max(1, h // k)), self.frame.max_iter,
                                 self.frame.palette, self.frame.density, self.frame.offset,
                                 self.frame.interior, mapping=self.frame.mapping,
                                 formula=self.frame.formula)


def grid(req: MandelbrotRequest) -> tuple[np.ndarray, np.ndarray]:
    """(cx, cy) of every pixel, (h, w) each: renderer.PixelGrid's formula in the same order."""
    w, h = int(req.size[0]), int(req.size[1])
    step = float(req.width) / w
    half_w, half_h = w / 2.0, h / 2.0
    xs = float(req.center_re) + ((np.arange(w, dtype=np.float64) + 0.5) - half_w) * step
    ys = float(req.center_im) - ((np.arange(h, dtype=np.float64) + 0.5) - half_h) * step
    return np.broadcast_to(xs[None, :], (h, w)), np.broadcast_to(ys[:, None], (h, w))


def escape_values(cx: np.ndarray, cy: np.ndarray, max_iter: int, cancel=None,
                  formula: str = MANDELBROT) -> np.ndarray:
    """Smooth escape values of the points (cx, cy), as escape.escape() computes them for
    `formula`: equal counts, the fraction within a last-bit difference of the logarithms."""
    out = np.full(cx.shape, float(max_iter))
    flat_x, flat_y = cx.reshape(-1), cy.reshape(-1)
    ship = formula == BURNING_SHIP
    if ship:                # the cardioid/bulb test is Mandelbrot's
        inside = np.zeros(flat_x.shape, dtype=bool)
    else:
        xq = flat_x - 0.25
        cy2 = flat_y * flat_y
        q = xq * xq + cy2
        xb = flat_x + 1.0
        inside = (q * (q + xq) <= 0.25 * cy2) | (xb * xb + cy2 <= 0.0625)
    idx = np.flatnonzero(~inside)
    px, py = flat_x[idx], flat_y[idx]
    x = np.zeros_like(px)
    y = np.zeros_like(px)
    x2 = np.zeros_like(px)
    y2 = np.zeros_like(px)
    values = out.reshape(-1)
    for n in range(1, int(max_iter) + 1):
        y = (np.abs((x + x) * y) if ship else (x + x) * y) + py
        x = (x2 - y2) + px
        x2 = x * x
        y2 = y * y
        r2 = x2 + y2
        gone = r2 > BAILOUT2
        if gone.any():
            values[idx[gone]] = _smooth(r2[gone], n)
            keep = ~gone
            idx, px, py, x, y, x2, y2 = (a[keep] for a in (idx, px, py, x, y, x2, y2))
            if idx.size == 0:
                break
        if cancel is not None and n % 256 == 0:
            cancel.check()
    return out


def _smooth(r2: np.ndarray, n: int) -> np.ndarray:
    f = 1.0 - np.log2(np.log(r2) * _INV_LOG_BAILOUT2)
    return float(n - 1) + np.clip(f, 0.0, _FRAC_MAX)


def colour(values: np.ndarray, req: MandelbrotRequest) -> np.ndarray:
    """uint8 RGBA (h, w, 4) of `values` by colour.py's mappings, in NumPy."""
    lut = palettes.lut(req.palette)
    max_iter = float(req.max_iter)
    escaped = values < max_iter
    v = values[escaped]
    dens = phase_scale(req.mapping, req.density)
    offset = float(req.offset) % 1.0
    vmin = v.min() if v.size else 0.0
    if req.mapping == "log":
        s = offset + dens * np.log1p(np.maximum(v - vmin, 0.0))
    elif req.mapping == "histogram":
        span = v.max() - vmin if v.size else 0.0
        scale = HIST_BINS / math.log1p(span) if span > 0 else 0.0
        t = np.log1p(np.maximum(v - vmin, 0.0)) * scale
        b = np.clip(t.astype(np.int64), 0, HIST_BINS - 1)
        f = np.clip(t - b, 0.0, 1.0)
        hist = np.bincount(b, minlength=HIST_BINS)
        cdf = np.concatenate(([0.0], np.cumsum(hist) / max(1, v.size)))
        s = offset + dens * (cdf[b] + f * (cdf[b + 1] - cdf[b]))
    else:
        s = offset + dens * np.sqrt(v)
    p = s - 2.0 * np.floor(s * 0.5)
    p = np.where(p > 1.0, 2.0 - p, p)
    last = lut.shape[0] - 1
    out = np.empty(values.shape + (4,), dtype=np.uint8)
    out[...] = np.asarray(req.interior, dtype=np.uint8)
    out[escaped] = lut[np.clip((p * last + 0.5).astype(np.int64), 0, last)]
    return out


def render_preview(req: PreviewRequest, cancel=None, backend=None) -> Frame:
    """The preview frame: 1/preview_scale() of the size, meta["preview"] True. Fast enough for
    the GUI thread (BUDGET), where a first start draws it while the worker compiles."""
    small = req.small
    t0 = time.perf_counter()
    cx, cy = grid(small)
    values = escape_values(cx, cy, small.max_iter, cancel, small.formula)
    rgba = colour(values, small)
    t = Timings(backend="cpu", label=f"{small.formula} preview {small.size[0]}×{small.size[1]} "
                                     "(NumPy, while the kernels compile)")
    t.add("host", (time.perf_counter() - t0) * 1e3)
    t.phases_ms["total"] = t.phases_ms.get("host")
    return Frame(rgba=rgba, timings=t, request=small, values=None, fetch_value=None,
                 meta={"preview": True, "max_iter": small.max_iter, "format": "float64",
                       "backend": "CPU (NumPy preview)"})
