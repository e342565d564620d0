"""A frame drawn in both number types, for the window's comparison mode: the job
(`NumberTypeComparison`, run by jobs.compare_types on renderers of the "compare" role, dropped
when it ends) and what it finds (`Comparison`: both pictures, the pixels whose escape count
float32 changes, and where each type runs out at this place, from number_type.py's rule). The
float64 picture is the reference: wherever float64 draws a place its counts are the exact ones
(tests/kernels/test_float32.py checks them against brute force). A deep frame compares float32
and float64 deltas (loops/perturbation_loop.CODE32)."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..backend import Backend
from ..timing import Timings
from .requests.deep_request import EXTENDED_BELOW
from .requests.number_type import (
    DELTAS_MIN_SPACING_LOG2,
    float32_deltas_reach,
    float32_state,
    run_out_widths,
)
from .requests.request import DeepFrameRequest, MandelbrotRequest


@dataclass(frozen=True)
class NumberTypeComparison:
    """Draw `request` (a MandelbrotRequest or a DeepFrameRequest) in float32 and in float64 on
    `backend`."""
    request: MandelbrotRequest | DeepFrameRequest
    backend: Backend | None = None


@dataclass
class Comparison:
    request: MandelbrotRequest | DeepFrameRequest
    rgba64: np.ndarray                  # (h, w, 4) uint8, the float64 picture
    rgba32: np.ndarray                  # the float32 picture
    departs: np.ndarray                 # (h, w) bool: float32's escape count differs
    timings64: Timings
    timings32: Timings

    @property
    def departed(self) -> int:
        return int(self.departs.sum())

    @property
    def departed_fraction(self) -> float:
        return self.departed / max(1, self.departs.size)

    @property
    def deep(self) -> bool:
        return isinstance(self.request, DeepFrameRequest)

    def run_out(self) -> tuple[float, float]:
        """(float32's, float64's) narrowest width at this centre and width in pixels: of plain
        arithmetic, or for a deep frame of the deltas (float64's: then extended exponents)."""
        r = self.request
        if self.deep:
            return math.ldexp(r.size[0], DELTAS_MIN_SPACING_LOG2), float(EXTENDED_BELOW)
        return run_out_widths(r.center_re, r.center_im, r.size[0])

    def float32_state(self) -> str:
        r = self.request
        if self.deep:
            return "ok" if float32_deltas_reach(r.format, r.spacing_log2) else "limit"
        return float32_state(r.center_re, r.center_im, r.width, r.size[0])[0]

    def marked(self, colour=(255, 0, 255, 255)) -> np.ndarray:
        """The float32 picture, dimmed, with the pixels where it departs in `colour`."""
        out = (self.rgba32.astype(np.uint16) * 2 // 5).astype(np.uint8)
        out[..., 3] = 255
        out[self.departs] = colour
        return out


def escape_counts(values: np.ndarray, max_iter: int) -> np.ndarray:
    """n for a pixel that escaped at z_n, max_iter inside (renderer.iteration_counts' rule)."""
    v = np.asarray(values)
    return np.where(v >= max_iter, max_iter, np.floor(v).astype(np.int64) + 1)


def compare(request: MandelbrotRequest, render) -> Comparison:
    """Draw `request` in both types with `render(request) -> Frame` and compare the counts."""
    base = replace(request, want_values=True, overlay="")   # pictures compared, never overlays
    f64 = render(replace(base, number_type="float64"))
    rgba64, values64, t64 = f64.rgba.copy(), f64.values.copy(), f64.timings
    f32 = render(replace(base, number_type="float32"))
    n = int(request.max_iter)
    departs = escape_counts(f32.values, n) != escape_counts(values64, n)
    return Comparison(request, rgba64, f32.rgba.copy(), departs, t64, f32.timings)
