"""Work counted from the algorithm, recorded with a job's Timings, and where it sits on the roofline.

A kernel that knows what it computed adds a `Work` to its Timings (`record(timings, Work(...))`):
the operations its algorithm performs (of one number type), the bytes it must move at least, and
which timed phase it ran in. `place(timings, roofs)` turns each into a `Placement`: arithmetic
intensity, achieved rate = ops / measured time, and the % of the roof that bounds it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from .model import KIND_TITLES, KINDS, Roofs


@dataclass(frozen=True)
class Work:
    """What one kernel of a job did. `ops` counts operations of `kind` (a multiply-add = 2),
    `bytes` what it must read and write at least. Its time is the job's `phase` less the detail
    sub-phases named in `minus` (e.g. the colouring that shares the Mandelbrot frame's kernel
    phase), or the one sub-phase named `detail`; `seconds`, when given, is the time itself."""
    name: str
    kind: str
    ops: float
    bytes: float
    phase: str = "kernel"
    minus: tuple = ()
    detail: str = ""
    seconds: float | None = None
    how: str = ""               # how it was counted, in words, for the hover text

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind of work {self.kind!r}; kinds are {KINDS}")
        if self.ops < 0 or self.bytes < 0:
            raise ValueError(f"work {self.name!r}: negative count")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["minus"] = list(self.minus)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Work:
        d = dict(d)
        d["minus"] = tuple(d.get("minus", ()))
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def record(timings, *works: Work):
    """Add counted work to a job's Timings (or a JobTimer's); returns the Timings."""
    t = getattr(timings, "timings", timings)
    t.work.extend(works)
    return t


def work_seconds(phases_ms: dict, detail: dict, work: Work) -> float | None:
    """The seconds `work` ran, from a job's phases (None when the phase was not timed)."""
    if work.seconds is not None:
        return work.seconds
    ms = detail.get(work.detail) if work.detail else phases_ms.get(work.phase)
    if ms is None:
        return None
    ms -= sum(detail.get(m) or 0.0 for m in work.minus)
    return ms * 1e-3 if ms > 0 else None


@dataclass(frozen=True)
class Placement:
    """One point of the roofline: `work` of a job `label` and its rates under `roofs`."""
    label: str
    backend: str
    work: Work
    seconds: float | None
    intensity: float | None        # ops per byte (None: no bytes counted)
    rate: float | None             # ops per second achieved
    bytes_rate: float | None       # bytes per second achieved
    roof: float | None             # the rate that bounds this work (ops/s, or B/s with no ops)
    bound: str                     # "memory", "compute" or "" (no roof)
    percent: float | None          # achieved / roof × 100

    @property
    def plottable(self) -> bool:
        return bool(self.rate and self.intensity)

    def as_dict(self) -> dict:
        return {"name": self.work.name, "kind": self.work.kind, "ops": self.work.ops,
                "bytes": self.work.bytes, "seconds": self.seconds, "intensity": self.intensity,
                "ops_per_s": self.rate, "bytes_per_s": self.bytes_rate, "roof": self.bound or None,
                "roof_per_s": self.roof, "roof_percent": self.percent, "how": self.work.how}


def place_one(work: Work, seconds: float | None, roofs: Roofs | None, label: str = "",
              backend: str = "") -> Placement:
    ai = work.ops / work.bytes if work.bytes else None
    rate = work.ops / seconds if seconds and work.ops else None
    brate = work.bytes / seconds if seconds and work.bytes else None
    roof, bound, pct = None, "", None
    if roofs is not None:
        if work.ops == 0:                   # a pure copy: only the bandwidth bounds it
            roof, bound = roofs.bandwidth_Bps, ("memory" if roofs.bandwidth_Bps else "")
            pct = 100.0 * brate / roof if roof and brate else None
        else:
            roof, bound = roofs.bound(work.kind, ai)
            pct = 100.0 * rate / roof if roof and rate else None
    return Placement(label, backend, work, seconds, ai, rate, brate, roof, bound, pct)


def place(timings, roofs: Roofs | None) -> list[Placement]:
    """Every counted work of a job's Timings, placed under `roofs` (None: rates only)."""
    out = []
    for w in getattr(timings, "work", ()):
        s = work_seconds(timings.phases_ms, timings.detail, w)
        out.append(place_one(w, s, roofs, timings.label, timings.backend))
    return out


def si(value: float | None, unit: str) -> str:
    """1.23 G{unit}, for hover texts and tables."""
    if value is None:
        return "—"
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def describe(p: Placement) -> str:
    """The hover text of a point: kernel, work, time, rate and % of the roof that bounds it."""
    w = p.work
    unit = "op" if w.kind == "int32" else "flop"
    lines = [f"{p.label} — {w.name}" if p.label else w.name,
             f"work: {si(w.ops, unit)} {KIND_TITLES[w.kind]}, {si(w.bytes, 'B')} moved"
             + (f" (AI {p.intensity:.3g} {unit}/B)" if p.intensity else "")]
    if w.how:
        lines.append(f"counted as {w.how}")
    lines.append(f"time: {p.seconds * 1e3:.3g} ms" if p.seconds else "time: not measured")
    if p.rate or p.bytes_rate:
        lines.append(f"achieved: {si(p.rate, unit + '/s') if w.ops else si(p.bytes_rate, 'B/s')}")
    if p.percent is not None:
        which = "bandwidth" if p.bound == "memory" else f"{KIND_TITLES[w.kind]} peak"
        lines.append(f"{p.percent:.1f} % of the {which} roof ({si(p.roof, (unit if w.ops else 'B') + '/s')})")
    elif p.rate:
        lines.append("no roof measured for it")
    return "\n".join(lines)
