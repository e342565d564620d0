"""The roofline panel's model: the roofs of each backend, the jobs placed under them, the words.

Free of Qt: the panel (explorer/roofline_panel.py) draws what this holds. Jobs arrive as Timings
with counted work (kernels/roofs/work.py); each work is kept with its measured time, and placed
under the roofs of the backend it ran on whenever the roofs arrive or change. A point above its
roof by more than the roof's spread (kernels/roofs/hold.py) makes the roofs stale: `stale_reason`
says so, the panel asks for them again once the app is idle, and a point that still beats the
roofs measured after it is said in the note, not measured against again.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from kernels.roofs import KIND_TITLES, KINDS, Roofs
from kernels.roofs.hold import UPPER_BOUND, beats
from kernels.roofs.work import Placement, describe, place_one, si, work_seconds

HISTORY = 200               # points kept per backend
WHERE = {"cuda": "GPU", "cpu": "CPU"}
X_RANGE = (1 / 64, 4096.0)  # arithmetic intensities drawn at least (ops per byte)
# and at most: a kernel that moves almost nothing (Monte Carlo π) sits at the right edge
X_LIMITS = (1e-3, 1e5)


@dataclass(frozen=True)
class Point:
    """One kernel of one job, as it ran."""
    source: str | None          # the view it came from
    label: str                  # the job
    backend: str
    work: object                # kernels.roofs.work.Work
    seconds: float | None
    serial: int                 # arrival order: the newest job's points are highlighted


class RooflineModel:
    def __init__(self, history: int = HISTORY):
        self.points: dict[str, deque] = {}
        self.roofs: dict[str, Roofs | None] = {}
        self.measuring: set[str] = set()
        self.failed: dict[str, str] = {}
        # backend -> why its roofs are to be measured: asked for, measured once the app is idle
        self.waiting: dict[str, str] = {}
        # backend -> the newest point when a stale roof's re-measure was asked; points up to it
        # that beat the new roofs too are said, never a reason to measure yet again
        self._asked_at: dict[str, int] = {}
        self._excused: dict[str, int] = {}
        self.shown: str | None = None          # the backend drawn
        self.gpu_present = True
        self._serial = 0
        self._history = history

    # ---- data ---------------------------------------------------------------------------------
    def add(self, timings, source: str | None = None) -> int:
        """Keep every counted work of a job; returns how many points it added."""
        works = list(getattr(timings, "work", ()))
        if not works:
            return 0
        self._serial += 1
        backend = timings.backend
        q = self.points.setdefault(backend, deque(maxlen=self._history))
        for w in works:
            s = work_seconds(timings.phases_ms, timings.detail, w)
            q.append(Point(source, timings.label, backend, w, s, self._serial))
        self.shown = backend
        return len(works)

    def set_roofs(self, backend: str, roofs: Roofs | None):
        self.roofs[backend] = roofs
        self.measuring.discard(backend)
        self.waiting.pop(backend, None)
        self.failed.pop(backend, None)
        if backend in self._asked_at:
            self._excused[backend] = self._asked_at.pop(backend)

    def set_failed(self, backend: str, message: str):
        self.measuring.discard(backend)
        self.waiting.pop(backend, None)
        self._asked_at.pop(backend, None)
        self.failed[backend] = message

    def want(self, backend: str, why: str = "", stale: bool = False):
        """Ask for `backend`'s roofs to be measured once the app is idle; `stale`: because a
        point beat them."""
        self.waiting[backend] = why
        if stale:
            self._asked_at[backend] = self._serial

    def start_measuring(self, backend: str):
        self.waiting.pop(backend, None)
        self.measuring.add(backend)

    def stopped(self, backend: str):
        """The measurement was cancelled: wanted again at the next idle moment."""
        if backend in self.measuring:
            self.measuring.discard(backend)
            self.waiting.setdefault(backend, "")

    # ---- roofs that hold ----------------------------------------------------------------------
    def beaten(self, backend: str | None = None) -> list[tuple[Point, Placement, object]]:
        """The points above their roof by more than its spread: (point, placement, Beaten)."""
        roofs = self.roofs.get(backend or self.shown)
        out = []
        for p, pl in self.placements(backend):
            b = beats(pl, roofs)
            if b is not None:
                out.append((p, pl, b))
        return out

    def stale_reason(self, backend: str | None = None) -> str | None:
        """Why `backend`'s roofs should be measured again (a point beats them beyond their
        spread, and not one that beat roofs measured after it), or None."""
        backend = backend or self.shown
        roofs = self.roofs.get(backend)
        if roofs is None or roofs.simulated or backend in self.measuring \
                or backend in self.waiting:
            return None
        done = self._excused.get(backend, -1)
        for p, pl, b in self.beaten(backend):
            if p.serial > done:
                return b.words(f"{p.label} — {p.work.name}")
        return None

    def clear(self, backend: str | None = None):
        for b in ([backend] if backend else list(self.points)):
            self.points.pop(b, None)

    # ---- what to draw -------------------------------------------------------------------------
    def placements(self, backend: str | None = None) -> list[tuple[Point, Placement]]:
        backend = backend or self.shown
        roofs = self.roofs.get(backend)
        return [(p, place_one(p.work, p.seconds, roofs, p.label, p.backend))
                for p in self.points.get(backend, ())]

    def latest_serial(self, backend: str | None = None) -> int | None:
        q = self.points.get(backend or self.shown)
        return q[-1].serial if q else None

    def hover_text(self, point: Point, placement: Placement) -> str:
        where = WHERE.get(point.backend, point.backend)
        return f"{describe(placement)}\non the {where}"

    def x_range(self, backend: str | None = None) -> tuple[float, float]:
        lo, hi = X_RANGE
        for _, pl in self.placements(backend):
            if pl.intensity:
                lo, hi = min(lo, pl.intensity / 2), max(hi, pl.intensity * 2)
        return max(lo, X_LIMITS[0]), min(hi, X_LIMITS[1])

    def drawn_x(self, intensity: float, backend: str | None = None) -> tuple[float, bool]:
        """Where a point of this intensity is drawn, and whether it was moved to an edge."""
        lo, hi = self.x_range(backend)
        x = min(max(intensity, lo), hi)
        return x, x != intensity

    def roof_lines(self, backend: str | None = None) -> list[tuple[str, list, list]]:
        """(name, xs, ys) of each roof over the x range: the bandwidth slope up to the highest
        ridge, each peak from its ridge on (or across the range without a bandwidth)."""
        roofs = self.roofs.get(backend or self.shown)
        if roofs is None:
            return []
        lo, hi = self.x_range(backend)
        out = []
        bw = roofs.bandwidth_Bps
        peaks = {k: roofs.peak(k) for k in KINDS if roofs.peak(k)}
        if bw:
            top = max((p / bw for p in peaks.values()), default=hi)
            out.append(("bandwidth", [lo, top], [lo * bw, top * bw]))
        for kind, p in peaks.items():
            start = p / bw if bw else lo
            out.append((kind, [start, max(hi, start * 2)], [p, p]))
        return out

    def y_range(self, backend: str | None = None) -> tuple[float, float] | None:
        ys = [y for _, _, line in self.roof_lines(backend) for y in line]
        ys += [pl.rate for _, pl in self.placements(backend) if pl.rate]
        if not ys:
            return None
        return min(ys) / 2, max(ys) * 3

    def note(self, backend: str | None = None) -> str:
        """What the user should know about the roofs drawn (missing, measuring, failed)."""
        backend = backend or self.shown
        parts = []
        if not self.gpu_present:
            parts.append("no GPU: CPU roofs only")
        if backend is None:
            return "; ".join(parts + ["no job yet: run one in any view"])
        where = WHERE.get(backend, backend)
        roofs = self.roofs.get(backend)
        if backend in self.measuring:
            parts.append(f"measuring the {where}'s roofs…")
        elif backend in self.waiting:
            why = self.waiting[backend]
            parts.append(f"the {where}'s roofs are measured once the app is idle"
                         + (f" (stale: {why})" if why else ""))
        elif backend in self.failed:
            parts.append(f"the {where}'s roofs could not be measured: {self.failed[backend]}")
        elif roofs is None:
            parts.append(f"the {where}'s roofs are not measured yet")
        elif roofs.simulated:
            parts.append("simulator: roofs not measured")
        elif roofs.note:
            parts.append(roofs.note)
        still = [(p, b) for p, _, b in self.beaten(backend)
                 if p.serial <= self._excused.get(backend, -1)]
        if still and backend not in self.measuring and backend not in self.waiting:
            p, b = still[0]
            parts.append(f"{len(still)} point(s) above their roof after it was measured again: "
                         + b.words(f"{p.label} — {p.work.name}"))
        return "; ".join(parts)

    def empty_text(self, backend: str | None = None) -> str:
        """What the plot's empty space means: no job yet, or jobs without a measured time."""
        backend = backend or self.shown
        untimed = sum(1 for _, pl in self.placements(backend) if not pl.rate)
        if untimed:
            roofs = self.roofs.get(backend)
            why = (" (the CUDA simulator times nothing)" if roofs is not None and roofs.simulated
                   else "")
            return f"{untimed} kernel(s) counted but not timed{why}: nothing to place."
        return "Each job of every view appears here as it runs: hover or click a point for its " \
               "kernel, work, time and % of its roof."

    def roofs_text(self, backend: str | None = None) -> str:
        """The measured roofs with their spreads, then how and when they were measured, for the
        panel's caption."""
        roofs = self.roofs.get(backend or self.shown)
        if roofs is None or not roofs.measured:
            return ""
        parts = [f"bandwidth {si(roofs.bandwidth_Bps, 'B/s')}{_pm(roofs, 'bandwidth')}"]
        for k in KINDS:
            unit = "op/s" if k == "int32" else "flop/s"
            parts.append(f"{KIND_TITLES[k]} {si(roofs.peak(k), unit)}{_pm(roofs, k)}")
        when = roofs.measured_at.replace("T", " ")[:16]
        how = [f"measured {when} UTC" if when else "measured"]
        if roofs.method:
            how.append(f"timed by {roofs.method}")
        bw = roofs.how("bandwidth")
        if bw.get("probe"):
            of = f", the best of {bw['probes']} probes" if bw.get("probes") else ""
            how.append(f"bandwidth set by {bw['probe']}{of}")
        return f"{roofs.device}: " + ", ".join(parts) + "\n" + "; ".join(how)

    def roofs_tooltip(self, backend: str | None = None) -> str:
        """Every probe behind the roofs: each bandwidth probe's best rate and spread, and the
        probe and spread of each peak."""
        roofs = self.roofs.get(backend or self.shown)
        if roofs is None or not roofs.measured:
            return ""
        lines = ["± is each roof's spread: (slowest - fastest) / median of its probe's repeats;",
                 "a point above its roof by more than that makes the roofs stale (re-measured)."]
        probes = roofs.details.get("bandwidth") if isinstance(roofs.details, dict) else None
        if isinstance(probes, list) and probes:
            lines.append("Bandwidth probes (best run; spread):")
            for r in sorted(probes, key=lambda r: -(r.get("Bps") or 0)):
                if r.get("Bps"):
                    s = f" ±{100 * r['spread']:.1f} %" if r.get("spread") else ""
                    lines.append(f"  {r.get('probe', '?')}: {si(r['Bps'], 'B/s')}{s}")
                else:
                    lines.append(f"  {r.get('probe', '?')}: {r.get('error', 'not timed')}")
        for k in KINDS:
            h = roofs.how(k)
            if h.get("probe"):
                lines.append(f"{KIND_TITLES[k]} peak: {h['probe']}, {h.get('repeats', '?')} "
                             f"repeats{_pm(roofs, k)}")
        return "\n".join(lines)

    def point_legend(self, backend: str | None = None) -> dict:
        """What the drawn points are, for the legend: the kinds present, and whether any is an
        executed-lane count, moved to the edge, or the newest job's."""
        kinds, executed, moved = [], False, False
        for p, pl in self.placements(backend):
            if not pl.plottable:
                continue
            if p.work.kind not in kinds:
                kinds.append(p.work.kind)
            executed |= UPPER_BOUND in p.work.name
            moved |= self.drawn_x(pl.intensity, backend)[1]
        return {"kinds": [k for k in KINDS if k in kinds], "executed": executed, "moved": moved,
                "any": bool(kinds)}


def _pm(roofs: Roofs, name: str) -> str:
    s = roofs.spread(name)
    return f" ±{100 * s:.1f} %" if s else ""
