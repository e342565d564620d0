"""How the scheduler runs a throughput sweep: a generator job, one point per step, so other views
are served between points and a cancel takes effect before the next one."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..backend import Backend
from ..scheduler import JobContext
from . import sweep as _sweep


@dataclass(frozen=True)
class SweepRequest:
    op: str
    impls: tuple[str, ...]
    modes: tuple[str, ...]
    sizes: tuple[int, ...]
    backend: Backend
    repeats: int = 5
    ref_bytes: int = _sweep.REF_BYTES
    budget_s: float = 0.5
    # a context each CPU point is measured in (the window's GUI thread steps aside there)
    settle: Callable[[], object] | None = field(default=None, compare=False)


def run_sweep(ctx: JobContext, req: SweepRequest):
    return _sweep.sweep(req.backend, [req.op], list(req.impls), list(req.modes), list(req.sizes),
                        ctx.token, repeats=req.repeats, ref_bytes=req.ref_bytes,
                        budget_s=req.budget_s, settle=req.settle)


HANDLERS = {SweepRequest: run_sweep}
