"""The float32 escape kernel beside the float64 one on the same frames (`--bench --only
mandelbrot-float32`): iterations/s of each, counted per number type from its own frame
(float32 counts may differ on a few pixels), and their ratio, so one run gives float32's speed-up
on this device. The whole set (where float32 draws what float64 draws) and the seahorse frame
(where it departs on some pixels but the work is alike), 1920x1080 as the window draws them."""
from __future__ import annotations

from dataclasses import replace

from ..bench import Workload
from .bench import FULL, FULL_HD, SEAHORSE, _measure, _request
from .number_type import float32_state

FRAMES = (("whole set", FULL, 256), ("seahorse", SEAHORSE, 2000))


def _pairs(backend, repeats):
    rows = []
    for label, view, iters in FRAMES:
        req = _request(view, FULL_HD, iters)
        r64, _ = _measure("mandelbrot-float32", backend, repeats, req,
                          variant=f"{label}: float64")
        r32, _ = _measure("mandelbrot-float32", backend, repeats,
                          replace(req, number_type="float32"), variant=f"{label}: float32")
        a, b = r32["metrics"]["G iter/s"], r64["metrics"]["G iter/s"]
        r32["metrics"]["float32/float64"] = a / b if a and b else None
        r32["metrics"]["float32 here"] = float32_state(req.center_re, req.center_im, req.width,
                                                       req.size[0])[0]
        rows += [r64, r32]
    return rows


def number_type_workloads() -> list[Workload]:
    return [Workload("mandelbrot-float32", "Mandelbrot 1920x1080 in float32 and float64 on "
                     "the same frames (whole set, 256 iterations; seahorse, 2000): G iter/s of "
                     "each and float32's speed-up", _pairs)]
