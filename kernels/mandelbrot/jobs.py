"""How the scheduler runs Mandelbrot requests: which renderer (one per backend and role, owned by
the scheduler) draws what. A coarse pass has its own renderer so its buffers never evict the full
frame's values, which hover readouts and recolouring still use. Deep frames have one renderer per
backend, whose reference orbit and approximation table serve the coarse pass, the full frame and
the pans and zooms after them."""
from __future__ import annotations

import time

from ..scheduler import Compiled, JobContext, Warmup
from .renderer import Renderer
from .request import (
    DeepFrameRequest,
    DeepProgress,
    MandelbrotRequest,
    ProgressiveRequest,
)

# progress of a deep frame is reported at most this often (the reference orbit reports every few
# thousand iterations), and always at a stage's start and end
PROGRESS_EVERY_S = 0.1


def _renderer(ctx: JobContext, role: str = "view") -> Renderer:
    return ctx.renderer(("mandelbrot", role), lambda: Renderer(ctx.backend))


def _deep_renderer(ctx: JobContext):
    from .deep_frames import DeepFrameRenderer
    return ctx.renderer(("mandelbrot", "deep"), lambda: DeepFrameRenderer(ctx.backend))


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
    return _renderer(ctx).render(req, cancel=ctx.token)


def render_deep(ctx: JobContext, req: DeepFrameRequest):
    return _deep_renderer(ctx).render(req, cancel=ctx.token, progress=_progress_reporter(ctx))


def render_progressive(ctx: JobContext, req: ProgressiveRequest):
    if isinstance(req.full, DeepFrameRequest):
        deep = _deep_renderer(ctx)
        progress = _progress_reporter(ctx)
        yield deep.render(req.coarse, cancel=ctx.token, progress=progress)
        ctx.token.check()
        return deep.render(req.full, cancel=ctx.token, progress=progress)
    yield _renderer(ctx, "coarse").render(req.coarse, cancel=ctx.token)
    ctx.token.check()
    return _renderer(ctx).render(req.full, cancel=ctx.token)


def warmup(ctx: JobContext, req: Warmup) -> Compiled:
    ms = _renderer(ctx).warmup()
    if not req.backend.is_gpu:          # the CPU's coarse pass has its own buffers
        ms += _renderer(ctx, "coarse").warmup()
    return Compiled("mandelbrot", req.backend, ms)


HANDLERS = {MandelbrotRequest: render, ProgressiveRequest: render_progressive,
            DeepFrameRequest: render_deep}
