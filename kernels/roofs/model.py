"""The roofs of one device and where a piece of counted work sits under them.

A roof is a rate the device reaches at best: memory bandwidth (bytes read + written per second)
and arithmetic peaks per number type (float32 and float64 flops, an FMA counting 2; int32
operations, a multiply-add counting 2). A kernel doing `ops` operations of one type on `bytes` of
memory has arithmetic intensity AI = ops / bytes; the roof that bounds it is
min(peak, AI × bandwidth), the classic roofline (Williams, Waterman & Patterson, 2009).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

KINDS = ("f32", "f64", "int32")
KIND_TITLES = {"f32": "float32", "f64": "float64", "int32": "int32"}
# the field of Roofs holding each kind's peak
PEAK_FIELDS = {"f32": "f32_flops", "f64": "f64_flops", "int32": "int32_ops"}
# the roofs by name: the bandwidth and each kind's peak (Roofs.details["roofs"] is keyed so)
ROOF_NAMES = ("bandwidth",) + KINDS


def spread(times) -> float | None:
    """The spread of a probe's repeats: (slowest - fastest) / median. The roof is the fastest
    run; a point (the median of its own runs, timed the same way) can land above it by the
    method's own run-to-run range, and no further unless the roof is stale."""
    times = sorted(t for t in times if t)
    if len(times) < 2:
        return None
    mid = len(times) // 2
    median = times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2
    return (times[-1] - times[0]) / median


def roof_entry(probe: str, spread: float | None, repeats: int, method: str, **more) -> dict:
    """How one roof was set, for Roofs.details["roofs"][name]: the probe, the spread of its
    repeats, how many, and the timing method."""
    return dict(probe=probe, spread=spread, repeats=int(repeats), method=method, **more)


@dataclass(frozen=True)
class Roofs:
    """Rates measured on one device (None: not measured; `note` says why).

    bandwidth_Bps: bytes per second of a device copy (read + written); f32_flops, f64_flops:
    floating-point operations per second; int32_ops: int32 operations per second."""
    backend: str                    # "cuda" or "cpu"
    device: str
    bandwidth_Bps: float | None = None
    f32_flops: float | None = None
    f64_flops: float | None = None
    int32_ops: float | None = None
    measured_at: str = ""           # ISO 8601, UTC
    note: str = ""                  # what is missing and why, in plain words; "" when complete
    key: str = ""                   # the cache key: device, driver and numba versions
    simulated: bool = False
    details: dict = field(default_factory=dict)   # per probe: sizes, times, chains

    def peak(self, kind: str) -> float | None:
        if kind not in PEAK_FIELDS:
            raise KeyError(f"unknown kind of work {kind!r}; kinds are {KINDS}")
        return getattr(self, PEAK_FIELDS[kind])

    @property
    def measured(self) -> bool:
        """Whether any rate was measured."""
        return any(v for v in (self.bandwidth_Bps, self.f32_flops, self.f64_flops, self.int32_ops))

    @property
    def complete(self) -> bool:
        return all(v for v in (self.bandwidth_Bps, self.f32_flops, self.f64_flops, self.int32_ops))

    def ridge(self, kind: str) -> float | None:
        """The arithmetic intensity (ops per byte) where the bandwidth slope meets the peak."""
        p = self.peak(kind)
        return p / self.bandwidth_Bps if p and self.bandwidth_Bps else None

    def bound(self, kind: str, intensity: float | None) -> tuple[float | None, str]:
        """(the rate that bounds work of `kind` at this AI, which roof: "memory" or "compute").

        With one roof missing the other bounds alone; with both missing, (None, "")."""
        peak = self.peak(kind)
        slope = intensity * self.bandwidth_Bps if intensity and self.bandwidth_Bps else None
        if intensity == 0 and self.bandwidth_Bps:
            return None, "memory"            # no operations: only the bandwidth can bound it
        if peak and slope:
            return (slope, "memory") if slope < peak else (peak, "compute")
        if peak:
            return peak, "compute"
        if slope:
            return slope, "memory"
        return None, ""

    def how(self, name: str) -> dict:
        """How roof `name` ("bandwidth" or a kind) was set: {probe, spread, repeats, method}
        ({} for roofs measured before the probes kept it)."""
        entry = self.details.get("roofs", {}).get(name) if isinstance(self.details, dict) else None
        return entry if isinstance(entry, dict) else {}

    def spread(self, name: str) -> float:
        """Roof `name`'s spread (0 when unknown): how far a point may sit above it."""
        s = self.how(name).get("spread")
        return float(s) if isinstance(s, (int, float)) and s > 0 else 0.0

    @property
    def method(self) -> str:
        """How the probes were timed, in the timing panel's words ("" when not recorded)."""
        m = self.details.get("method", "") if isinstance(self.details, dict) else ""
        return m if isinstance(m, str) else ""

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Roofs:
        """The Roofs a dict of as_dict() holds; ValueError when it is not one."""
        if not isinstance(d, dict):
            raise ValueError("roofs: not a mapping")
        try:
            out = cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})
        except TypeError as exc:
            raise ValueError(f"roofs: {exc}") from None
        for name in ("bandwidth_Bps", "f32_flops", "f64_flops", "int32_ops"):
            v = getattr(out, name)
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0):
                raise ValueError(f"roofs: {name} is {v!r}, not a positive number")
        if not isinstance(out.device, str) or not isinstance(out.note, str) \
                or not isinstance(out.details, dict):
            raise ValueError("roofs: device, note or details of the wrong type")
        return out


def missing_note(roofs: Roofs) -> str:
    """The words for the roofs that are missing ("" when all are there)."""
    gone = [n for n, v in (("bandwidth", roofs.bandwidth_Bps), ("float32", roofs.f32_flops),
                           ("float64", roofs.f64_flops), ("int32", roofs.int32_ops)) if not v]
    return f"not measured: {', '.join(gone)}" if gone else ""


def run_steps(steps):
    """Run a generator of probe steps to its end; its return value (a probe's fields)."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value
