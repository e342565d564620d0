"""How the scheduler runs the rng requests: each request type goes to its job (kernels/rng/
*_job.py) through one Renderer per backend, owned by the scheduler, so the jobs share one workspace
and data generated for one strategy stay on the device for the next."""
from __future__ import annotations

from ..scheduler import Compiled, JobContext, Warmup
from .renderer import Renderer
from .request import GenerateRequest, HistogramRequest, MonteCarloRequest, ReduceRequest


def _renderer(ctx: JobContext) -> Renderer:
    return ctx.renderer("rng", lambda: Renderer(ctx.backend))


def generate(ctx: JobContext, req: GenerateRequest):
    return _renderer(ctx).generate(req, cancel=ctx.token)


def reduce(ctx: JobContext, req: ReduceRequest):
    return _renderer(ctx).reduce(req, cancel=ctx.token)


def histogram(ctx: JobContext, req: HistogramRequest):
    return _renderer(ctx).histogram(req, cancel=ctx.token)


def monte_carlo(ctx: JobContext, req: MonteCarloRequest):
    return _renderer(ctx).monte_carlo(req, cancel=ctx.token)


def warmup(ctx: JobContext, req: Warmup) -> Compiled:
    return Compiled("rng", req.backend, _renderer(ctx).warmup(cancel=ctx.token, parts=req.parts))


HANDLERS = {GenerateRequest: generate, ReduceRequest: reduce, HistogramRequest: histogram,
            MonteCarloRequest: monte_carlo}
