"""The scheduler's default handlers, gathered from the workload packages.

Each workload package may hold a `jobs` module with `HANDLERS = {RequestType: handler}` and, when
its kernels are worth compiling before the first frame, `warmup(ctx, Warmup) -> Compiled`. They are
found by walking the packages (as kernels.bench finds the bench workloads), so the scheduler names
no workload and no workload imports the scheduler's registry.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil

from .scheduler import Compiled, JobContext, Warmup
from .transfer import CopyBandwidthRequest, copy_bandwidth


def _job_modules():
    import kernels
    for info in sorted(pkgutil.iter_modules(kernels.__path__), key=lambda m: m.name):
        if info.ispkg and importlib.util.find_spec(f"kernels.{info.name}.jobs") is not None:
            yield info.name, importlib.import_module(f"kernels.{info.name}.jobs")


def default_handlers() -> dict:
    handlers: dict = {}
    warmups = {}
    for name, mod in _job_modules():
        handlers.update(getattr(mod, "HANDLERS", {}))
        if hasattr(mod, "warmup"):
            warmups[name] = mod.warmup

    def warmup(ctx: JobContext, req: Warmup) -> Compiled:
        fn = warmups.get(req.workload)
        return fn(ctx, req) if fn is not None else Compiled(req.workload, req.backend, 0.0)

    handlers[Warmup] = warmup
    handlers[CopyBandwidthRequest] = copy_bandwidth
    return handlers
