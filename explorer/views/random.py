"""Random numbers and reductions: numbers generated on the device, their histogram against the
exact density, a Monte Carlo estimate of π whose error falls as 1/√N, and every way of summing the
same numbers side by side — the racy one shown wrong, in red.

A run (Run, F5) is a queue of requests sent one after another under the view's key: the
generation, the histogram, the copy ceiling of this machine (the reductions' yardstick), one
reduction per checked strategy, then Monte Carlo estimates for growing N. Each result is shown as it lands and its timings go to the
timing panel; Cancel (Esc) or a backend switch drops the rest of the queue.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import Qt
from PyQt6.QtGui import QBrush, QColor, QKeySequence, QShortcut
from PyQt6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from kernels import buffers
from kernels.rng import request as rq
from kernels.rng.renderer import available, default_strategy
from kernels.rng.results import (
    GenerateResult,
    HistogramResult,
    MonteCarloResult,
    ReduceResult,
)
from kernels.numba_cache import compile_when
from kernels.scheduler import Compiled, Warmup
from kernels.transfer import CopyBandwidth, CopyBandwidthRequest

from .base import BaseView
from .wait_line import WaitLine

COLUMNS = ("strategy", "sum", "exact", "error", "rel. error", "time ms", "G values/s", "GB/s",
           "% of copy", "note")
HIST_BINS = 128
MIN_EXP, MC_MIN_EXP = 10, 10
RACE_TOLERANCE = 1e-3          # a relative error beyond this is not rounding: the sum is wrong
WRONG = QColor("#c62828")


def _fmt(v, digits=4) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if v != v:
            return "nan"
        return f"{v:.{digits}g}"
    return f"{v:,}"


class SparseLogAxis(pg.AxisItem):
    """A log axis that labels 1, 2 and 5 × 10^k only (1 × 10^k where a decade is short): every
    minor tick labelled ran "0.001 0.0009 0.0008…" into each other."""

    px_per_decade = 100.0

    def tickValues(self, minVal, maxVal, size):
        self.px_per_decade = size / max(maxVal - minVal, 1e-9)
        return super().tickValues(minVal, maxVal, size)

    def tickStrings(self, values, scale, spacing):
        strings = super().tickStrings(values, scale, spacing)
        if not self.logMode:
            return strings
        keep = (1,) if self.px_per_decade < 150 else (1, 2, 5)
        out = []
        for v, text in zip(values, strings):
            mantissa = 10 ** (v - math.floor(v + 1e-9))
            out.append(text if any(abs(mantissa - k) < 1e-6 * k for k in keep) else "")
        return out


def density(distribution: str, x: np.ndarray) -> np.ndarray:
    """The exact probability density the generated numbers follow."""
    if distribution == "normal":
        return np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return np.where((x >= 0.0) & (x < 1.0), 1.0, 0.0)


def max_exponent(backend) -> int:
    """The largest N = 2^k whose float64 values (plus the histogram's scratch) fit with room to
    spare in the device's (or the host's) free memory; at most 2^30 here."""
    free = None
    if backend.is_gpu and not backend.simulated:
        info = buffers.device_free_bytes()
        free = info[0] if info else None
    elif not backend.is_gpu:
        free = buffers.host_available_bytes()
    top = 30 if not backend.simulated else 12
    if free:
        while top > MIN_EXP and 2 ** top * 8 * 3 > 0.8 * free:
            top -= 1
    return top


class RandomView(BaseView):
    view_id = "random"

    def __init__(self, scheduler, backend, parent=None):
        super().__init__(scheduler, backend, parent)
        self.queue: list = []            # requests still to send in this run
        self.results: list = []          # every result of the run, in arrival order
        self.ceiling: CopyBandwidth | None = None
        self.mc_points: list[tuple[int, float]] = []   # (N, |error|)
        self._warm: set = set()          # backends whose kernels are compiled
        self.wait = WaitLine(self, self.status_message.emit)   # a first compile's seconds so far
        self._build()
        self.backend_changed()

    # ---- layout -------------------------------------------------------------------------------
    def _build(self):
        side = QWidget()
        side.setMaximumWidth(300)
        form = QFormLayout()
        self.generator_combo = QComboBox()
        self.generator_combo.setToolTip("Where and how the numbers are made")
        form.addRow("&Generator", self.generator_combo)
        self.distribution_combo = QComboBox()
        self.distribution_combo.addItems(rq.DISTRIBUTIONS)
        self.distribution_combo.setToolTip("Uniform on [0, 1) or standard normal")
        form.addRow("&Distribution", self.distribution_combo)
        self.dtype_combo = QComboBox()
        self.dtype_combo.addItems(rq.DTYPES)
        self.dtype_combo.setToolTip("Precision of the numbers and of the sums (float32 sums show "
                                    "their rounding error against the exact sum)")
        form.addRow("&Precision", self.dtype_combo)
        self.n_combo = QComboBox()
        self.n_combo.setToolTip("How many numbers: sizes that do not fit in free memory are not offered")
        form.addRow("&N", self.n_combo)
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("The same seed gives the same numbers on every run")
        form.addRow("&Seed", self.seed_spin)
        self.hist_combo = QComboBox()
        self.hist_combo.setToolTip("How the histogram is counted on the device")
        form.addRow("His&togram", self.hist_combo)   # Alt+H is the Help menu

        box = QGroupBox("Reductions (sum of the same numbers)")
        self.strategy_list = QListWidget()
        self.strategy_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        QVBoxLayout(box).addWidget(self.strategy_list)

        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Generate, count, sum with every checked strategy and estimate π (F5)")
        self.run_button.clicked.connect(self.start_run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop after the current step (Esc)")
        self.cancel_button.clicked.connect(self.cancel_run)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setFormat("%v / %m steps")
        self.info = QLabel()
        self.info.setWordWrap(True)

        slay = QVBoxLayout(side)
        slay.setContentsMargins(0, 0, 0, 0)
        slay.addLayout(form)
        slay.addWidget(box, 1)
        row = QHBoxLayout()
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        slay.addLayout(row)
        slay.addWidget(self.progress)
        slay.addWidget(self.info)

        self.hist_plot = pg.PlotWidget()
        self.hist_plot.setBackground("w")
        self.hist_plot.setTitle("Histogram vs exact density",
                                color="k", size="10pt")
        self.hist_plot.setLabel("left", "density")
        self.hist_plot.setLabel("bottom", "value")
        self.hist_plot.showGrid(x=True, y=True, alpha=0.2)
        self.hist_legend = self.hist_plot.addLegend(offset=(-10, 10), labelTextColor="k")
        self.hist_bars = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=(49, 130, 189, 110),
                                         pen=pg.mkPen("#3182bd", width=1), name="counted")
        self.hist_exact = pg.PlotDataItem(pen=pg.mkPen("#222", width=2, style=Qt.PenStyle.DashLine),
                                          name="exact density")
        self.hist_plot.addItem(self.hist_bars)
        self.hist_plot.addItem(self.hist_exact)
        self.hist_note = QLabel("Press Run (F5): the histogram of the numbers appears here.")
        self.hist_note.setWordWrap(True)

        self.mc_plot = pg.PlotWidget(axisItems={"left": SparseLogAxis("left")})
        self.mc_plot.setBackground("w")
        self.mc_plot.setLogMode(x=True, y=True)
        self.mc_plot.setTitle("Monte Carlo π: error vs N", color="k", size="10pt")
        self.mc_plot.setLabel("left", "|estimate − π|")
        self.mc_plot.setLabel("bottom", "N (points)")
        self.mc_plot.showGrid(x=True, y=True, alpha=0.2)
        self.mc_plot.getAxis("left").enableAutoSIPrefix(False)
        self.mc_plot.getAxis("bottom").enableAutoSIPrefix(False)
        # room round the points: the first and the last sat on the frame, their symbols cut
        self.mc_plot.getViewBox().setDefaultPadding(0.08)
        self.mc_legend = self.mc_plot.addLegend(offset=(-10, 10), labelTextColor="k")
        self.mc_curve = pg.PlotDataItem(pen=pg.mkPen("#e6550d", width=2), symbol="o", symbolSize=6,
                                        symbolBrush="#e6550d", name="fused kernel")
        self.mc_ref = pg.PlotDataItem(pen=pg.mkPen("#777", width=1, style=Qt.PenStyle.DashLine),
                                      name="σ = √(π(4−π)/N)")
        self.mc_plot.addItem(self.mc_curve)
        self.mc_plot.addItem(self.mc_ref)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table_note = QLabel()
        self.table_note.setWordWrap(True)

        top = QSplitter(Qt.Orientation.Horizontal)
        hist_box = QWidget()
        hl = QVBoxLayout(hist_box)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.addWidget(self.hist_plot, 1)
        hl.addWidget(self.hist_note)
        top.addWidget(hist_box)
        top.addWidget(self.mc_plot)
        # the two plots share the width evenly; the histogram's note wraps rather than widening it
        self.hist_note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        top.setStretchFactor(0, 1)
        top.setStretchFactor(1, 1)
        top.setSizes([500, 500])
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.table, 1)
        bl.addWidget(self.table_note)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setSizes([420, 260])

        outer = QHBoxLayout(self)
        outer.addWidget(side)
        outer.addWidget(split, 1)

        for keys, slot in ((QKeySequence("F5"), self.start_run), (QKeySequence("Escape"), self.cancel_run)):
            sc = QShortcut(keys, self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(slot)

    # ---- what the backend offers ---------------------------------------------------------------
    def backend_changed(self):
        """List every generator and strategy, the ones this backend cannot run disabled with why."""
        if self.in_flight:
            self.cancel_run()
        be = self.backend
        self._fill_combo(self.generator_combo, available(be, "generate"), rq.GENERATOR_HELP,
                         "xoroshiro128p")
        self._fill_combo(self.hist_combo, available(be, "histogram"), rq.HISTOGRAM_HELP,
                         default_strategy("histogram", be))
        self.strategy_list.clear()
        for name, why in available(be, "reduce").items():
            item = QListWidgetItem(name)
            item.setData(Qt.ItemDataRole.UserRole, name)
            if why:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled & ~Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
                item.setToolTip(f"{rq.REDUCE_HELP[name]}\nunavailable here: {why}")
            else:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked)
                item.setToolTip(rq.REDUCE_HELP[name])
            self.strategy_list.addItem(item)
        top = max_exponent(be)
        default = min(top, 24 if be.is_gpu and not be.simulated else (8 if be.simulated else 22))
        self.n_combo.clear()
        for k in range(MIN_EXP if not be.simulated else 4, top + 1):
            self.n_combo.addItem(f"2^{k} ({2 ** k:,})", k)
        self.n_combo.setCurrentIndex(self.n_combo.findData(default))
        self.info.setText(f"Backend: {be.label} — {be.device}. Press Run (F5).")

    @staticmethod
    def _fill_combo(combo: QComboBox, avail: dict, help_: dict, preferred: str):
        combo.clear()
        usable = []
        for name, why in avail.items():
            combo.addItem(name if not why else f"{name} (unavailable)", name)
            i = combo.count() - 1
            combo.setItemData(i, help_.get(name, "") + (f"\nunavailable here: {why}" if why else ""),
                              Qt.ItemDataRole.ToolTipRole)
            if why:
                combo.model().item(i).setEnabled(False)
            else:
                usable.append(name)
        pick = preferred if preferred in usable else (usable[0] if usable else None)
        if pick is not None:
            combo.setCurrentIndex(combo.findData(pick))

    # ---- what the user picked ------------------------------------------------------------------
    def checked_strategies(self) -> list[str]:
        out = []
        for i in range(self.strategy_list.count()):
            it = self.strategy_list.item(i)
            if it.flags() & Qt.ItemFlag.ItemIsEnabled and it.checkState() == Qt.CheckState.Checked:
                out.append(it.data(Qt.ItemDataRole.UserRole))
        return out

    def set_checked(self, strategies):
        for i in range(self.strategy_list.count()):
            it = self.strategy_list.item(i)
            if it.flags() & Qt.ItemFlag.ItemIsEnabled:
                on = it.data(Qt.ItemDataRole.UserRole) in strategies
                it.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def set_n_exponent(self, k: int):
        i = self.n_combo.findData(k)
        if i >= 0:
            self.n_combo.setCurrentIndex(i)

    def plan(self) -> list:
        """The requests of one run, in order; ValueError (plain words) when one cannot run."""
        be = self.backend
        n = 2 ** int(self.n_combo.currentData() or MIN_EXP)
        seed = int(self.seed_spin.value())
        dist, dtype = self.distribution_combo.currentText(), self.dtype_combo.currentText()
        reqs: list = [] if be in self._warm else [Warmup("rng", be)]   # compile time apart
        reqs.append(rq.GenerateRequest(self.generator_combo.currentData(), dist, dtype, n, seed, backend=be))
        reqs.append(rq.HistogramRequest(self.hist_combo.currentData(), n, HIST_BINS, dtype, dist, seed,
                                        backend=be))
        # the reductions' ceiling, measured after the first results are on screen
        reqs.append(CopyBandwidthRequest(be, nbytes=min(64 * 2**20, max(2**16, n * 4))))
        for s in self.checked_strategies():
            reqs.append(rq.ReduceRequest(s, n, dtype, seed, backend=be))
        mc_top = max(MC_MIN_EXP, int(math.log2(n)) + (4 if be.is_gpu and not be.simulated else 0))
        for k in range(MC_MIN_EXP if not be.simulated else 4, mc_top + 1, 2):
            reqs.append(rq.MonteCarloRequest(2 ** k, seed, backend=be))
        for r in reqs:
            if isinstance(r, (rq.GenerateRequest, rq.HistogramRequest, rq.ReduceRequest, rq.MonteCarloRequest)):
                r.validate(be)
        return reqs

    # ---- a run -----------------------------------------------------------------------------------
    def request_render(self):
        """Runs start only on request (F5); a backend switch just offers what the backend can do."""

    def start_run(self):
        if self.in_flight:
            return
        try:
            reqs = self.plan()
        except ValueError as exc:
            self.status_message.emit(f"Cannot run: {exc}", 8000)
            self.info.setText(f"Cannot run: {exc}")
            return
        self.queue = reqs
        self.results, self.ceiling, self.mc_points = [], None, []
        self.table.setRowCount(0)
        self.mc_curve.setData([], [])
        self.mc_ref.setData([], [])
        self.progress.setMaximum(len(reqs))
        self.progress.setValue(0)
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.info.setText(f"Running {len(reqs)} steps on {self.backend.label}…")
        if isinstance(reqs[0], Warmup):     # its line lasts as long as the compile does
            self.wait.start(f"Random numbers: compiling the kernels, {compile_when()}", "…")
        else:
            self.status_message.emit("Random-numbers run started", 4000)
        self._next()

    def _next(self):
        if not self.queue:
            self._done(f"Done: {len(self.results)} results")
            return
        self.submit(self.queue.pop(0))

    def cancel_run(self):
        if not self.in_flight and not self.queue:
            return
        self.queue = []
        self.cancel()
        self._done(f"Cancelled after {len(self.results)} result(s)")

    def _done(self, text: str):
        self.wait.stop()
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.info.setText(text)
        self.status_message.emit(text, 6000)

    def on_result(self, result):
        self.wait.stop()
        self.results.append(result)
        self.progress.setValue(self.progress.value() + 1)
        timings = getattr(result, "timings", None)
        if timings is not None:
            self.report_timings(timings)
        if isinstance(result, Compiled):
            self._warm.add(result.backend)
            if result.ms:
                self.status_message.emit(f"Random-number kernels compiled in {result.ms:.0f} ms", 4000)
        elif isinstance(result, CopyBandwidth):
            self.ceiling = result
        elif isinstance(result, GenerateResult):
            self._show_generated(result)
        elif isinstance(result, HistogramResult):
            self._show_histogram(result)
        elif isinstance(result, ReduceResult):
            self._add_row(result)
        elif isinstance(result, MonteCarloResult):
            self._add_mc(result)
        self._next()

    def on_failed(self, message, tb):
        self.queue = []
        self.error_message.emit(f"Random numbers: {message}")
        self._done(f"Stopped: {message}")

    def on_cancelled(self):
        self.queue = []

    # ---- showing results --------------------------------------------------------------------------
    def _show_generated(self, r: GenerateResult):
        head = ", ".join(f"{v:.4f}" for v in np.asarray(r.head)[:4])
        rate = r.samples_per_s
        self.info.setText(f"Generated {r.request.n:,} {r.request.distribution} {r.request.dtype} "
                          f"with {r.generator} ({r.where})"
                          + (f" at {rate / 1e9:.3g} G/s" if rate else "") + f": {head}, …")

    def _show_histogram(self, r: HistogramResult):
        lo, hi = r.edges
        edges = np.linspace(lo, hi, len(r.counts) + 1)
        width = (hi - lo) / len(r.counts)
        dens = r.counts / (r.request.n * width)
        self.hist_bars.setData(edges, dens)
        x = np.linspace(lo, hi, 400)
        exact = density(r.request.distribution, x)
        self.hist_exact.setData(x, exact)
        # room above the curves for the legend
        self.hist_plot.setYRange(0.0, 1.35 * max(float(dens.max(initial=0.0)), float(exact.max())), padding=0)
        lost = r.lost
        if lost:
            self.hist_note.setText(f"<span style='color:{WRONG.name()}'><b>{r.strategy}: {lost:,} of "
                                   f"{r.request.n:,} counts lost</b></span> — threads overwrote each "
                                   "other's increments (no atomics).")
        else:
            self.hist_note.setText(f"{r.strategy}: all {r.request.n:,} values counted "
                                   f"({r.underflow + r.overflow:,} outside [{lo:g}, {hi:g}))"
                                   + (f", {r.gbs:.3g} GB/s read" if r.gbs else ""))

    def _add_row(self, r: ReduceResult):
        rel = r.relative_error
        wrong = rel is not None and rel > RACE_TOLERANCE
        gv = (r.request.n / (r.reduce_ms * 1e-3) / 1e9) if r.reduce_ms else None
        pct = (100.0 * r.gbs / self.ceiling.gbs) if (r.gbs and self.ceiling and self.ceiling.gbs) else None
        note = r.note or ("wrong: updates were lost" if wrong else
                          ("the same on every run" if r.deterministic else "order varies run to run"))
        cells = (r.strategy, _fmt(r.value, 10), _fmt(r.reference, 10), _fmt(r.error, 3), _fmt(rel, 3),
                 _fmt(r.reduce_ms, 4), _fmt(gv, 4), _fmt(r.gbs, 4), _fmt(pct, 3), note)
        row = self.table.rowCount()
        self.table.insertRow(row)
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if wrong and col in (1, 3, 4, 9):
                item.setForeground(QBrush(WRONG))
            self.table.setItem(row, col, item)
        ceiling = (f"% of copy = GB/s against the {self.ceiling.what} measured in this run "
                   f"({self.ceiling.gbs:.4g} GB/s)" if self.ceiling and self.ceiling.gbs else "")
        self.table_note.setText(f"Exact sum: integers behind the generated values, added exactly. "
                                f"Red: wrong by more than {RACE_TOLERANCE:g} relative. {ceiling}")

    def _add_mc(self, r: MonteCarloResult):
        err = abs(r.estimate - math.pi)
        self.mc_points.append((r.request.n, max(err, 1e-12)))
        ns = np.array([p[0] for p in self.mc_points], dtype=float)
        self.mc_curve.setData(ns, np.array([p[1] for p in self.mc_points]))
        self.mc_ref.setData(ns, np.sqrt(math.pi * (4 - math.pi) / ns))
