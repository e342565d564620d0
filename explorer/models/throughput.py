"""The vector-op throughput view without Qt: what the user picked, the sweep's results as they
arrive, what the table and the chart show, and the CSV/JSON exports built from those results.

The widget (explorer.views.throughput) draws this model and forwards input to it. Observers are
plain callbacks, `fn(event, *args)`, told:

    "choices"              the backend's implementations, modes and sizes were (re)offered
    "settings", what       op, max_exp or metric changed (what names it)
    "checked"              the ticked implementations or modes changed
    "started"              a sweep began: earlier results are gone
    "references"           the copy bandwidths (the chart's ceilings) arrived
    "unavailable", name, reason    an implementation cannot run here
    "point", point         one SweepPoint arrived (measured or skipped)
    "finished"             the sweep ended: done, stopped by an error, failed or cancelled
    "status", text, ms     a line for the status bar
    "error", text          a failure the user should read
"""
from __future__ import annotations

import csv
import datetime as _dt
import io
import math
from dataclasses import dataclass

import numpy as np

from kernels.vector import sweep as vector_sweep
from kernels.vector.jobs import SweepRequest
from kernels.vector.ops import OP_NAMES, get_op
from kernels.vector.registry import implementations

VIEW_ID = "throughput"
COLUMNS = ("op", "implementation", "mode", "N", "h2d ms", "kernel ms", "d2h ms", "time ms",
           "GB/s", "G elem/s", "note")
# the chart's y axis: the metric as SweepPoint.rate names it -> the axis' words
METRICS = {"GB/s": "GB/s", "Gelem/s": "G elements/s"}


def fmt(v, digits=4) -> str:
    """A table cell: floats to `digits` significant figures, None as an empty cell."""
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def pow2_label(n: int) -> str:
    """2^22 (4 M) for powers of two, 1,000,000 for anything else."""
    k = int(math.log2(n)) if n > 0 else 0
    if 2**k != n:
        return f"{n:,}"
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if k >= shift:
            return f"2^{k} ({2 ** (k - shift)} {unit})"
    return f"2^{k} ({n})"


def table_row(p: vector_sweep.SweepPoint) -> list[str]:
    """One point as the table and the CSV show it, in COLUMNS order."""
    return [p.op, p.impl, p.mode, str(p.N), fmt(p.h2d_ms), fmt(p.kernel_ms), fmt(p.d2h_ms),
            fmt(p.time_ms), fmt(p.gbs), fmt(p.gelems), p.skipped or p.note or ""]


def op_tooltip(name: str) -> str:
    op = get_op(name)
    return f"{op.formula}: {op.bytes_per_element} bytes and {op.flops} flops per element"


@dataclass(frozen=True)
class ImplChoice:
    """An implementation offered for the backend; `reason` says why it cannot run ("" if it can)."""
    name: str
    description: str
    reason: str


class ThroughputModel:
    """Settings, results and their derived views (table rows, curves, ceilings, exports)."""

    REPEATS = 5
    BUDGET_S = 0.3

    def __init__(self, backend):
        self.backend = backend
        self.repeats = self.REPEATS
        self.budget_s = self.BUDGET_S
        self.ref_bytes = vector_sweep.REF_BYTES
        self._observers: list = []
        # settings
        self.op = "add"
        self.metric = "GB/s"
        self.impls: list[ImplChoice] = []
        self.size_exponents = range(vector_sweep.MIN_EXP, vector_sweep.MIN_EXP + 1)
        self.max_exp = vector_sweep.MIN_EXP
        self._ticked_impls: set[str] = set()
        self._ticked_modes: set[str] = set()
        # results of the last sweep
        self.sweep_op = OP_NAMES[0]
        self.points: list[vector_sweep.SweepPoint] = []
        self.refs: dict = {}
        self.unavailable: dict[str, str] = {}
        self.last_error: str | None = None
        self.summary: vector_sweep.SweepSummary | None = None
        self.state = "idle"      # running, then done / stopped (an error item) / failed / cancelled
        self.progress = 0
        self.total = 0           # points the sweep plans (0 before the first sweep)
        self.info = ""
        self._offer()

    # ---- observers ------------------------------------------------------------------------------
    def subscribe(self, fn):
        self._observers.append(fn)

    def _emit(self, event: str, *args):
        for fn in list(self._observers):
            fn(event, *args)

    # ---- settings -------------------------------------------------------------------------------
    def _offer(self):
        """Implementations, modes and sizes that make sense for the current backend."""
        gpu = self.backend.is_gpu
        self.impls = [ImplChoice(i.name, i.description, i.reason or self.unavailable.get(i.name, ""))
                      for i in implementations(self.backend)]
        self._ticked_impls = {c.name for c in self.impls if not c.reason}
        self._ticked_modes = {m for m in vector_sweep.MODES if self.mode_usable(m)}
        # 2^30 at most: larger vectors need 64-bit thread indices, which are not checked here
        top = vector_sweep.max_fitting_exponent(gpu=False, pinned=gpu, cap=30)
        default = min(26 if gpu and not self.backend.simulated else (12 if gpu else 22), top)
        self.size_exponents = range(vector_sweep.MIN_EXP, top + 1)
        self.max_exp = max(default, vector_sweep.MIN_EXP)
        self.info = f"Backend: {self.backend.label} — {self.backend.device}. Press Run (F5) to measure."

    def set_backend(self, backend):
        """Offer what the new backend can run (what the last one could not run is forgotten)."""
        self.backend = backend
        self.unavailable.clear()
        self._offer()
        self._emit("choices")

    def size_choices(self) -> list[tuple[int, str]]:
        """(exponent, label) of every largest size the sweep can take here."""
        return [(k, pow2_label(2**k)) for k in self.size_exponents]

    def set_op(self, name: str):
        if name in OP_NAMES and name != self.op:
            self.op = name
            self._emit("settings", "op")

    def set_max_exp(self, k: int):
        if k in self.size_exponents and k != self.max_exp:
            self.max_exp = k
            self._emit("settings", "max_exp")

    def set_metric(self, metric: str):
        if metric in METRICS and metric != self.metric:
            self.metric = metric
            self._emit("settings", "metric")

    def mode_usable(self, mode: str) -> bool:
        """Copies between host and device are measured only on the GPU."""
        return self.backend.is_gpu or mode == "kernel"

    def impl_usable(self, name: str) -> bool:
        return any(c.name == name and not c.reason for c in self.impls) and name not in self.unavailable

    def checked_impls(self) -> list[str]:
        return [c.name for c in self.impls if c.name in self._ticked_impls and self.impl_usable(c.name)]

    def checked_modes(self) -> list[str]:
        return [m for m in vector_sweep.MODES if m in self._ticked_modes and self.mode_usable(m)]

    def set_impl_checked(self, name: str, on: bool):
        if self.impl_usable(name) and (name in self._ticked_impls) != on:
            (self._ticked_impls.add if on else self._ticked_impls.discard)(name)
            self._emit("checked")

    def set_mode_checked(self, mode: str, on: bool):
        if self.mode_usable(mode) and (mode in self._ticked_modes) != on:
            (self._ticked_modes.add if on else self._ticked_modes.discard)(mode)
            self._emit("checked")

    def set_checked(self, impls=None, modes=None):
        """Tick exactly these implementations / modes (None leaves that list as it is)."""
        if impls is not None:
            self._ticked_impls = {c.name for c in self.impls if c.name in impls}
        if modes is not None:
            self._ticked_modes = {m for m in vector_sweep.MODES if m in modes}
        self._emit("checked")

    # ---- a sweep's life -------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def complete(self) -> bool:
        """The last sweep ran to its end (not cancelled, failed or stopped by an error)."""
        return self.state == "done"

    @property
    def partial(self) -> bool:
        """The results are not a whole sweep: it was cancelled, failed, stopped or still runs."""
        return self.state not in ("done", "idle")

    def completeness(self) -> str:
        """What the results are, in words: "complete: 26 of 26 points" or, e.g., "partial (sweep
        cancelled): 7 of 26 points"."""
        counts = f"{len(self.points)} of {self.total} points"
        if not self.partial:
            return f"complete: {counts}"
        why = "still running" if self.running else self.state
        return f"partial (sweep {why}): {counts}"

    def start(self) -> SweepRequest | None:
        """Forget the last results and return the request of a sweep of the current settings;
        None (with a status line saying why) when nothing is ticked."""
        impls, modes = self.checked_impls(), self.checked_modes()
        if not impls or not modes:
            self._emit("status", "Check at least one implementation and one mode", 5000)
            return None
        op, kmax = self.op, self.max_exp
        sizes = vector_sweep.sizes_up_to(kmax)
        self.points, self.refs, self.last_error, self.summary = [], {}, None, None
        self.sweep_op = op
        chosen = [i for i in implementations(self.backend) if i.name in impls]
        self.total = len(vector_sweep.plan(self.backend, [op], chosen, modes)) * len(sizes)
        self.progress = 0
        self.state = "running"
        self.info = f"Measuring {op} for {len(impls)} implementation(s) up to N = 2^{kmax}…"
        self._emit("started")
        # kept (no timeout) and followed point by point: a first point compiles for seconds
        self._emit("status", f"Throughput sweep of {op} started (a first run compiles its kernels)…"
                             "   (Esc cancels)", 0)
        return SweepRequest(op, tuple(impls), tuple(modes), tuple(sizes), self.backend,
                            repeats=self.repeats, ref_bytes=self.ref_bytes, budget_s=self.budget_s)

    def add(self, item):
        """One item the sweep yielded (kernels.vector.sweep.SweepItem)."""
        if isinstance(item, vector_sweep.SweepReferences):
            self.refs = dict(item.refs)
            self._emit("references")
        elif isinstance(item, vector_sweep.ImplUnavailableNotice):
            self.unavailable[item.impl] = item.reason
            self._emit("unavailable", item.impl, item.reason)
            self._emit("status", f"{item.impl} is unavailable: {item.reason}", 8000)
        elif isinstance(item, vector_sweep.SweepNotice):
            self._emit("status", item.message, 8000)
        elif isinstance(item, vector_sweep.SweepError):
            self.last_error = item.message
            self._emit("error", item.message)
        elif isinstance(item, vector_sweep.SweepPoint):
            self.points.append(item)
            self.progress = item.index or len(self.points)
            self._emit("point", item)
            self._emit("status", f"Throughput sweep of {self.sweep_op}: {self.progress} / "
                                 f"{self.total} points…   (Esc cancels)", 0)

    def finish(self, summary):
        """The sweep's generator returned (after an error item too, which stopped it)."""
        self.summary = summary
        if self.last_error:
            self._end("stopped", f"Sweep stopped: {self.last_error}")
            return
        n = len([p for p in self.points if not p.skipped])
        skipped = len(self.points) - n
        extra = f", {skipped} skipped (see the note column)" if skipped else ""
        self._end("done", f"Sweep done: {n} point(s) measured{extra}")

    def fail(self, message: str):
        self.last_error = message
        self._emit("error", message)
        self._end("failed", f"Sweep failed: {message}")

    def cancelled(self):
        self._end("cancelled", f"Sweep cancelled after {len(self.points)} point(s)")

    def _end(self, state: str, text: str):
        self.state = state
        self.info = text
        self._emit("finished")
        self._emit("status", text, 8000)

    # ---- what the chart shows -------------------------------------------------------------------
    def axis_label(self) -> str:
        return METRICS[self.metric]

    def title(self) -> str:
        op = get_op(self.sweep_op)
        return f"{op.name}: {op.formula} — {self.axis_label()} against N"

    def drawn(self, p, impl: str, mode: str) -> bool:
        return p.impl == impl and p.mode == mode and not p.skipped and bool(p.rate(self.metric))

    def curve(self, impl: str, mode: str) -> tuple[np.ndarray, np.ndarray]:
        """(N, rate) of the measured points of one implementation × mode, by N."""
        pts = sorted((p.N, p.rate(self.metric)) for p in self.points if self.drawn(p, impl, mode))
        return np.array([n for n, _ in pts], float), np.array([v for _, v in pts], float)

    def spread(self, impl: str, mode: str):
        """Each point's fastest-to-slowest range of the repeats, in log10 units (the chart is
        log-log): x, y, and the bar's extent above and below y."""
        rows = []
        for p in self.points:
            if self.drawn(p, impl, mode):
                lo_hi = p.rate_range(self.metric)
                if lo_hi is not None:
                    rows.append((p.N, p.rate(self.metric), *lo_hi))
        rows.sort()
        if not rows:
            return np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0)
        x = np.log10([r[0] for r in rows])
        y = np.log10([r[1] for r in rows])
        return x, y, np.log10([r[3] for r in rows]) - y, y - np.log10([r[2] for r in rows])

    def reference_value(self, key: str) -> float | None:
        """A copy bandwidth (kernels.transfer's key) in the chart's metric."""
        v = self.refs.get(key)
        if not v or self.metric == "GB/s":
            return v
        # elements per second that a copy at this bandwidth allows for the swept op
        op = get_op(self.sweep_op)
        per = op.bus_bytes_per_element if key in ("h2d-pinned", "d2h-pinned") else op.bytes_per_element
        return v / per

    def size_span(self) -> tuple[int, int]:
        """The smallest and largest N of the results (the sweep's smallest size before any)."""
        ns = [p.N for p in self.points if p.N > 0] or [2**vector_sweep.MIN_EXP]
        return min(ns), max(ns)

    def crossover_n(self) -> int | None:
        """From which N the GPU, copies included, beats the CPU (kernels.vector.sweep.crossover)."""
        return vector_sweep.crossover(self.points, self.sweep_op)

    # ---- what the table shows and the exports hold ----------------------------------------------
    def table_rows(self) -> list[list[str]]:
        return [table_row(p) for p in self.points]

    def csv_text(self) -> str:
        buf = io.StringIO(newline="")
        w = csv.writer(buf)
        w.writerow(COLUMNS)
        w.writerows(self.table_rows())
        return buf.getvalue()

    def json_document(self, now: _dt.datetime | None = None) -> dict:
        """Every point with its phases, the reference bandwidths and what the sweep ran on."""
        now = now or _dt.datetime.now(_dt.timezone.utc)
        return {"view": VIEW_ID, "backend": self.backend.name, "device": self.backend.device,
                "date": now.isoformat(timespec="seconds"),
                # a reader must not take a cancelled or failed sweep's points for the whole sweep
                "state": self.state, "partial": self.partial, "points_done": len(self.points),
                "points_planned": self.total, "completeness": self.completeness(),
                "op": self.sweep_op, "references_gbs": self.refs,
                "crossover_n": self.crossover_n(), "unavailable": self.unavailable,
                "error": self.last_error,
                "points": [p.as_dict() for p in self.points]}
