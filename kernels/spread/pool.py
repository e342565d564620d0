"""`open_pool`, which picks the pool the user asked for: in-process over the machine's GPUs (the
default: nothing leaves the machine), or Dask."""
from __future__ import annotations

from ..backend import Backend, resolve
from .base import Pool
from .devices import gpu_list, parse_gpus

def open_pool(backend: str | Backend = "auto", gpus: str | None = None, scheduler: str | None = None,
              workers: int | None = None) -> Pool:
    """The pool for `--backend`, `--gpus all|0,1` and `--scheduler local|ADDRESS`. Raises
    ValueError (a GPU that does not exist, --gpus on the CPU, a scheduler that does not answer) or
    kernels.backend.BackendUnavailable, each with a one-line reason, before any job runs.

    Without a scheduler the jobs run in this process: one worker thread per chosen GPU (the first
    GPU when --gpus is not given), or one CPU thread. `workers` (CPU clusters only): how many
    worker processes a local cluster starts."""
    be = backend if isinstance(backend, Backend) else resolve(backend)
    if gpus is not None and not be.is_gpu:
        raise ValueError("--gpus chooses GPUs, but this runs on the CPU (--backend cpu, or no "
                         "usable GPU here); leave --gpus out or use --backend cuda")
    devices: tuple[int, ...] | None = None
    if be.is_gpu:
        found = gpu_list()
        devices = parse_gpus(gpus, found) if gpus is not None else (found[0].index,) if found else (0,)
    if scheduler:
        from .cluster import DaskPool     # Dask is an optional extra: loaded only when asked for
        return DaskPool(scheduler, be, devices, workers=workers)
    from .local import LocalPool
    return LocalPool(be, devices)
