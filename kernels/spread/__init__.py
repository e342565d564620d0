"""Spreading independent jobs (poster bands, movie frames) over every GPU of the machine, or over a
Dask cluster, with the results handed back in job order.

- devices.py: which GPUs this machine has, and `--gpus all|0,1` checked against them.
- worker.py: what a job sees where it runs (its backend, its GPU, renderers kept for the next job).
- base.py: what every pool offers (`Pool.ordered`); pool.py: `open_pool`.
- local.py: the in-process pool: one thread per GPU, each with its own context and stream (or one
  CPU thread: numba's parallel kernels already use every core).
- cluster.py: the same jobs on Dask distributed (a local cluster with one worker per GPU, or a
  scheduler's address); imported only when asked for, since Dask is an optional extra.

A job is a picklable callable `job(worker) -> result`, or in two halves `job.start(worker)` ->
finish (base.py, local.py); workload packages define their jobs (the Mandelbrot package's poster
tiles and movie frames). This package knows no workload and no Qt.
"""
from __future__ import annotations

from .devices import GpuInfo, gpu_list, parse_gpus
from .local import LocalPool
from .base import Pool, Ready
from .pool import open_pool
from .worker import Worker

__all__ = ["GpuInfo", "LocalPool", "Pool", "Ready", "Worker", "gpu_list", "open_pool", "parse_gpus"]
