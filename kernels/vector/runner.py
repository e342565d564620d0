"""Measuring one point: PointRunner holds the buffers of the current size (kernels/vector/
size_data.py) and the job's stream, and times the warm-up and repeats of one (op, implementation,
mode, N).

Modes:
  kernel    data already where the implementation computes (device arrays, or NumPy arrays for the
            CPU implementations); only the compute is timed (CUDA events, or a wall clock).
  pinned    end to end from and to page-locked host buffers: h2d, kernel, d2h on one stream.
  pageable  end to end from and to ordinary NumPy arrays, the seed's way.
"""
from __future__ import annotations

import math
import time

from ..buffers import BufferPool, OutOfDeviceMemory
from ..cpu_chunks import STAMPED
from ..native_clock import THREAD_CPU
from ..timing import JobTimer, Timings
from .memory import fit_problem
from .ops import SCALAR, Impl, get_op
from .results import SweepPoint, measured_point
from .size_data import DeviceSizeData, HostSizeData


WARM_S = 0.005         # how long a CPU op is called before its timed runs


def cancelled(cancel) -> bool:
    if cancel is None:
        return False
    if callable(cancel) and not hasattr(cancel, "cancelled"):
        return bool(cancel())
    return bool(getattr(cancel, "cancelled", False))


class PointRunner:
    """Measures single points; holds the buffers of the current size and the job's stream."""

    def __init__(self, backend, repeats: int = 5, budget_s: float = 0.5):
        self.backend = backend
        self.gpu = bool(getattr(backend, "is_gpu", False))
        self._sizes = DeviceSizeData if self.gpu else HostSizeData   # the one backend choice
        self.pool = BufferPool(backend)
        self.repeats = max(1, int(repeats))
        self.budget_s = budget_s
        self.stream = self._sizes.new_stream()
        self._data: HostSizeData | None = None
        self._warm: set = set()

    def data(self, n: int, pinned: bool) -> HostSizeData | str:
        """The buffers for size n, or the reason they do not fit in memory."""
        d = self._data
        if d is not None and d.n == n:
            if pinned and not d.pinned_ready:
                problem = fit_problem(n, False, True)
                if problem:
                    return problem
                d.ensure_pinned()
            return d
        self.release()
        problem = fit_problem(n, self.gpu, pinned)
        if problem:
            return problem
        try:
            d = self._sizes(self.pool, self.stream, n)
            if pinned:
                d.ensure_pinned()
        except OutOfDeviceMemory as exc:
            self.release()
            return str(exc)
        self._data = d
        return d

    def release(self):
        self._data = None
        self.pool.clear()
        self._sizes.release_garbage()

    # ---- one run ------------------------------------------------------------------------------
    def _run_once(self, op, impl: Impl, mode: str, d: HostSizeData, label: str) -> Timings:
        fn = impl.ops[op.name]
        if impl.device == "cpu":
            ins, out = d.arrays(op, "host")
            t = JobTimer(self.backend, None, label)
            t0 = time.perf_counter()
            ms = fn(ins, out, SCALAR)       # its own clock's ms, or None
            wall = (time.perf_counter() - t0) * 1e3
            t.add_host_ms("kernel", wall if ms is None else ms)
            timings = t.finish()
            if ms is not None:
                timings.method = STAMPED if impl.name == "cpu-numba" else THREAD_CPU
            return timings
        ins, out = d.arrays(op, "device")
        st = self.stream
        t = JobTimer(self.backend, st, label)
        if mode == "kernel":
            with t.phase("kernel", gpu=True):
                fn(ins, out, SCALAR, st)
            return t.finish()
        host_ins = d.pin_in if mode == "pinned" else d.host_in
        host_out = d.host_out_for(op, mode)
        if mode == "pinned":
            with t.phase("h2d", gpu=True, nbytes=sum(a.nbytes for a in ins)):
                for dev, host in zip(ins, host_ins):
                    dev.copy_to_device(host, stream=st)
        else:                       # a pageable copy waits for its stream: it cannot be gated
            t.copies("h2d", list(zip(ins, host_ins)), to_device=True)
        with t.phase("kernel", gpu=True):
            fn(ins, out, SCALAR, st)
        if mode == "pinned":
            with t.phase("d2h", gpu=True, nbytes=out.nbytes):
                out.copy_to_host(host_out, stream=st)
        else:
            t.copies("d2h", [(out, host_out)], to_device=False)
        return t.finish()

    def _warm_up(self, op, impl: Impl, mode: str, d, label: str) -> None:
        """Warm caches, pages and clocks. A CPU op on arrays just allocated (each size's first
        point) takes several calls to settle, and with one warm call the sweep's point read
        slower than the same point measured again (docs/PERFORMANCE.md, "Honest CPU times"). So
        a CPU op is called for WARM_S (at least 3 calls) before its timed runs."""
        self._run_once(op, impl, mode, d, label)
        if impl.device != "cpu":
            return
        t0, calls = time.perf_counter(), 1
        while calls < 3 or time.perf_counter() - t0 < WARM_S:
            self._run_once(op, impl, mode, d, label)
            calls += 1

    def measure(self, op_name: str, impl: Impl, mode: str, n: int, cancel=None,
                repeats: int | None = None) -> SweepPoint:
        """One point: warm-up, then the median of up to `repeats` runs (fewer when slow)."""
        op = get_op(op_name)
        d = self.data(n, pinned=(mode == "pinned"))
        if isinstance(d, str):
            return SweepPoint(op_name, impl.name, mode, int(n), skipped=d)
        label = f"{op_name} {impl.name}/{mode} N=2^{int(math.log2(n)) if n else 0}"
        compile_ms = None
        key = (impl.name, op_name)
        if key not in self._warm:
            t0 = time.perf_counter()
            self._run_once(op, impl, mode, d, label)  # first call compiles
            if impl.jit:
                compile_ms = (time.perf_counter() - t0) * 1e3
            self._warm.add(key)
        self._warm_up(op, impl, mode, d, label)
        runs: list[Timings] = []
        t_start = time.perf_counter()
        want = max(1, int(repeats)) if repeats else self.repeats
        while len(runs) < want:
            if runs and cancelled(cancel):
                break
            runs.append(self._run_once(op, impl, mode, d, label))
            if len(runs) >= 3 and time.perf_counter() - t_start > self.budget_s:
                break
        return measured_point(op, impl.name, mode, n, runs, compile_ms, self.backend, label)
