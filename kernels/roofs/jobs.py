"""The roofs as a scheduler job: measured on the worker thread that owns the device."""
from __future__ import annotations

from dataclasses import dataclass

from . import Roofs, device_roofs


@dataclass(frozen=True)
class RoofsRequest:
    backend: object
    remeasure: bool = False
    nbytes: int | None = None       # the bandwidth probe's size (None: the default)
    target_ms: float = 20.0


def roofs_job(ctx, req: RoofsRequest) -> Roofs:
    return device_roofs(req.backend, req.remeasure, nbytes=req.nbytes, target_ms=req.target_ms)


HANDLERS = {RoofsRequest: roofs_job}
