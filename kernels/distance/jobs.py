"""How the scheduler runs distance requests: one renderer per backend, owned by the scheduler."""
from __future__ import annotations

from ..scheduler import JobContext
from .renderer import Renderer
from .request import DistanceRequest


def render(ctx: JobContext, req: DistanceRequest):
    return ctx.renderer("distance", lambda: Renderer(ctx.backend)).render(req, cancel=ctx.token)


HANDLERS = {DistanceRequest: render}
