"""What a job sees where it runs: its backend, its GPU, and renderers it may keep for the next job
on the same worker (a deep zoom's reference orbit, buffers, compiled kernels)."""
from __future__ import annotations

import threading
from typing import Any, Callable, Hashable

from ..backend import Backend


class Worker:
    """One worker: one thread that owns one GPU (or the CPU). `renderer(key, factory)` returns the
    renderer made by factory() the first time and the same one afterwards; `cancel` is the current
    run's token (its check() raises Cancelled), or None."""

    def __init__(self, backend: Backend, device: int | None = None, label: str = ""):
        self.backend = backend
        self.device = device
        self.label = label or ("CPU" if device is None else f"GPU {device}")
        self.cancel = None
        self._renderers: dict[Hashable, Any] = {}

    def renderer(self, key: Hashable, factory: Callable[[], Any]):
        got = self._renderers.get(key)
        if got is None:
            got = self._renderers[key] = factory()
        return got

    def close(self, collect: bool = True) -> None:
        """Drop the renderers (and with them their buffers), now rather than whenever. collect:
        also run the garbage collector for those held in cycles (a pool of several workers runs
        it once for all of them instead: local.py)."""
        self._renderers.clear()
        if collect:
            import gc
            gc.collect()

    def check(self) -> None:
        if self.cancel is not None:
            self.cancel.check()


# A process that runs jobs for a cluster keeps one Worker per thread (Dask runs a task on one of
# its worker's threads; the renderers must stay with the thread that made their context current).
_local = threading.local()


def process_worker(backend_name: str, device: int | None) -> Worker:
    """This thread's Worker in a cluster worker process, made on first use: its backend resolved
    here and its GPU made current for this thread."""
    key = (backend_name, device)
    got = getattr(_local, "workers", {}).get(key)
    if got is None:
        from ..backend import resolve
        be = resolve(backend_name)
        if be.is_gpu and device is not None and not be.simulated:
            from numba import cuda
            cuda.select_device(device)
        got = Worker(be, device if be.is_gpu else None)
        _local.__dict__.setdefault("workers", {})[key] = got
    return got
