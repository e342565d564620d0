"""The same jobs on Dask distributed: `--scheduler local` starts a cluster on this machine (one
worker per chosen GPU: dask-cuda's LocalCUDACluster when installed, else a plain LocalCluster whose
worker k drives the k-th chosen GPU; on the CPU, `workers` single-threaded processes), and
`--scheduler tcp://host:8786` uses a running one. No scheduler or RPC of our own: Dask hands out
the jobs, re-runs those of a worker that dies, and brings the results back; this module only keeps
a bounded number in flight and puts them back in order.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Iterator, Sequence

from ..backend import Backend, first_line
from ..extras import install_hint
from ..scheduler import Cancelled, CancelToken
from .base import Job, Pool
from .worker import process_worker

CONNECT_TIMEOUT_S = 10
WINDOW_PER_WORKER = 3
DEFAULT_CPU_WORKERS = 2


def dask_missing() -> str | None:
    """Why a cluster cannot be used here (the optional extra is missing), or None."""
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        return (f"--scheduler needs Dask distributed ({exc.name or exc} is not installed): "
                f"{install_hint('cluster')}")
    return None


def check_address(address: str) -> None:
    """ValueError in one line, within CONNECT_TIMEOUT_S, unless `address` can be a Dask
    scheduler's: a tcp one must answer as one (probe.py), a tls one needs certificates in Dask's
    configuration, and other schemes are Dask's own to try."""
    from .probe import probe_scheduler, split_address, tls_configured
    scheme, _, _ = split_address(address)
    if scheme == "tcp":
        probe_scheduler(address, CONNECT_TIMEOUT_S)
    elif scheme == "tls" and not tls_configured():
        raise ValueError(f"--scheduler {address}: a tls:// scheduler needs the client's TLS "
                         "certificate in Dask's configuration (distributed.comm.tls.client.cert "
                         "and ca-file); none is set here")


class _Task:
    """What a cluster worker runs: the job, on that worker's Worker (its GPU made current there).
    `devices`: the chosen GPUs; a plain LocalCluster's worker named k takes devices[k]."""

    def __init__(self, job: Job, backend_name: str, devices: tuple[int, ...] | None):
        self.job, self.backend_name, self.devices = job, backend_name, devices

    def __call__(self):
        device = None
        if self.backend_name == "cuda":
            device = 0
            if self.devices and not os.environ.get("CUDA_VISIBLE_DEVICES"):
                from distributed import get_worker
                name = get_worker().name
                k = int(name) if isinstance(name, int) or str(name).isdigit() else 0
                device = self.devices[k % len(self.devices)]
        return self.job(process_worker(self.backend_name, device))


class DaskPool(Pool):
    def __init__(self, address: str, backend: Backend, devices: tuple[int, ...] | None,
                 workers: int | None = None):
        missing = dask_missing()
        if missing:
            raise ValueError(missing)
        from distributed import Client
        self.backend = backend
        self.devices = devices
        self._cluster = None
        self.address = str(address)
        if self.address != "local":
            check_address(self.address)
        try:
            if self.address == "local":
                self._cluster = self._local_cluster(backend, devices, workers)
                self.client = Client(self._cluster, timeout=f"{CONNECT_TIMEOUT_S}s")
            else:
                self.client = Client(self.address, timeout=f"{CONNECT_TIMEOUT_S}s")
        except Exception as exc:    # whatever Dask raises, one line (a traceback helps no one)
            if self._cluster is not None:
                self._cluster.close()
            raise ValueError(f"--scheduler {self.address}: no Dask scheduler answered within "
                             f"{CONNECT_TIMEOUT_S} s ({first_line(exc)})") from None
        self.workers = max(1, len(self.client.scheduler_info().get("workers", {})))
        self.shares_files = self._cluster is not None

    @staticmethod
    def _local_cluster(backend: Backend, devices, workers):
        common = dict(dashboard_address=None, silence_logs=40)
        if backend.is_gpu and not backend.simulated:
            try:
                from dask_cuda import LocalCUDACluster
            except ImportError:
                LocalCUDACluster = None
            if LocalCUDACluster is not None:
                return LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(map(str, devices)), **common)
            from distributed import LocalCluster
            return LocalCluster(n_workers=len(devices), threads_per_worker=1, processes=True,
                                **common)
        from distributed import LocalCluster
        n = int(workers or DEFAULT_CPU_WORKERS)
        # each worker process runs numba's parallel kernels: share the cores out between them
        threads = max(1, (os.cpu_count() or 1) // n)
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                            env={"NUMBA_NUM_THREADS": str(threads)}, **common)

    def describe(self) -> str:
        where = "a local Dask cluster" if self._cluster is not None else \
            f"the Dask cluster at {self.address}"
        what = "GPU" if self.backend.is_gpu else "CPU"
        return f"{where} ({self.workers} {what} worker{'s' if self.workers != 1 else ''})"

    def ordered(self, jobs: Sequence[Job], cancel: CancelToken | None = None,
                window: int | None = None) -> Iterator[tuple[int, Any]]:
        jobs = list(jobs)
        window = max(1, int(window or WINDOW_PER_WORKER * self.workers))
        futures: dict[int, Any] = {}
        fed = done = 0
        try:
            while done < len(jobs):
                while fed < len(jobs) and fed < done + window:
                    # pure=False: two equal jobs are two tasks; retries: a job that fails on a
                    # worker that then dies is tried elsewhere (a worker lost mid-job is re-run
                    # by the scheduler anyway)
                    # (pure=False also gives every task a fresh key of its own)
                    futures[fed] = self.client.submit(_Task(jobs[fed], self.backend.name, self.devices),
                                                      pure=False, retries=2)
                    fed += 1
                fut = futures[done]
                # wait on the future's own completion, not on result(timeout=…) in a loop: a
                # timeout that races the result inside distributed ends in an UnboundLocalError
                ready = threading.Event()
                fut.add_done_callback(lambda _f, ready=ready: ready.set())
                while not ready.wait(0.2):
                    if cancel is not None and cancel.cancelled:
                        raise Cancelled()
                if cancel is not None and cancel.cancelled:
                    raise Cancelled()
                result = fut.result()   # the job's own error is raised here
                del futures[done]
                self.last_origin = self._origin(fut)
                yield done, result
                done += 1
        finally:
            if futures:
                self.client.cancel(list(futures.values()))

    def _origin(self, fut) -> str | None:
        """The address of the worker that holds a result (for a message about it), if known."""
        try:
            where = self.client.who_has(fut).get(fut.key) or ()
            return ", ".join(sorted(map(str, where))) or None
        except Exception:   # only a name for a message: never a reason to fail
            return None

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()
