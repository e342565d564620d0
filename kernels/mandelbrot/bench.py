"""Mandelbrot benchmark workloads for `main.py --bench` (see kernels.bench for the JSON layout).

Metrics: "G iter/s" = iterations the escape kernel really performs (counted exactly once per
workload from the frame's values, outside the timed loop; the cardioid/bulb shortcut's points count
0) divided by the escape kernel's median time (colourise excluded); "frame ms" = median of
kernel (escape + colourise) + d2h per frame, i.e. everything but the host's own overhead.

mandelbrot-divergence (GPU) measures what divergence costs: each launch variant renders a
"ceiling" frame, every pixel inside the period-3 bulb (no shortcut applies, so every pixel runs all
2000 iterations: no lane of a warp ever waits for another), and the seahorse frame;
"% of ceiling" = the seahorse's useful G iter/s ÷ the same variant's ceiling G iter/s, both from
this run. The deep-zoom workloads (kernels/mandelbrot/benches/bench.py) join the list on the GPU as
mandelbrot-deep-*; on the CPU run `python -m kernels.mandelbrot.benches.bench --backend cpu`.
"""
from __future__ import annotations

import statistics

from .. import bench
from ..bench import Workload
from ..extras import install_hint

SEAHORSE = (-0.743643887037151, 0.131825904205330, 0.01)
# around the nucleus of the period-3 bulb (radius ~0.09): a 0.02-wide frame lies wholly inside the
# set and outside the cardioid/bulb shortcut, so every pixel runs every iteration
BULB3 = (-0.1225611668766536, 0.7448617666197442, 0.02)
FULL = (-0.5, 0.0, 3.0)
FULL_HD = (1920, 1080)
PREVIEW = (960, 540)
# thread-block shapes (x = columns, y = rows) timed by mandelbrot-launch
LAUNCH_SHAPES = ((8, 8), (16, 8), (16, 16), (32, 4), (32, 8), (32, 16), (64, 4), (128, 1), (256, 1))


# --bench --number-type (cli/bench.py): the number type of the frame workloads (seahorse, full,
# preview), "auto" resolved per backend by number_type.py; the launch variants stay float64
NUMBER_TYPE = "float64"


def _typed(req, backend):
    from .requests.number_type import resolve
    return resolve(req, backend, NUMBER_TYPE)[0]


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
    return None if k is None else k - (c or 0.0) - _count_ms(t)


def _count_ms(t):
    # the roofline's work count (frame_work.py) shares the kernel phase; it is not the frame's
    return t.detail.get("work count") or 0.0


def _frame_ms(t):
    k = t.phases_ms.get("kernel")
    return None if k is None else k - _count_ms(t) + (t.phases_ms.get("d2h") or 0.0)


def _iterations(backend, req) -> int:
    """Exact iterations of this frame, computed once (not timed)."""
    from dataclasses import replace

    from .renderer import Renderer, executed_iterations
    frame = Renderer(backend, reuse_values=False, number_type=req.number_type).render(
        replace(req, want_values=True))
    return executed_iterations(req, frame.values)


def _measure(name, backend, repeats, req, variant="default", block=None, iterations=None,
             **launch):
    """`launch`: the Renderer's launch keywords; a variant's name ("grid", "persistent",
    "sorted") becomes its launch object here, with the run's thresh and warps per SM, as only
    benches run the variants (escape_variants.py)."""
    from .renderer import Renderer
    if launch.get("launch", "warp") != "warp" and isinstance(launch["launch"], str):
        from .benches.escape_variants import variant as variant_of       # numba.cuda: GPU benches only
        knobs = {k: launch[k] for k in ("thresh", "warps_per_sm") if launch.get(k) is not None}
        launch = {**launch, "launch": variant_of(launch["launch"], **knobs)}
    renderer = Renderer(backend, block=block, reuse_values=False, number_type=req.number_type,
                        **launch)
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
        req = _typed(_request(view, size, iters), backend)
        typed = "" if req.number_type == "float64" else f", {req.number_type}"
        row, _ = _measure(name, backend, repeats, req, variant=f"{iters} iterations{typed}")
        return [row]
    return run


def _launch(backend, repeats):
    req = _request(SEAHORSE, FULL_HD, 2000)
    iters = _iterations(backend, req)
    rows = []
    for bx, by in LAUNCH_SHAPES:
        row, _ = _measure("mandelbrot-launch", backend, repeats, req, variant=f"block {bx}x{by}",
                          block=(bx, by), iterations=iters, launch="grid")
        row["metrics"]["kernel ms"] = row["metrics"]["escape ms"]
        rows.append(row)
    return rows


# (variant, Renderer keyword arguments): the default warp launch, its knobs either side, the
# same launch handed the pixels longest first as samples predict them (escape_variants.py), the
# persistent launch it replaced and the one-thread-per-pixel grid before that
DIVERGENCE_VARIANTS = (
    ("warp", {}),
    ("warp thresh 4", {"thresh": 4}),
    ("warp 8 warps/SM", {"warps_per_sm": 8}),
    ("warp 24 warps/SM", {"warps_per_sm": 24}),
    ("sorted", {"launch": "sorted"}),
    ("persistent", {"launch": "persistent"}),
    ("grid 16x8", {"launch": "grid", "block": (16, 8)}),
)


DIVERGENCE_SIZE, DIVERGENCE_ITERS = FULL_HD, 2000


def _divergence(backend, repeats):
    size, iters = DIVERGENCE_SIZE, DIVERGENCE_ITERS
    seahorse = _request(SEAHORSE, size, iters)
    bulb = _request(BULB3, size, iters)
    useful = _iterations(backend, seahorse)
    ceiling_iters = _iterations(backend, bulb)
    rows = []
    for variant, kw in DIVERGENCE_VARIANTS:
        top, _ = _measure("mandelbrot-divergence", backend, repeats, bulb,
                          variant=f"{variant}: ceiling", iterations=ceiling_iters, **kw)
        row, _ = _measure("mandelbrot-divergence", backend, repeats, seahorse,
                          variant=f"{variant}: seahorse", iterations=useful, **kw)
        ceiling = top["metrics"]["G iter/s"]
        got = row["metrics"]["G iter/s"]
        pct = 100.0 * got / ceiling if got and ceiling else None
        top["metrics"]["every pixel iterates"] = ceiling_iters == size[0] * size[1] * iters
        for r in (top, row):
            r["metrics"]["ceiling G iter/s"] = ceiling
            r["metrics"]["% of ceiling"] = pct if r is row else 100.0 if ceiling else None
        rows += [top, row]
    return rows


DEEP_FRAME_CASES = (("1e-100", 50_000), ("1e-1000", 1_000_000))


def _deep_frame(backend, repeats):
    """What the window pays per deep frame at 1920x1080: the deep pixels (reference and table
    reused), colouring on the device in each mapping and the copy of the RGBA frame; and a
    colour-only change (the values reused where they lie)."""
    try:
        import gmpy2  # noqa: F401
    except ImportError:
        print(f"# mandelbrot-deep-frame: skipped, deep zoom needs gmpy2: {install_hint()}")
        return []
    rows = []
    for width, iters in DEEP_FRAME_CASES:
        rows += _deep_frame_rows(backend, repeats, width, iters)
    return rows


def _deep_frame_rows(backend, repeats, width, iters):
    from dataclasses import replace

    from .benches.locations import KORMANYOS_VERY_DEEP as loc
    from .deep_frames import DeepFrameRenderer
    from .requests.request import DeepFrameRequest
    r = DeepFrameRenderer(backend)
    base = DeepFrameRequest(loc.center_re, loc.center_im, width, FULL_HD, iters)
    r.render(base)                                       # reference, table, compile
    size = f"{FULL_HD[0]}x{FULL_HD[1]}"
    state = {"flip": 0}

    def frame(mapping):
        state["flip"] ^= 1                               # another limit: the pixels are recomputed
        return r.render(replace(base, max_iter=iters + state["flip"], mapping=mapping)).timings

    def recolour():
        state["flip"] ^= 1
        palette = ("inferno", "viridis")[state["flip"]]
        return r.render(replace(base, mapping="log", palette=palette)).timings

    rows = []
    for variant, fn in [(m, (lambda m=m: frame(m))) for m in ("sqrt", "log", "histogram")] + \
            [("recolour", recolour)]:
        runs, _ = bench.time_runs(fn, repeats, warmup=2)
        rows.append(bench.result("mandelbrot-deep-frame", backend, f"{width} {variant}", size, runs,
                                 None, {
                                     "frame ms": _median([t.phases_ms["total"] for t in runs]),
                                     "kernel ms": _median([t.phases_ms["kernel"] for t in runs]),
                                     "colourise ms": _median([t.detail.get("colourise") for t in runs]),
                                     "d2h bytes": runs[-1].bytes["d2h"]}))
    return rows


def _deep_workloads() -> list[Workload]:
    """The deep-zoom workloads, named mandelbrot-deep-* so that `--only mandelbrot` includes them;
    GPU only here (the CPU twin takes minutes per depth). Without gmpy2 they report nothing."""
    from .benches.bench import workloads as deep_workloads
    out = []
    for w in deep_workloads():
        def run(backend, repeats, _w=w):
            try:
                import gmpy2  # noqa: F401
            except ImportError:
                print(f"# {_w.name}: skipped, deep zoom needs gmpy2: {install_hint()}")
                return []
            rows = _w.run(backend, repeats)
            for r in rows:
                r["workload"] = f"mandelbrot-{r['workload']}"
            return rows
        out.append(Workload(f"mandelbrot-{w.name}", w.description, run, backends=("cuda",)))
    return out


# the float32 kernel beside the float64 one on the same frames: the whole set (where float32 draws
# what float64 draws) and the seahorse (where it departs on some pixels, the work alike)
FLOAT32_FRAMES = (("whole set", FULL, 256), ("seahorse", SEAHORSE, 2000))
# on the GPU the same frames at 3840x2160 too: a 1080p frame's kernel (0.2-0.6 ms) is short
# enough that launch and tail weigh on the ratio; four times the pixels fill the device
UHD = (3840, 2160)


def _float32_pairs(backend, repeats):
    """G iter/s of each type, counted from its own frame, and float32's speed-up on this device."""
    from dataclasses import replace

    from .requests.number_type import float32_state
    rows = []
    for size in (FULL_HD, UHD) if backend.is_gpu else (FULL_HD,):
        for label, view, iters in FLOAT32_FRAMES:
            if size != FULL_HD:
                label = f"{label} {size[0]}x{size[1]}"
            req = _request(view, size, iters)
            r64, _ = _measure("mandelbrot-float32", backend, repeats, req,
                              variant=f"{label}: float64")
            r32, _ = _measure("mandelbrot-float32", backend, repeats,
                              replace(req, number_type="float32"), variant=f"{label}: float32")
            a, b = r32["metrics"]["G iter/s"], r64["metrics"]["G iter/s"]
            r32["metrics"]["float32/float64"] = a / b if a and b else None
            r32["metrics"]["float32 here"] = float32_state(*view, size[0])[0]
            rows += [r64, r32]
    return rows + _deep_float32_pair(backend, repeats)


# a perturbation frame within float32 deltas' reach at 1920 pixels (spacing >= 2^-100), of the
# deep benches' published coordinate; the CPU twin draws it smaller
FLOAT32_DEEP = ("1e-25", 10_000, (320, 180))


def _deep_float32_pair(backend, repeats):
    """The same deep frame with float64 and float32 deltas, reference and table reused: kernel
    time, iterations/s counted from the frame (BLA-skipped iterations included), the ratio."""
    try:
        import gmpy2  # noqa: F401
    except ImportError:
        print(f"# mandelbrot-float32: deep pair skipped, deep zoom needs gmpy2: {install_hint()}")
        return []
    import numpy as np

    from .benches.locations import KORMANYOS_VERY_DEEP as loc
    from .deep.renderer import DeepRenderer
    from .requests.deep_request import DeepRequest
    width, iters, cpu_size = FLOAT32_DEEP
    size = FULL_HD if backend.is_gpu else cpu_size
    req = DeepRequest(loc.center_re, loc.center_im, width, size, iters)
    rows = []
    for number_type in ("float64", "float32"):
        r = DeepRenderer(backend)
        r.number_type = number_type
        first = r.render_values(req)                     # reference, table, compile
        iterations = int(np.minimum(np.floor(first.values) + 1, iters).sum())
        runs, _ = bench.time_runs(lambda: r.render_values(req).timings, repeats, warmup=1)
        kernel = _median([t.phases_ms["kernel"] for t in runs])
        rows.append(bench.result("mandelbrot-float32", backend, f"deep {width}: {number_type}",
                                 f"{size[0]}x{size[1]}", runs, None, {
                                     "G iter/s": iterations / (kernel * 1e-3) / 1e9 if kernel
                                     else None,
                                     "kernel ms": kernel, "deltas": first.number_type}))
    a, b = rows[1]["metrics"]["G iter/s"], rows[0]["metrics"]["G iter/s"]
    rows[1]["metrics"]["float32/float64"] = a / b if a and b else None
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
        Workload("mandelbrot-launch", "Mandelbrot seahorse 1920x1080 one-thread-per-pixel escape "
                 "kernel per thread-block shape", _launch, backends=("cuda",)),
        Workload("mandelbrot-divergence", "Mandelbrot 1920x1080, 2000 iterations: useful iterations/s "
                 "on the seahorse frame against the same launch's divergence-free ceiling (every "
                 "pixel inside the period-3 bulb), per launch variant", _divergence,
                 backends=("cuda",)),
        Workload("mandelbrot-deep-frame", "Deep-zoom frames as the window gets them, 1920x1080 at "
                 "1e-100 and 1e-1000 (reference reused): pixels + colouring per mapping + RGBA "
                 "copy, and a colour-only change", _deep_frame, backends=("cuda",)),
        Workload("mandelbrot-float32", "Mandelbrot 1920x1080 in float32 and float64 on the same "
                 "frames (whole set, 256 iterations; seahorse, 2000; a deep frame at 1e-25 with "
                 "float32 and float64 deltas): G iter/s of each and float32's speed-up",
                 _float32_pairs),
    ] + _deep_workloads()
