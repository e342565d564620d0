"""The roofs as a scheduler job: measured on the worker thread that owns the device.

With `background` the job is a generator stepped a probe at a time, and only while no other job
waits (kernels/scheduler.py): a render or a sweep that arrives meanwhile goes first, and no probe
shares the device with the app's own work."""
from __future__ import annotations

from dataclasses import dataclass

from . import device_roofs, device_roofs_steps


@dataclass(frozen=True)
class RoofsRequest:
    backend: object
    remeasure: bool = False
    nbytes: int | None = None       # the bandwidth probe's size (None: the default)
    target_ms: float = 20.0
    background: bool = False        # a probe at a time, only while the scheduler has no other job


def roofs_job(ctx, req: RoofsRequest):
    kw = dict(nbytes=req.nbytes, target_ms=req.target_ms)
    if req.background:
        return _stepped(ctx, req, kw)
    return device_roofs(req.backend, req.remeasure, **kw)


def _stepped(ctx, req: RoofsRequest, kw: dict):
    roofs = yield from device_roofs_steps(req.backend, req.remeasure, **kw)
    ctx.token.check()           # cancelled while the last probe ran: no result
    return roofs


HANDLERS = {RoofsRequest: roofs_job}
