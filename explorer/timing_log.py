"""Every view's timing history, Qt-free: the jobs of each (view, backend) kept apart with totals
per phase, and which history the timing panel shows (it follows the view whose jobs arrive last,
or the one picked). The arithmetic of one frame is explorer.timing_breakdown; the drawing is
explorer.timing_panel.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kernels.timing import Timings

from .timing_breakdown import is_frame, phase_ms

HISTORY = 200       # frames kept per history: the chart's width


@dataclass
class History:
    """The jobs of one (source, backend): the newest frames for the chart, totals for the table.

    Frames are numbered from 1 in arrival order, so a bar keeps its number as the chart scrolls."""
    source: str | None
    backend: str
    maxlen: int = HISTORY
    frames: deque = field(default_factory=deque)        # (number, Timings)
    last: Timings | None = None
    totals: dict = field(default_factory=dict)          # phase -> [ms, calls]
    count: int = 0

    def __post_init__(self):
        self.frames = deque(maxlen=self.maxlen)

    def add(self, t: Timings):
        self.last = t
        if t.phases_ms.get("compile") is not None:
            self._count("compile", t.phases_ms["compile"])
        if not is_frame(t):
            return
        self.count += 1
        self.frames.append((self.count, t))
        for phase, ms in phase_ms(t).items():
            if ms is not None:
                self._count(phase, ms)

    def _count(self, phase: str, ms: float):
        s = self.totals.setdefault(phase, [0.0, 0])
        s[0] += ms
        s[1] += 1

    @property
    def last_frame(self) -> Timings | None:
        return self.frames[-1][1] if self.frames else None

    @property
    def on_cpu(self) -> bool:
        return self.backend == "cpu"


class TimingLog:
    """Histories keyed by (source, backend), and the key on screen (`shown_key`)."""

    def __init__(self, maxlen: int = HISTORY):
        self.maxlen = maxlen
        self.histories: dict[tuple, History] = {}
        self.shown_key: tuple | None = None       # (source, backend) on screen
        self.arriving: tuple | None = None        # the key of the newest job
        self.wanted_source: str | None = None     # asked for by show_source before it had a job
        self.jobs = 0

    def add(self, t: Timings, source: str | None = None):
        """One job's Timings; `source` is the view id it came from (None: one shared history)."""
        key = (source, t.backend)
        hist = self.histories.get(key)
        if hist is None:
            hist = self.histories[key] = History(source, t.backend, maxlen=self.maxlen)
        hist.add(t)
        self.jobs += 1
        # follow the jobs: switch when they start coming from another view or backend, so a view
        # picked in the list stays on screen while the same view keeps computing
        if key != self.arriving:
            self.arriving = key
            self.shown_key = key

    def show_source(self, source: str | None):
        """Show this view's newest history (e.g. when its tab is chosen)."""
        keys = [k for k in self.histories if k[0] == source]
        self.wanted_source = source
        if keys:
            self.shown_key = keys[-1] if self.arriving not in keys else self.arriving
        else:
            self.shown_key = None

    def pick(self, key) -> bool:
        """Show the history of this key (picked in the panel's list); False when there is none."""
        if key not in self.histories:
            return False
        self.shown_key = key
        return True

    def reset(self):
        """Forget every history."""
        self.histories.clear()
        self.shown_key = self.arriving = None
        self.jobs = 0

    def reset_shown(self) -> tuple | None:
        """Forget the history on screen only; the others stay. The panel keeps waiting for that
        view (its next job starts a fresh history there). Returns the key cleared, if any."""
        key = self.shown_key
        if key is None or key not in self.histories:
            return None
        del self.histories[key]
        self.wanted_source = key[0]
        self.shown_key = None
        if self.arriving == key:
            self.arriving = None
        return key

    def keys(self) -> list[tuple]:
        return list(self.histories)

    def shown(self) -> History | None:
        return self.histories.get(self.shown_key) if self.shown_key else None

    def last(self) -> Timings | None:
        h = self.shown()
        return h.last if h else None

    def stats(self) -> dict[str, tuple[float, int]]:
        """Totals of the shown history: phase -> (ms, calls)."""
        h = self.shown()
        return {k: (v[0], v[1]) for k, v in h.totals.items()} if h else {}
