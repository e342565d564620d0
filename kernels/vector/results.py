"""What a throughput sweep yields, as frozen dataclasses: SweepReferences (this machine's copy
bandwidths), then a SweepPoint per step, ImplUnavailableNotice, SweepNotice and SweepError, and the
SweepSummary the generator returns; consumers tell them apart with isinstance.
SweepPoint.as_dict() is the export layout. `measured_point` turns timed runs into a point;
`crossover` reads the points after a sweep."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..roofs.work import Work, record
from ..timing import Timings
from .ops import CPU_IMPLS


@dataclass(frozen=True)
class SweepReferences:
    """The machine's copy bandwidths in GB/s, measured after the first size's points (keys as
    kernels.transfer names them: "d2d-copy", "h2d-pinned", "d2h-pinned", "cpu-copy"), the copy
    size, and what set the device copy ceiling ("probe" or an implementation; None when nothing did)."""
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
        t.method = " / ".join(sorted({r.method for r in runs}))    # how the runs were timed
    # the roofline's point: the op's flops and the bytes it reads and writes in device memory
    kind = "f64" if op.reduction else "f32"          # dot sums its products in float64
    record(t, Work(f"{op.name} ({impl})", kind, op.flops * n, op.bytes_per_element * n,
                   how=f"{op.flops} flop × {n:,} elements, {op.bytes_per_element} B each"))
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
