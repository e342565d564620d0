"""A deep-zoom bench workload of one place: a centre (decimal strings), a width and an iteration
limit, as a location file gives them (services.kf_bench builds Kalles Fraktaler's six benchmark
locations and `--bench --location FILE` from it; nothing here reads files).

The picture is square, 1024x1024 on the GPU and 256x256 on the CPU (KF logs its benchmark times
for square frames). Variants:
  "first frame": a new renderer (kernels already compiled): reference orbit + BLA table + uploads
                 + kernel + copy, what a user waits for after opening the location;
  "re-render":   the same frame again, reference and table reused.
Metrics as kernels.mandelbrot.benches.bench's (its "marked pixels": those float64 cannot place, left
as the loop drew them here, EXACT), and, where the workload carries KF's logged time for
the GPU size, "KF s" (KF 2.12's logged wall seconds) and "x KF" (KF's time / our first frame).
"""
from __future__ import annotations

import time

from ...bench import Workload

GPU_SIZE = (1024, 1024)
CPU_SIZE = (256, 256)
# first frames of a long reference are timed once on the GPU (seconds each); others up to this
FIRST_RUNS = 3
LONG_REFERENCE = 100_000
# the CPU twin's re-renders take seconds to minutes at these depths
CPU_MAX_REPEATS = 1
# the pixels float64 cannot place are counted ("marked pixels"), not iterated in MPFR: KF's times
# are of perturbation alone, and KF's 5e227 has ~30,000 such pixels at 1024x1024 (~25 min of 16
# cores); tools/gpu_issue34.sh times the exact frames
EXACT = False


def place_size(backend) -> tuple[int, int]:
    return GPU_SIZE if backend.is_gpu else CPU_SIZE


def place_workload(name: str, description: str, center_re: str, center_im: str, width: str,
                   iterations: int, kf_seconds: float | None = None,
                   backends=("cpu", "cuda"), named_only=("cpu",),
                   formula: str = "mandelbrot") -> Workload:
    """The workload `name` rendering the square frame `width` wide at (center_re, center_im)
    with `iterations` of `formula`; `kf_seconds`: KF's logged time for the same frame at
    GPU_SIZE."""
    def run(backend, repeats):
        return _run(name, backend, repeats, center_re, center_im, width, int(iterations),
                    kf_seconds, formula)
    return Workload(name, description, run, backends=tuple(backends), named_only=tuple(named_only))


def _run(name, backend, repeats, center_re, center_im, width, iterations, kf_seconds, formula):
    from .bench import _row, _timed
    from ..deep.renderer import FORMATS, DeepRenderer
    from ..requests.deep_request import DeepRequest
    size = place_size(backend)
    req = DeepRequest(center_re, center_im, width, size, iterations, formula=formula).validate()
    compile_ms = DeepRenderer(backend).warmup(FORMATS, formula)
    runs = 1 if (not backend.is_gpu or iterations > LONG_REFERENCE) else min(repeats, FIRST_RUNS)
    firsts, walls = [], []
    for _ in range(runs):
        r = DeepRenderer(backend)
        r.exact_redo = EXACT
        r.warmup(FORMATS, formula)
        t0 = time.perf_counter()
        firsts.append(r.render_values(req))
        walls.append((time.perf_counter() - t0) * 1e3)
    rows = [_row(name, backend, "first frame", size, firsts, compile_ms, width, iterations)]
    first = rows[0]
    first["metrics"]["wall ms"] = min(walls)
    if kf_seconds is not None:
        first["metrics"]["KF s"] = kf_seconds
        if size == GPU_SIZE:
            first["metrics"]["x KF"] = kf_seconds * 1e3 / min(walls)
    if backend.is_gpu:
        rerenders, _ = _timed(lambda: r.render_values(req), repeats)
    else:           # no warm-up run: the first frame was one
        rerenders = [r.render_values(req) for _ in range(min(repeats, CPU_MAX_REPEATS))]
    rows.append(_row(name, backend, "re-render", size, rerenders, None, width, iterations))
    return rows
