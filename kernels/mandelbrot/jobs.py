"""How the scheduler runs Mandelbrot requests: which renderer (one per backend and role, owned by
the scheduler) draws what. A coarse pass has its own renderer so its buffers never evict the full
frame's values, which hover readouts and recolouring still use."""
from __future__ import annotations

from ..scheduler import Compiled, JobContext, Warmup
from .renderer import Renderer
from .request import MandelbrotRequest, ProgressiveRequest


def _renderer(ctx: JobContext, role: str = "view") -> Renderer:
    return ctx.renderer(("mandelbrot", role), lambda: Renderer(ctx.backend))


def render(ctx: JobContext, req: MandelbrotRequest):
    return _renderer(ctx).render(req, cancel=ctx.token)


def render_progressive(ctx: JobContext, req: ProgressiveRequest):
    yield _renderer(ctx, "coarse").render(req.coarse, cancel=ctx.token)
    ctx.token.check()
    return _renderer(ctx).render(req.full, cancel=ctx.token)


def warmup(ctx: JobContext, req: Warmup) -> Compiled:
    ms = _renderer(ctx).warmup()
    if not req.backend.is_gpu:          # the CPU's coarse pass has its own buffers
        ms += _renderer(ctx, "coarse").warmup()
    return Compiled("mandelbrot", req.backend, ms)


HANDLERS = {MandelbrotRequest: render, ProgressiveRequest: render_progressive}
