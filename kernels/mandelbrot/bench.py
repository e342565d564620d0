"""Mandelbrot benchmark workloads for `main.py --bench` (see kernels.bench for the JSON layout).

Metrics: "G iter/s" = iterations the escape kernel really performs (counted exactly once per
workload from the frame's values, outside the timed loop; the cardioid/bulb shortcut's points count
0) divided by the escape kernel's median time (colourise excluded); "frame ms" = median of
kernel (escape + colourise) + d2h per frame, i.e. everything but the host's own overhead.
"""
from __future__ import annotations

import statistics

from .. import bench
from ..bench import Workload

SEAHORSE = (-0.743643887037151, 0.131825904205330, 0.01)
FULL = (-0.5, 0.0, 3.0)
FULL_HD = (1920, 1080)
PREVIEW = (960, 540)
# thread-block shapes (x = columns, y = rows) timed by mandelbrot-launch
LAUNCH_SHAPES = ((8, 8), (16, 8), (16, 16), (32, 4), (32, 8), (32, 16), (64, 4), (128, 1), (256, 1))


def _request(view, size, iters):
    from .renderer import MandelbrotRequest
    cx, cy, width = view
    return MandelbrotRequest(cx, cy, width, size, iters)


def _median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def _escape_ms(t):
    k = t.phases_ms.get("kernel")
    c = t.detail.get("colourise")
    return None if k is None else k - (c or 0.0)


def _frame_ms(t):
    k = t.phases_ms.get("kernel")
    return None if k is None else k + (t.phases_ms.get("d2h") or 0.0)


def _iterations(backend, req) -> int:
    """Exact iterations of this frame, computed once (not timed)."""
    from dataclasses import replace
    from .renderer import Renderer, executed_iterations
    frame = Renderer(backend, reuse_values=False).render(replace(req, want_values=True))
    return executed_iterations(req, frame.values)


def _measure(name, backend, repeats, req, variant="default", block=None, iterations=None):
    from .renderer import Renderer
    renderer = Renderer(backend, block=block, reuse_values=False)
    runs, compile_ms = bench.time_runs(lambda: renderer.render(req).timings, repeats, warmup=2)
    iters = iterations if iterations is not None else _iterations(backend, req)
    esc = _median([_escape_ms(t) for t in runs])
    metrics = {"G iter/s": (iters / (esc * 1e-3) / 1e9) if esc else None,
               "frame ms": _median([_frame_ms(t) for t in runs]),
               "escape ms": esc,
               "colourise ms": _median([t.detail.get("colourise") for t in runs]),
               "G iter": iters / 1e9}
    size = f"{req.size[0]}x{req.size[1]}"
    return bench.result(name, backend, variant, size, runs, compile_ms, metrics), iters


def _frame_workload(name, view, size, iters):
    def run(backend, repeats):
        row, _ = _measure(name, backend, repeats, _request(view, size, iters),
                          variant=f"{iters} iterations")
        return [row]
    return run


def _launch(backend, repeats):
    req = _request(SEAHORSE, FULL_HD, 2000)
    iters = _iterations(backend, req)
    rows = []
    for bx, by in LAUNCH_SHAPES:
        row, _ = _measure("mandelbrot-launch", backend, repeats, req,
                          variant=f"block {bx}x{by}", block=(bx, by), iterations=iters)
        row["metrics"]["kernel ms"] = row["metrics"]["escape ms"]
        rows.append(row)
    return rows


def workloads() -> list[Workload]:
    return [
        Workload("mandelbrot-seahorse", "Mandelbrot 1920x1080, 2000 iterations, seahorse valley "
                 "(-0.743643887037151, 0.131825904205330), width 0.01",
                 _frame_workload("mandelbrot-seahorse", SEAHORSE, FULL_HD, 2000)),
        Workload("mandelbrot-full", "Mandelbrot 1920x1080, 256 iterations, whole set (-0.5, 0), width 3",
                 _frame_workload("mandelbrot-full", FULL, FULL_HD, 256)),
        Workload("mandelbrot-preview", "Mandelbrot 960x540 preview, 500 iterations, seahorse valley",
                 _frame_workload("mandelbrot-preview", SEAHORSE, PREVIEW, 500)),
        Workload("mandelbrot-launch", "Mandelbrot seahorse 1920x1080 escape kernel per thread-block "
                 "shape (picks the default launch configuration)", _launch, backends=("cuda",)),
    ]
