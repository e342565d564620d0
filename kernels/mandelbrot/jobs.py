"""How the scheduler runs Mandelbrot requests, and which renderer draws a request (`renderer_kind`,
the one place that decides; `renderer_of` gives a job or a pool worker its kept renderer of that
kind, one per backend and role). A coarse pass has its own renderer so its buffers never evict the full
frame's values, which hover readouts and recolouring still use. Deep frames have one renderer per
backend, whose reference orbit and approximation table serve the coarse pass, the full frame and
the pans and zooms after them."""
from __future__ import annotations

import time

from ..scheduler import ColdStart, Compiled, JobContext, Warmup, WarmupStep
from ..timing import JobTimer
from .frames import warm
from .colouring.colour import MAPPINGS
from .compare import NumberTypeComparison, compare
from .frames.preview import PreviewRequest, render_preview
from .renderer import Renderer
from .requests.request import (
    DeepFrameRequest,
    DeepProgress,
    MandelbrotRequest,
    ProgressiveRequest,
)

# progress of a deep frame is reported at most this often (the reference orbit reports every few
# thousand iterations), and always at a stage's start and end
PROGRESS_EVERY_S = 0.1


DEEP, FLOAT64, FLOAT32 = "deep", "float64", "float32"


def renderer_kind(request) -> str:
    """Which renderer draws `request`: DEEP (deep_frames.DeepFrameRenderer, perturbation around a
    reference orbit) for a DeepFrameRequest, FLOAT64 or FLOAT32 (renderer.Renderer with that
    number type) for a MandelbrotRequest. Which request a place gets is
    kernels/mandelbrot/requests/number_format.py's rule, its number type number_type.py's."""
    if isinstance(request, DeepFrameRequest):
        return DEEP
    return FLOAT32 if getattr(request, "number_type", FLOAT64) == FLOAT32 else FLOAT64


def make_renderer(request, backend):
    """A new renderer of the kind that draws `request`, on `backend`."""
    return _make(renderer_kind(request), backend)


def _make(kind: str, backend):
    if kind == DEEP:
        from .deep_frames import DeepFrameRenderer
        return DeepFrameRenderer(backend)
    return Renderer(backend, number_type=kind)


def check_renderer(request) -> None:
    """RuntimeError saying how to install what `request`'s renderer needs and this machine lacks
    (gmpy2 for a deep frame's reference orbit), before any work."""
    if renderer_kind(request) == DEEP:
        from .reference.reference import gmpy2_module
        gmpy2_module()


def renderer_of(owner, request, role: str = "view", series=None):
    """The renderer of `request`'s kind that `owner` keeps for `role` (a JobContext's or a spread
    Worker's `renderer(key, factory)`: made on first use, kept for the next job). A deep renderer
    is kept per `series` too: runs of frames that arrive interleaved (a movie's encoder lanes) each
    keep their own reference orbit; float64 renderers keep nothing worth a copy per series."""
    return _kept(owner, renderer_kind(request), role, series)


def _kept(owner, kind: str, role: str = "view", series=None):
    key = ("mandelbrot", kind, role) + ((series,) if kind == DEEP and series is not None else ())
    backend = owner.backend
    return owner.renderer(key, lambda: _make(kind, backend))


def release_role(owner, role: str) -> int:
    """Drop the Mandelbrot renderers `owner` keeps for `role` (every kind and series): an
    export's or a movie's own renderers go when it ends, not with the window. Returns how many."""
    drop = getattr(owner, "drop_renderers", None)
    if drop is None:
        return 0
    return drop(lambda name: isinstance(name, tuple) and len(name) >= 3 and
                name[0] == "mandelbrot" and name[2] == role)


def releasing(handler, role: str):
    """A generator job handler that drops its `role` renderers however it ends (done, failed,
    cancelled)."""
    def run(ctx: JobContext, job):
        try:
            return (yield from handler(ctx, job))
        finally:
            release_role(ctx, role)
    run.__name__ = getattr(handler, "__name__", "run")
    return run


def _progress_reporter(ctx: JobContext):
    """progress(fraction, stage) for DeepRenderer: DeepProgress items through ctx.report, at most
    one per PROGRESS_EVERY_S per stage besides each stage's first and last."""
    last = {"stage": None, "t": 0.0}

    def progress(fraction: float, stage: str):
        now = time.perf_counter()
        if stage == last["stage"] and fraction < 1.0 and now - last["t"] < PROGRESS_EVERY_S:
            return
        last["stage"], last["t"] = stage, now
        ctx.report(DeepProgress(float(fraction), stage))
    return progress


def render(ctx: JobContext, req: MandelbrotRequest):
    return renderer_of(ctx, req).render(req, cancel=ctx.token)


def render_deep(ctx: JobContext, req: DeepFrameRequest):
    return renderer_of(ctx, req).render(req, cancel=ctx.token, progress=_progress_reporter(ctx))


def render_progressive(ctx: JobContext, req: ProgressiveRequest):
    if renderer_kind(req.full) == DEEP:
        # one deep renderer: the coarse pass's reference orbit serves the full frame
        deep = renderer_of(ctx, req.full)
        progress = _progress_reporter(ctx)
        yield deep.render(req.coarse, cancel=ctx.token, progress=progress)
        ctx.token.check()
        return deep.render(req.full, cancel=ctx.token, progress=progress)
    yield renderer_of(ctx, req.coarse, "coarse").render(req.coarse, cancel=ctx.token)
    ctx.token.check()
    return renderer_of(ctx, req.full).render(req.full, cancel=ctx.token)


def warmup(ctx: JobContext, req: Warmup):
    """The kernels of the view's first frames: `req.parts` names the colour mapping (default
    sqrt). With `cached_only` on the CPU, ColdStart when they are not in numba's disk cache
    (nothing compiled: the view shows a NumPy preview first). With "deep" in `parts`, the
    deep-zoom kernels, a part at a time (a background job: warm_deep)."""
    if "deep" in req.parts:
        return warm_deep(ctx, req)
    mappings = tuple(p for p in req.parts if p in MAPPINGS) or ("sqrt",)
    if req.cached_only and not req.backend.is_gpu:
        need = warm.missing(("float64",) + mappings)
        if need:
            return ColdStart("mandelbrot", req.backend, warm.estimate_s(need))
    ms = _kept(ctx, FLOAT64).warmup(mappings)
    if not req.backend.is_gpu:          # the CPU's coarse pass has its own buffers
        ms += _kept(ctx, FLOAT64, "coarse").warmup(mappings)
    return Compiled("mandelbrot", req.backend, ms)


def warm_deep(ctx: JobContext, req: Warmup):
    """Compile the deep-zoom kernels ahead of need, into the view's deep renderer: the table
    builder, the perturbation loop, the deep frames' colour mapping (log), the extended loop,
    the other mappings.
    A generator: each part is one step, and with `req.background` the scheduler runs a step
    only while no other job waits, so a frame never waits for more than the part compiling."""
    from .deep.renderer import FORMATS
    t0 = time.perf_counter()
    frames = _kept(ctx, DEEP)
    parts = ("table",) + FORMATS + ("log", "colours")
    done = 0
    for part in frames.deep.warmup_steps(FORMATS[:1]):
        done += 1
        yield WarmupStep(part, done, len(parts))
    timer = JobTimer(req.backend, frames.stream, "warm-up")
    frames.colourer.warm(timer, frames.stream, ("log",))
    timer.finish()
    done += 1
    yield WarmupStep("log", done, len(parts))
    for part in frames.deep.warmup_steps(FORMATS[1:]):
        done += 1
        yield WarmupStep(part, done, len(parts))
    frames.warmup()                     # the other mappings; the renderer notes it is warm
    yield WarmupStep("colours", len(parts), len(parts))
    return Compiled("mandelbrot-deep", req.backend, (time.perf_counter() - t0) * 1e3)


def compare_types(ctx: JobContext, job: NumberTypeComparison):
    """The window's comparison mode: the frame in float32 and in float64 (compare.py), on
    renderers of the "compare" role, dropped when it ends (a comparison is rare)."""
    try:
        return compare(job.request,
                       lambda req: renderer_of(ctx, req, "compare").render(req, cancel=ctx.token))
    finally:
        release_role(ctx, "compare")


def preview(ctx: JobContext, req: PreviewRequest):
    return render_preview(req, cancel=ctx.token)


HANDLERS = {MandelbrotRequest: render, ProgressiveRequest: render_progressive,
            DeepFrameRequest: render_deep, PreviewRequest: preview,
            NumberTypeComparison: compare_types}
