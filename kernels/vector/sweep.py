"""Measure vector-op throughput over sizes, implementations and modes, one point at a time.

`sweep()` is a generator so it runs as a generator job: each yielded item is a progress report,
other views are served between items, and cancelling takes effect before the next point (or the
next repeat). Items are frozen dataclasses defined here (SweepReferences first: this machine's
copy bandwidths; then SweepPoint per step, ImplUnavailableNotice, SweepNotice, SweepError);
consumers tell them apart with isinstance. SweepPoint.as_dict() is the export layout.

Modes:
  kernel    data already where the implementation computes (device arrays, or NumPy arrays for the
            CPU implementations); only the compute is timed (CUDA events, or a wall clock).
  pinned    end to end from and to page-locked host buffers: h2d, kernel, d2h on one stream.
  pageable  end to end from and to ordinary NumPy arrays, the seed's way.

Bandwidth: kernel mode counts the op's bytes read + written per element; the end-to-end modes
count the bytes crossing the bus (inputs in, result out) over h2d + kernel + d2h.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field, replace

import numpy as np

from .. import buffers as _buffers
from ..backend import first_line
from ..buffers import BufferPool, OutOfDeviceMemory, free_device_bytes
from ..timing import JobTimer, Timings
from .ops import CPU_IMPLS, OPS, SCALAR, Impl, ImplUnavailable, get_op
from .registry import implementations

MODES = ("kernel", "pinned", "pageable")
MIN_EXP = 10
# The reference copies run at 256 MiB, well beyond any CPU's caches (at 64 MiB a 16-core host's
# copy partly ran in its caches: twice the bandwidth its memory gives) and large enough for the GPU
# copies to reach their plateau; halved while the probe's buffers do not fit, down to MIN_REF_BYTES.
REF_BYTES = 256 * 2**20
MIN_REF_BYTES = 16 * 2**20
SIM_REF_BYTES = 2**12
REF_REPEATS = 3        # 4 runs of each probe with the warm-up: about a second at 256 MiB
HOST_MARGIN = 0.8      # use at most this share of the available host memory
DEVICE_MARGIN = 0.9


# ---- what a sweep yields -----------------------------------------------------------------------
@dataclass(frozen=True)
class SweepReferences:
    """The machine's copy bandwidths in GB/s, measured first (keys as kernels.transfer names them:
    "d2d-copy", "h2d-pinned", "d2h-pinned", "cpu-copy"), the copy size, and what set the device
    copy ceiling ("probe" or an implementation; None when nothing did)."""
    refs: dict
    bytes: int
    copy_ceiling_by: str | None = None


@dataclass(frozen=True)
class SweepPoint:
    """One (op, implementation, mode, N): medians of the phases, the rates, or why it was skipped.

    time_ms is what the rates are computed over: the kernel in kernel mode, h2d + kernel + d2h end
    to end. None means not measured (skipped, or the simulator's missing event timing), never 0."""
    op: str
    impl: str
    mode: str
    N: int
    skipped: str | None = None     # why it was not measured
    h2d_ms: float | None = None
    kernel_ms: float | None = None
    d2h_ms: float | None = None
    total_ms: float | None = None  # one whole run, timer included
    compile_ms: float | None = None
    time_ms: float | None = None
    gbs: float | None = None
    gelems: float | None = None
    bytes: int = 0                 # the op's bytes read + written
    bus_bytes: int = 0             # bytes over the bus end to end (0 in kernel mode)
    repeats: int = 0
    note: str | None = None        # why a measured point has no time
    index: int = 0                 # 1-based position in the sweep (0 outside a sweep)
    total: int = 0
    timings: Timings | None = field(default=None, repr=False, compare=False)
    # the fastest and slowest run's time_ms (the spread behind the median; None when not timed)
    min_ms: float | None = None
    max_ms: float | None = None

    @property
    def measured(self) -> bool:
        return self.skipped is None and self.repeats > 0

    @property
    def phases_ms(self) -> dict:
        """The medians by phase name as kernels.timing names them ({} when skipped)."""
        if not self.measured:
            return {}
        return {"h2d": self.h2d_ms, "kernel": self.kernel_ms, "d2h": self.d2h_ms,
                "total": self.total_ms, "compile": self.compile_ms}

    def rate(self, metric: str) -> float | None:
        """"GB/s" or "Gelem/s", the column names of the exports."""
        return {"GB/s": self.gbs, "Gelem/s": self.gelems}[metric]

    def rate_range(self, metric: str) -> tuple[float, float] | None:
        """(lowest, highest) rate over the repeats: the rate of the slowest and of the fastest run,
        widened to include the median's; None when the runs were not timed."""
        rate = self.rate(metric)
        if not rate or not self.time_ms or not self.min_ms or not self.max_ms:
            return None
        per_ms = rate * self.time_ms           # a rate is proportional to 1 / time
        return min(per_ms / self.max_ms, rate), max(per_ms / self.min_ms, rate)

    def as_dict(self) -> dict:
        """The point for CSV/JSON export, in the layout exported files have always had (the Timings
        object left out: its numbers are the phases)."""
        out = {"type": "point", "op": self.op, "impl": self.impl, "mode": self.mode, "N": self.N,
               "skipped": self.skipped, "phases_ms": self.phases_ms, "ms": self.time_ms,
               "GB/s": self.gbs, "Gelem/s": self.gelems, "bytes": self.bytes,
               "bus_bytes": self.bus_bytes, "repeats": self.repeats}
        if self.note is not None:
            out["note"] = self.note
        out["index"], out["total"] = self.index, self.total
        return out


@dataclass(frozen=True)
class ImplUnavailableNotice:
    """An implementation cannot run here; its points are skipped with this reason."""
    impl: str
    reason: str


@dataclass(frozen=True)
class SweepNotice:
    """Something worth telling that does not stop the sweep."""
    message: str


@dataclass(frozen=True)
class SweepError:
    """The GPU failed; the sweep stops after this item."""
    message: str


@dataclass(frozen=True)
class SweepSummary:
    """What the sweep generator returns."""
    points: int
    total: int
    cancelled: bool = False
    error: str | None = None


SweepItem = SweepReferences | SweepPoint | ImplUnavailableNotice | SweepNotice | SweepError


def host_free_bytes() -> int | None:
    """Host memory available to a new allocation (a seam the tests patch)."""
    return _buffers.host_available_bytes()


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def sizes_up_to(max_exp: int, min_exp: int = MIN_EXP) -> list[int]:
    return [2**k for k in range(min_exp, max_exp + 1)]


def host_bytes_needed(n: int, gpu: bool, pinned: bool) -> int:
    # two random inputs, an output, and for the GPU the pageable result of end-to-end runs;
    # the pinned mode keeps its own page-locked copies of all three
    return 4 * n * ((4 if gpu else 3) + (3 if pinned else 0))


def device_bytes_needed(n: int) -> int:
    return 4 * n * 3


def fit_problem(n: int, gpu: bool, pinned: bool) -> str:
    """Why a size cannot be run here, or "" when it fits in free host (and device) memory."""
    need = host_bytes_needed(n, gpu, pinned)
    free = host_free_bytes()
    if free is not None and need > free * HOST_MARGIN:
        return (f"N = {n:,} needs {_mib(need)} of host memory but only {_mib(free)} is available")
    if gpu:
        need = device_bytes_needed(n)
        free = free_device_bytes()
        if free is not None and need > free * DEVICE_MARGIN:
            return (f"N = {n:,} needs {_mib(need)} of GPU memory but only {_mib(free)} is free")
    return ""


def reference_host_bytes(nbytes: int, gpu: bool) -> int:
    # kernels.transfer.TransferProbe: the source and the CPU copy's destination, and on the GPU a
    # pinned and a pageable buffer for the host<->device copies
    return nbytes * (4 if gpu else 2)


def reference_bytes(gpu: bool, want: int = REF_BYTES) -> int:
    """The size of the reference copies: `want`, halved while the probe does not fit in free host
    (and device: source and destination) memory, never below MIN_REF_BYTES nor above `want`."""
    nbytes = int(want)
    while nbytes > MIN_REF_BYTES:
        host, dev = host_free_bytes(), free_device_bytes() if gpu else None
        host_ok = host is None or reference_host_bytes(nbytes, gpu) <= host * HOST_MARGIN
        dev_ok = dev is None or 2 * nbytes <= dev * DEVICE_MARGIN
        if host_ok and dev_ok:
            break
        nbytes //= 2
    return max(nbytes, min(int(want), MIN_REF_BYTES))


def max_fitting_exponent(gpu: bool, pinned: bool, cap: int = 40) -> int:
    """The largest k with 2^k elements fitting in memory now (at least MIN_EXP)."""
    k = MIN_EXP
    while k < cap and not fit_problem(2 ** (k + 1), gpu, pinned):
        k += 1
    return k


def _cancelled(cancel) -> bool:
    if cancel is None:
        return False
    if callable(cancel) and not hasattr(cancel, "cancelled"):
        return bool(cancel())
    return bool(getattr(cancel, "cancelled", False))


def _stop(cancel):
    """Leave the sweep: raise the worker's Cancelled when the token can, else return quietly."""
    check = getattr(cancel, "check", None)
    if check is not None:
        check()


def _release_device_garbage():
    try:  # hand freed device buffers back now, so the fit check sees them as free
        from numba import cuda
        cuda.current_context().deallocations.clear()
    except Exception:
        pass


class _SizeData:
    """Random inputs and outputs of one size, allocated once and reused by every point."""

    def __init__(self, runner: PointRunner, n: int):
        self.n = n
        self.runner = runner
        pool = runner.pool
        rng = np.random.default_rng(2024 + n)
        # random data, never zeros; inputs in [0.5, 1.5) keep every op away from cancellation
        self.host_in = [pool.host(f"in{j}", (n,), np.float32, pinned=False) for j in range(2)]
        for arr in self.host_in:
            rng.random(out=arr, dtype=np.float32)
            arr += np.float32(0.5)
        self.host_out = pool.host("out", (n,), np.float32, pinned=False)
        self.host_out[:] = 1.0  # touch the pages so the first timed write does not fault them in
        self.dev_in = self.dev_out = None
        self.pin_in = self.pin_out = self.page_out = None
        if runner.gpu:
            self.dev_in = [pool.device(f"d_in{j}", (n,), np.float32) for j in range(2)]
            self.dev_out = pool.device("d_out", (n,), np.float32)
            for d, h in zip(self.dev_in, self.host_in):
                d.copy_to_device(h, stream=runner.stream)
            self.dev_out.copy_to_device(self.host_out, stream=runner.stream)
            self.page_out = pool.host("page_out", (n,), np.float32, pinned=False)
            self.page_out[:] = 1.0
            runner.stream.synchronize()

    def ensure_pinned(self):
        if self.pin_in is not None:
            return
        pool = self.runner.pool
        self.pin_in = [pool.host(f"pin_in{j}", (self.n,), np.float32) for j in range(2)]
        for p, h in zip(self.pin_in, self.host_in):
            p[:] = h
        self.pin_out = pool.host("pin_out", (self.n,), np.float32)
        self.pin_out[:] = 1.0

    def arrays(self, op, where: str):
        """(ins, out) for an op on the host (CPU implementations) or the device."""
        k = len(op.inputs)
        src, dst = (self.host_in, self.host_out) if where == "host" else (self.dev_in, self.dev_out)
        ins = tuple(src[:k])
        if op.reduction:
            return ins, self.result(where)
        return ins, (ins[1] if op.inplace else dst)

    def result(self, where: str):
        """The one-element float64 array a reduction writes its sum to: on the "host" (CPU
        implementations), the "device", or the "pinned" / "pageable" copy end-to-end runs fetch."""
        pool = self.runner.pool
        if where == "device":
            return pool.device("d_res", (1,), np.float64)
        return pool.host(f"{where}_res", (1,), np.float64, pinned=(where == "pinned"))

    def host_out_for(self, op, mode: str):
        """Where an end-to-end run copies the op's output back to."""
        if op.reduction:
            return self.result(mode)
        return self.pin_out if mode == "pinned" else self.page_out


class PointRunner:
    """Measures single points; holds the buffers of the current size and the job's stream."""

    def __init__(self, backend, repeats: int = 5, budget_s: float = 0.5):
        self.backend = backend
        self.gpu = bool(getattr(backend, "is_gpu", False))
        self.pool = BufferPool(backend)
        self.repeats = max(1, int(repeats))
        self.budget_s = budget_s
        self.stream = None
        if self.gpu:
            from numba import cuda
            self.stream = cuda.stream()
        self._data: _SizeData | None = None
        self._warm: set = set()

    def data(self, n: int, pinned: bool) -> _SizeData | str:
        """The buffers for size n, or the reason they do not fit in memory."""
        d = self._data
        if d is not None and d.n == n:
            if pinned and self.gpu and d.pin_in is None:
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
            d = _SizeData(self, n)
            if pinned and self.gpu:
                d.ensure_pinned()
        except OutOfDeviceMemory as exc:
            self.release()
            return str(exc)
        self._data = d
        return d

    def release(self):
        self._data = None
        self.pool.clear()
        if self.gpu:
            _release_device_garbage()

    # ---- one run ------------------------------------------------------------------------------
    def _run_once(self, op, impl: Impl, mode: str, d: _SizeData, label: str) -> Timings:
        fn = impl.ops[op.name]
        if impl.device == "cpu":
            ins, out = d.arrays(op, "host")
            t = JobTimer(self.backend, None, label)
            with t.phase("kernel"):
                fn(ins, out, SCALAR)
            return t.finish()
        ins, out = d.arrays(op, "device")
        st = self.stream
        t = JobTimer(self.backend, st, label)
        if mode == "kernel":
            with t.phase("kernel", gpu=True):
                fn(ins, out, SCALAR, st)
            return t.finish()
        host_ins = d.pin_in if mode == "pinned" else d.host_in
        host_out = d.host_out_for(op, mode)
        with t.phase("h2d", gpu=True, nbytes=sum(a.nbytes for a in ins)):
            for dev, host in zip(ins, host_ins):
                dev.copy_to_device(host, stream=st)
        with t.phase("kernel", gpu=True):
            fn(ins, out, SCALAR, st)
        with t.phase("d2h", gpu=True, nbytes=out.nbytes):
            out.copy_to_host(host_out, stream=st)
        return t.finish()

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
        self._run_once(op, impl, mode, d, label)      # warm caches, pages, clocks
        runs: list[Timings] = []
        t_start = time.perf_counter()
        want = max(1, int(repeats)) if repeats else self.repeats
        while len(runs) < want:
            if runs and _cancelled(cancel):
                break
            runs.append(self._run_once(op, impl, mode, d, label))
            if len(runs) >= 3 and time.perf_counter() - t_start > self.budget_s:
                break
        return measured_point(op, impl.name, mode, n, runs, compile_ms, self.backend, label)


def measured_point(op, impl: str, mode: str, n: int, runs: list[Timings], compile_ms, backend,
                   label: str) -> SweepPoint:
    """The point of `runs`: median phases, and the rates over the kernel (kernel mode) or over
    h2d + kernel + d2h (end to end)."""
    phases = {}
    for p in ("h2d", "kernel", "d2h", "total"):
        vals = [r.phases_ms.get(p) for r in runs if r.phases_ms.get(p) is not None]
        phases[p] = statistics.median(vals) if vals else None
    phases["compile"] = compile_ms
    if mode == "kernel":
        ms = phases["kernel"]
        nbytes = op.bytes_per_element * n
    else:
        parts = [phases[p] for p in ("h2d", "kernel", "d2h")]
        ms = None if any(v is None for v in parts) else sum(parts)
        nbytes = op.bus_bytes_per_element * n
    run_ms = [_run_time(r, mode) for r in runs]
    run_ms = [v for v in run_ms if v is not None]
    note = None
    if ms is None and runs:
        note = ("not timed: the CUDA simulator has no event timing"
                if getattr(backend, "simulated", False) else "not timed")
    t = Timings(backend=getattr(backend, "name", str(backend)), label=label)
    for p, v in phases.items():
        t.phases_ms[p] = v
    if runs:
        t.bytes = dict(runs[0].bytes)
    return SweepPoint(
        op.name, impl, mode, int(n), None, phases["h2d"], phases["kernel"], phases["d2h"],
        phases["total"], compile_ms, ms,
        gbs=nbytes / (ms * 1e-3) / 1e9 if ms else None,
        gelems=n / (ms * 1e-3) / 1e9 if ms else None,
        bytes=op.bytes_per_element * n,
        bus_bytes=op.bus_bytes_per_element * n if mode != "kernel" else 0,
        repeats=len(runs), note=note, timings=t,
        min_ms=min(run_ms) if run_ms else None, max_ms=max(run_ms) if run_ms else None)


def _run_time(run: Timings, mode: str) -> float | None:
    """One run's time_ms: the kernel in kernel mode, h2d + kernel + d2h end to end."""
    if mode == "kernel":
        return run.phases_ms.get("kernel")
    parts = [run.phases_ms.get(p) for p in ("h2d", "kernel", "d2h")]
    return None if any(v is None for v in parts) else sum(parts)


def _resolve_impls(backend, impls) -> list[Impl]:
    known = {i.name: i for i in implementations(backend)}
    out = []
    for item in impls if impls is not None else known.values():
        if isinstance(item, Impl):
            out.append(item)
        elif item in known:
            out.append(known[item])
        else:
            raise ValueError(f"unknown implementation {item!r}; choose from: {', '.join(known)}")
    return out


def add_copy_ceiling(refs: dict, backend, n: int, runner: PointRunner) -> str | None:
    """Raise refs["d2d-copy"] to the fastest copy any GPU implementation made at n elements.

    The probe in kernels/transfer.py times the driver's copy and simple copy kernels; on an H100 a
    CUDA C++ copy with four loads in flight beat them all (2.63 against 2.25 TB/s in one run). The
    ceiling is what this machine can copy, by whatever means, so the other ops are compared to that.
    Returns the name of what set it ("probe" or an implementation), None when nothing was measured.
    """
    if not getattr(backend, "is_gpu", False) or getattr(backend, "simulated", False):
        return None
    best, who = refs.get("d2d-copy") or 0.0, "probe"
    for impl in implementations(backend):
        if impl.device != "gpu" or not impl.available or "kernel" not in impl.modes:
            continue
        try:
            point = runner.measure("copy", impl, "kernel", n)
        except Exception:
            continue  # an implementation that cannot copy here sets no ceiling
        gbs = point.gbs if not point.skipped else None
        if gbs and gbs > best:
            best, who = gbs, impl.name
    refs["d2d-copy"] = best or None
    return who if best else None


def plan(backend, ops, impls, modes) -> list[tuple]:
    """The (op, impl, mode) combinations a sweep measures: CPU implementations in kernel mode only,
    and each op only in the implementations that have it (dot: see ops.OPS)."""
    gpu = bool(getattr(backend, "is_gpu", False))
    combos = []
    for op in ops:
        defined = get_op(op)
        for impl in impls:
            if not defined.implemented_by(impl.name):
                continue
            for mode in modes:
                if mode not in MODES:
                    raise ValueError(f"unknown mode {mode!r}; choose from: {', '.join(MODES)}")
                if mode not in impl.modes or (impl.device == "gpu" and not gpu):
                    continue
                combos.append((op, impl, mode))
    return combos


def sweep(backend, ops, impls=None, modes=MODES, sizes=None, cancel=None, *, repeats: int = 5,
          ref_bytes: int = REF_BYTES, budget_s: float = 0.5):
    """Yield the references, then one SweepPoint per (size, op, impl, mode); return a SweepSummary.

    Items (see SweepItem): SweepReferences first; a SweepPoint per step (with `skipped` saying why
    when it could not run); ImplUnavailableNotice when an implementation turns out unusable (its
    later points are skipped with that reason); SweepNotice for what did not stop the sweep;
    SweepError when the GPU failed, after which the sweep stops.
    """
    from ..transfer import measure  # imports numba.cuda: only when a sweep runs
    ops = list(ops)
    impl_list = _resolve_impls(backend, impls)
    sizes = list(sizes) if sizes is not None else sizes_up_to(20)
    combos = plan(backend, ops, impl_list, modes)
    total = len(combos) * len(sizes)

    if _cancelled(cancel):
        _stop(cancel)
        return SweepSummary(0, total, cancelled=True)
    gpu = bool(getattr(backend, "is_gpu", False))
    if getattr(backend, "simulated", False):
        # the simulator runs a Python thread per CUDA thread: 1024 elements are plenty there
        ref_bytes = min(ref_bytes, SIM_REF_BYTES)
    else:
        ref_bytes = reference_bytes(gpu, ref_bytes)
    try:
        refs = measure(backend, ref_bytes, repeats=REF_REPEATS)
        if gpu:   # the probe's buffers are garbage now: free them before the first size's fit check
            _release_device_garbage()
    except Exception as exc:
        refs = {}
        yield SweepNotice(f"the reference bandwidths could not be measured: {first_line(exc)}")
    runner = PointRunner(backend, repeats=repeats, budget_s=budget_s)
    ceiling_by = None
    if refs and gpu:
        try:
            ceiling_by = add_copy_ceiling(refs, backend, ref_bytes // 4, runner)
            runner.release()
        except Exception as exc:
            yield SweepNotice(f"the copy ceiling could not be measured: {first_line(exc)}")
    yield SweepReferences(refs, ref_bytes, ceiling_by)
    for op in ops:
        lacking = [i.name for i in impl_list if not get_op(op).implemented_by(i.name)]
        if lacking:
            yield SweepNotice(f"{op} is not implemented by {', '.join(lacking)}: left out")

    dead: dict[str, str] = {i.name: i.reason or "not available here"
                            for i in impl_list if not i.available}
    for name, reason in dead.items():
        yield ImplUnavailableNotice(name, reason)
    index = 0
    try:
        for n in sizes:
            for op, impl, mode in combos:
                if _cancelled(cancel):
                    _stop(cancel)
                    return SweepSummary(index, total, cancelled=True)
                index += 1
                if impl.name in dead:
                    point = SweepPoint(op, impl.name, mode, int(n), skipped=dead[impl.name])
                else:
                    try:
                        point = runner.measure(op, impl, mode, n, cancel)
                    except ImplUnavailable as exc:
                        dead[impl.name] = str(exc)
                        yield ImplUnavailableNotice(impl.name, str(exc))
                        point = SweepPoint(op, impl.name, mode, int(n), skipped=str(exc))
                    except Exception as exc:  # a CUDA error leaves the context unusable: stop
                        msg = (f"{impl.name} failed on {op} ({mode}, N = {n:,}): "
                               f"{first_line(exc)}; the sweep stopped")
                        yield SweepError(msg)
                        return SweepSummary(index - 1, total, error=msg)
                yield replace(point, index=index, total=total)
    finally:
        runner.release()
    return SweepSummary(index, total)


# ---- after a sweep -----------------------------------------------------------------------------
def crossover(points, op: str | None = None) -> int | None:
    """The smallest N from which the best GPU end-to-end run beats the best CPU run at every
    larger N measured (elements per second, same op); None when it never does or is unknown.
    `points` may hold any sweep items: only measured SweepPoints count."""
    best_gpu: dict[int, float] = {}
    best_cpu: dict[int, float] = {}
    for p in points:
        if not isinstance(p, SweepPoint) or p.skipped or not p.gelems:
            continue
        if op is not None and p.op != op:
            continue
        if p.impl in CPU_IMPLS:
            best_cpu[p.N] = max(best_cpu.get(p.N, 0.0), p.gelems)
        elif p.mode in ("pinned", "pageable"):
            best_gpu[p.N] = max(best_gpu.get(p.N, 0.0), p.gelems)
    common = sorted(set(best_gpu) & set(best_cpu))
    if not common:
        return None
    answer = None
    for n in reversed(common):
        if best_gpu[n] > best_cpu[n]:
            answer = n
        else:
            break
    return answer


__all__ = ["MODES", "sweep", "crossover", "PointRunner", "fit_problem", "max_fitting_exponent",
           "reference_bytes", "sizes_up_to", "host_free_bytes", "free_device_bytes", "OPS",
           "SweepReferences", "SweepPoint", "ImplUnavailableNotice", "SweepNotice", "SweepError",
           "SweepSummary", "SweepItem"]
