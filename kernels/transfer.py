"""Reference bandwidths measured on the spot: device-to-device copy, host↔device copies (pinned
and pageable) and the CPU's memory copy. The throughput view draws them as its ceilings.

Bandwidth counts bytes read plus bytes written for copies within one memory (d2d, CPU copy), and
bytes moved for copies across the bus (h2d, d2h), as the usual tools do.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .backend import numba_cuda
from .bench import Workload, result, time_runs
from .timing import JobTimer, Timings

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

DEFAULT_BYTES = 256 * 2**20


def _random(n_bytes: int) -> np.ndarray:
    # never time on zeros: random data, generated once per size; a 1 MiB block repeated, since a
    # copy's speed does not depend on the values and drawing 256 MiB of them took longer than the
    # copies it feeds
    rng = np.random.default_rng(12345)
    n = n_bytes // 4
    return np.resize(rng.random(min(n, 1 << 18), dtype=np.float32), n)


class TransferProbe:
    """Holds the buffers for repeated copy measurements of one size (allocated once)."""

    def __init__(self, backend, nbytes: int = DEFAULT_BYTES):
        self.backend = backend
        self.nbytes = nbytes - nbytes % 4
        self.src_host = _random(self.nbytes)
        self._dev = None

    def _device(self):
        if self._dev is None:
            from numba import cuda

            from .buffers import ensure_device_fits
            ensure_device_fits(2 * self.nbytes, what="the bandwidth probe")
            self.stream = cuda.stream()
            a = cuda.to_device(self.src_host, stream=self.stream)
            b = cuda.device_array_like(a, stream=self.stream)
            pinned = cuda.pinned_array(self.src_host.shape, dtype=self.src_host.dtype)
            pinned[:] = self.src_host
            self._dev = (a, b, pinned, np.empty_like(self.src_host))
        return self._dev

    def d2d(self) -> Timings:
        """cuMemcpyDtoD, the driver's own device-to-device copy."""
        a, b, _, _ = self._device()
        t = JobTimer(self.backend, self.stream, "d2d copy")
        with t.phase("kernel", gpu=True):
            b.copy_to_device(a, stream=self.stream)
        return t.finish()

    def d2d_kernel(self) -> Timings:
        """A plain one-element-per-thread copy kernel: on some GPUs it beats the driver's copy, and
        the faster of the two is the honest ceiling for a streaming kernel."""
        a, b, _, _ = self._device()
        n = a.size
        t = JobTimer(self.backend, self.stream, "d2d copy kernel")
        with t.phase("kernel", gpu=True):
            _copy[(n + 255) // 256, 256, self.stream](b, a)
        return t.finish()

    def h2d(self, pinned: bool) -> Timings:
        a, _, pin, _ = self._device()
        src = pin if pinned else self.src_host
        t = JobTimer(self.backend, self.stream, "h2d copy")
        if pinned:
            with t.phase("h2d", gpu=True, nbytes=self.nbytes):
                a.copy_to_device(src, stream=self.stream)
        else:
            t.copies("h2d", [(a, src)], to_device=True)
        return t.finish()

    def d2h(self, pinned: bool) -> Timings:
        a, _, pin, page = self._device()
        dst = pin if pinned else page
        t = JobTimer(self.backend, self.stream, "d2h copy")
        if pinned:
            with t.phase("d2h", gpu=True, nbytes=self.nbytes):
                a.copy_to_host(dst, stream=self.stream)
        else:
            t.copies("d2h", [(a, dst)], to_device=False)
        return t.finish()

    def cpu_copy(self, parallel: bool = False) -> Timings:
        """np.copyto runs on one core; the numba prange copy on all of them, which is the fair
        ceiling for the parallel CPU kernels."""
        if not hasattr(self, "_cpu_dst"):
            self._cpu_dst = np.empty_like(self.src_host)
            self._cpu_dst[:] = 1.0  # touch the pages so the first timed copy does not fault them in
        t = JobTimer(self.backend, None, "cpu copy")
        with t.phase("kernel"):
            if parallel:
                _cpu_copy_parallel(self._cpu_dst, self.src_host)
            else:
                np.copyto(self._cpu_dst, self.src_host)
        return t.finish()


@cuda.jit(cache=True)
def _copy(dst, src):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


@njit(parallel=True, cache=True)
def _cpu_copy_parallel(dst, src):
    for i in prange(src.size):
        dst[i] = src[i]


def gbs(nbytes: float, ms) -> float | None:
    return None if not ms else nbytes / (ms * 1e-3) / 1e9


def measure(backend, nbytes: int = DEFAULT_BYTES, repeats: int = 10) -> dict:
    """The reference lines for one backend: {name: GB/s} (median of `repeats`)."""
    from .bench import median_timings
    probe = TransferProbe(backend, nbytes)
    out = {}
    for name, par in (("cpu-copy-numpy", False), ("cpu-copy-parallel", True)):
        runs, _ = time_runs(lambda: probe.cpu_copy(par), repeats, warmup=1)
        out[name] = gbs(2 * probe.nbytes, median_timings(runs)["kernel"])
    out["cpu-copy"] = max(out["cpu-copy-numpy"] or 0.0, out["cpu-copy-parallel"] or 0.0) or None
    if backend.is_gpu:
        for name, fn, phase, factor in (
                ("d2d-memcpy", probe.d2d, "kernel", 2),
                ("d2d-kernel", probe.d2d_kernel, "kernel", 2),
                ("h2d-pinned", lambda: probe.h2d(True), "h2d", 1),
                ("d2h-pinned", lambda: probe.d2h(True), "d2h", 1),
                ("h2d-pageable", lambda: probe.h2d(False), "h2d", 1),
                ("d2h-pageable", lambda: probe.d2h(False), "d2h", 1)):
            runs, _ = time_runs(fn, repeats, warmup=1)
            out[name] = gbs(factor * probe.nbytes, median_timings(runs)[phase])
        # the vector implementations' own copies raise this further where they do better
        # (kernels.vector.sweep.add_copy_ceiling)
        out["d2d-copy"] = max(out[k] or 0.0 for k in ("d2d-memcpy", "d2d-kernel")) or None
    return out


def _bench(backend, repeats: int) -> list[dict]:
    probe = TransferProbe(backend)
    size = f"{probe.nbytes // 2**20} MiB"
    rows = []
    for variant, par in (("cpu-copy-numpy", False), ("cpu-copy-parallel", True)):
        runs, _ = time_runs(lambda: probe.cpu_copy(par), repeats, warmup=1)
        r = result("transfer", backend, variant, size, runs)
        r["metrics"]["GB/s"] = gbs(2 * probe.nbytes, r["phases_ms"]["kernel"])
        rows.append(r)
    if backend.is_gpu:
        cases = [("d2d-memcpy", probe.d2d, "kernel", 2), ("d2d-kernel", probe.d2d_kernel, "kernel", 2)]
        for pinned in (True, False):
            kind = "pinned" if pinned else "pageable"
            cases.append((f"h2d-{kind}", (lambda p=pinned: probe.h2d(p)), "h2d", 1))
            cases.append((f"d2h-{kind}", (lambda p=pinned: probe.d2h(p)), "d2h", 1))
        for variant, fn, phase, factor in cases:
            runs, _ = time_runs(fn, repeats, warmup=2)
            r = result("transfer", backend, variant, size, runs)
            r["metrics"]["GB/s"] = gbs(factor * probe.nbytes, r["phases_ms"][phase])
            rows.append(r)
    return rows


def workloads() -> list[Workload]:
    return [Workload("transfer", "memory copy bandwidth: CPU copy, device-to-device, host↔device "
                                 "pinned and pageable (256 MiB)", _bench)]




# ---- as a scheduler job: the ceilings a view compares its rates with, measured on the spot ------
@dataclass(frozen=True)
class CopyBandwidthRequest:
    backend: object
    nbytes: int = 64 * 2**20
    repeats: int = 5


@dataclass(frozen=True)
class CopyBandwidth:
    """GB/s (bytes read + written) of the fastest copy measured here: device to device on a GPU,
    the CPU copy on the CPU; `all` holds every probe's figure."""
    gbs: float | None
    what: str
    all: dict


def copy_bandwidth(ctx, req: CopyBandwidthRequest) -> CopyBandwidth:
    refs = measure(req.backend, req.nbytes, req.repeats)
    if req.backend.is_gpu:
        best = max((v for k, v in refs.items() if k.startswith("d2d") and v), default=None)
        return CopyBandwidth(best, "device-to-device copy", refs)
    return CopyBandwidth(refs.get("cpu-copy"), "CPU copy", refs)
