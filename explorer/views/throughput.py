"""Vector-op throughput: GB/s (or G elements/s) against N for every implementation × mode, with the
machine's copy bandwidths as ceilings and the size from which the GPU, copies included, beats
the CPU.

The sweep (kernels.vector.sweep.sweep) runs on the scheduler as a generator job; each point
arrives through on_progress and is drawn at once, so a long sweep is watchable and cancellable.
"""
from __future__ import annotations

import csv
import datetime as _dt
import io
import math

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import Qt
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFileDialog, QFormLayout,
                             QGroupBox, QHBoxLayout, QHeaderView, QLabel, QListWidget,
                             QListWidgetItem, QProgressBar, QPushButton, QSplitter, QTableWidget,
                             QTableWidgetItem, QVBoxLayout, QWidget)

from kernels.vector import sweep as vector_sweep
from kernels.vector.jobs import SweepRequest
from kernels.vector.ops import OP_NAMES, get_op
from kernels.vector.registry import implementations
from services.files import check_writable, write_json, write_text

from .base import BaseView

COLUMNS = ("op", "implementation", "mode", "N", "h2d ms", "kernel ms", "d2h ms", "time ms",
           "GB/s", "G elem/s", "note")
# One colour per implementation, none of them grey (greys are the reference lines) and no two
# alike: NVRTC in blues, the two CPU ones red and dark purple, so the CPU backend's only pair of
# curves is told apart at a glance.
IMPL_COLOURS = {"vectorize": "#ff7f0e", "cuda-jit": "#2ca02c", "cuda-jit-stride": "#17becf",
                "cuda-jit-ilp4": "#bcbd22", "nvrtc": "#1f77b4", "nvrtc-ilp4": "#08306b",
                "pycuda": "#e377c2", "cpu-numba": "#d62728", "numpy": "#6a3d9a"}
MODE_STYLES = {"kernel": Qt.PenStyle.SolidLine, "pinned": Qt.PenStyle.DashLine,
               "pageable": Qt.PenStyle.DotLine}
MODE_SYMBOLS = {"kernel": "o", "pinned": "s", "pageable": "t"}
# (key, label, grey, line style, label position along the line): neutral so no reference is
# mistaken for a curve; positions staggered so that equal values (h→d and d→h often are) do not
# print on top of each other, and at small N where the curves are low
REF_LINES = (("d2d-copy", "device copy", "#4d4d4d", Qt.PenStyle.DashLine, 0.03),
             ("h2d-pinned", "h→d pinned", "#737373", Qt.PenStyle.DotLine, 0.03),
             ("d2h-pinned", "d→h pinned", "#737373", Qt.PenStyle.DashDotLine, 0.42),
             ("cpu-copy", "CPU copy", "#5e5e5e", Qt.PenStyle.DashDotDotLine, 0.22))
KEY_GREY = "#444"              # the legend's mode samples: line style and symbol only
MODE_TIPS = {"kernel": "data already on the device: only the compute is timed",
             "pinned": "end to end: copy in from page-locked host memory, compute, copy back",
             "pageable": "end to end from ordinary NumPy arrays (the seed's way)"}


def _fmt(v, digits=4) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def _pow2_label(n: int) -> str:
    k = int(math.log2(n)) if n > 0 else 0
    if 2**k != n:
        return f"{n:,}"
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if k >= shift:
            return f"2^{k} ({2 ** (k - shift)} {unit})"
    return f"2^{k} ({n})"


def _si(n: float) -> str:
    # the axis ticks sit at powers of two, so binary prefixes: 4K, 64K, 16M
    for unit, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n >= scale * 0.999:
            v = n / scale
            return f"{v:.0f}{unit}" if abs(v - round(v)) < 0.05 else f"{v:.1f}{unit}"
    return f"{n:.0f}"


class SizeAxis(pg.AxisItem):
    """Vector lengths as 1K, 64K, 16M rather than 10^3-style numbers, ticked at powers of two
    (the sizes a sweep measures) instead of decades, whose minor labels run into each other."""

    def tickValues(self, minVal, maxVal, size):
        if not self.logMode:
            return super().tickValues(minVal, maxVal, size)
        lg2 = math.log10(2.0)
        lo, hi = math.ceil(minVal / lg2), math.floor(maxVal / lg2)
        if hi < lo:
            return super().tickValues(minVal, maxVal, size)
        step = 1
        while (hi - lo) / step > max(2, size / 70):  # about one label per 70 pixels
            step *= 2
        first = lo + (-lo) % step
        return [(step * lg2, [k * lg2 for k in range(first, hi + 1, step)])]

    def tickStrings(self, values, scale, spacing):
        if not self.logMode:
            return super().tickStrings(values, scale, spacing)
        return [_si(10 ** v) for v in values]


class RateAxis(pg.AxisItem):
    """Plain numbers (0.5, 20, 3000) on a log axis instead of 5·10⁻¹-style labels."""

    def tickStrings(self, values, scale, spacing):
        if not self.logMode:
            return super().tickStrings(values, scale, spacing)
        out = []
        for v in values:
            x = 10 ** v
            out.append(f"{x:,.0f}" if x >= 100 else f"{x:.3g}")
        return out


class ThroughputView(BaseView):
    view_id = "throughput"

    REPEATS = 5
    BUDGET_S = 0.3

    def __init__(self, scheduler, backend, parent=None):
        super().__init__(scheduler, backend, parent)
        self.points: list[vector_sweep.SweepPoint] = []
        self.refs: dict = {}
        self.unavailable: dict[str, str] = {}
        self.ref_bytes = vector_sweep.REF_BYTES
        self.last_error: str | None = None
        self._sweep_op = OP_NAMES[0]
        self._curves: dict[tuple, pg.PlotDataItem] = {}
        self._spreads: dict[tuple, pg.ErrorBarItem] = {}
        self._key_samples: dict[tuple, pg.PlotDataItem] = {}
        self._ref_items: list = []
        self._cross_item = None
        self._build()
        self._refresh_controls()

    # ---- layout -------------------------------------------------------------------------------
    def _build(self):
        side = QWidget()
        side.setMaximumWidth(300)
        form = QFormLayout()
        self.op_combo = QComboBox()
        for name in OP_NAMES:
            op = get_op(name)
            self.op_combo.addItem(name)
            self.op_combo.setItemData(self.op_combo.count() - 1,
                                      f"{op.formula}: {op.bytes_per_element} bytes and {op.flops} "
                                      "flops per element", Qt.ItemDataRole.ToolTipRole)
        self.op_combo.setCurrentText("add")
        self.op_combo.setToolTip("The vector operation to measure (float32)")
        form.addRow("Op", self.op_combo)
        self.max_combo = QComboBox()
        self.max_combo.setToolTip("Largest vector length of the sweep; sizes that do not fit in "
                                  "free memory are skipped with the reason")
        form.addRow("Max N", self.max_combo)
        self.metric_combo = QComboBox()
        self.metric_combo.addItems(["GB/s", "G elements/s"])
        self.metric_combo.setToolTip("Y axis: bytes moved per second, or elements per second")
        self.metric_combo.currentIndexChanged.connect(self._redraw)
        form.addRow("Y axis", self.metric_combo)

        impl_box = QGroupBox("Implementations")
        self.impl_list = QListWidget()
        self.impl_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.impl_list.itemChanged.connect(self._apply_visibility)
        lay = QVBoxLayout(impl_box)
        lay.addWidget(self.impl_list)

        mode_box = QGroupBox("Modes")
        mlay = QVBoxLayout(mode_box)
        self.mode_checks = {}
        line_hint = {"kernel": "───", "pinned": "– – –", "pageable": "·······"}
        for mode in vector_sweep.MODES:
            # the line style names the mode on the chart (the key under it repeats it)
            cb = QCheckBox(f"{mode}   {line_hint.get(mode, '')}")
            cb.setToolTip(MODE_TIPS[mode])
            cb.setChecked(True)
            cb.toggled.connect(self._apply_visibility)
            self.mode_checks[mode] = cb
            mlay.addWidget(cb)

        self.run_button = QPushButton("Run sweep")
        self.run_button.setToolTip("Measure every checked implementation × mode over the sizes (F5)")
        self.run_button.clicked.connect(self.start_sweep)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the sweep after the current point (Esc)")
        self.cancel_button.clicked.connect(self.cancel_sweep)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setFormat("%v / %m points")
        self.progress.setValue(0)
        self.csv_button = QPushButton("Export CSV…")
        self.csv_button.setToolTip("Save the table of the last sweep (Ctrl+E)")
        self.csv_button.clicked.connect(self._ask_csv)
        self.json_button = QPushButton("Export JSON…")
        self.json_button.setToolTip("Save every point with its phases and the reference "
                                    "bandwidths (Ctrl+Shift+E)")
        self.json_button.clicked.connect(self._ask_json)
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.legend_check = QCheckBox("Legend on the chart")
        self.legend_check.setToolTip("Colour = implementation, line style = mode; click an entry "
                                     "to hide or show its curves")
        self.legend_check.setChecked(True)
        self.legend_check.toggled.connect(lambda on: self.legend.setVisible(on))

        slay = QVBoxLayout(side)
        slay.setContentsMargins(0, 0, 0, 0)
        slay.addLayout(form)
        slay.addWidget(impl_box, 1)
        slay.addWidget(mode_box)
        slay.addWidget(self.legend_check)
        row = QHBoxLayout()
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        slay.addLayout(row)
        slay.addWidget(self.progress)
        row = QHBoxLayout()
        row.addWidget(self.csv_button)
        row.addWidget(self.json_button)
        slay.addLayout(row)
        slay.addWidget(self.info)

        self.plot = pg.PlotWidget(axisItems={"bottom": SizeAxis("bottom"),
                                             "left": RateAxis("left")})
        self.plot.setBackground("w")
        self.plot.setLogMode(x=True, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setLabel("bottom", "N (float32 elements)")
        self.plot.setLabel("left", "GB/s")
        # the key sits in a row of its own under the chart, so it never covers a curve
        self.legend = pg.LegendItem(labelTextColor="k", colCount=6, horSpacing=12, frame=False)
        self.plot.getPlotItem().layout.addItem(self.legend, 4, 1, alignment=Qt.AlignmentFlag.AlignHCenter)
        # invisible points at the reference values, so auto-range keeps the ceilings in view
        self._bounds_item = pg.PlotDataItem(pen=None, symbol="o", symbolSize=1, symbolPen=None,
                                            symbolBrush=(0, 0, 0, 0))
        self.plot.addItem(self._bounds_item)
        self.legend.setToolTip("Colour = implementation, line style = mode; bars = fastest to "
                               "slowest repeat. Click a sample to hide or show its curves")

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(20)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.plot)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([440, 200])

        outer = QHBoxLayout(self)
        outer.addWidget(side)
        outer.addWidget(split, 1)

        for keys, slot in ((QKeySequence("F5"), self.start_sweep),
                           (QKeySequence("Escape"), self.cancel_sweep),
                           (QKeySequence("Ctrl+E"), self._ask_csv),
                           (QKeySequence("Ctrl+Shift+E"), self._ask_json)):
            sc = QShortcut(keys, self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(slot)

    def _refresh_controls(self):
        """Implementations, modes and sizes that make sense for the current backend."""
        gpu = self.backend.is_gpu
        self.impl_list.blockSignals(True)
        self.impl_list.clear()
        for impl in implementations(self.backend):
            item = QListWidgetItem(impl.name)
            item.setData(Qt.ItemDataRole.UserRole, impl.name)
            reason = impl.reason or self.unavailable.get(impl.name, "")
            if reason:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled & ~Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
                item.setToolTip(f"{impl.description}\nunavailable: {reason}")
            else:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked)
                item.setToolTip(impl.description)
            colour = pg.mkColor(IMPL_COLOURS.get(impl.name, "#444"))
            if not reason:
                item.setForeground(colour)
            self.impl_list.addItem(item)
        self.impl_list.blockSignals(False)
        for mode, cb in self.mode_checks.items():
            usable = gpu or mode == "kernel"
            cb.setEnabled(usable)
            cb.setChecked(usable)
            cb.setToolTip(MODE_TIPS[mode] if usable else f"{MODE_TIPS[mode]} (needs the CUDA backend)")
        # 2^30 at most: larger vectors need 64-bit thread indices, which are not checked here
        top = vector_sweep.max_fitting_exponent(gpu=False, pinned=gpu, cap=30)
        default = min(26 if gpu and not self.backend.simulated else (12 if gpu else 22), top)
        self.max_combo.clear()
        for k in range(vector_sweep.MIN_EXP, top + 1):
            self.max_combo.addItem(_pow2_label(2**k), k)
        self.max_combo.setCurrentIndex(default - vector_sweep.MIN_EXP)
        self.info.setText(f"Backend: {self.backend.label} — {self.backend.device}. "
                          "Press Run (F5) to measure.")

    # ---- what the user picked -----------------------------------------------------------------
    def checked_impls(self) -> list[str]:
        out = []
        for i in range(self.impl_list.count()):
            item = self.impl_list.item(i)
            if item.flags() & Qt.ItemFlag.ItemIsEnabled and item.checkState() == Qt.CheckState.Checked:
                out.append(item.data(Qt.ItemDataRole.UserRole))
        return out

    def checked_modes(self) -> list[str]:
        return [m for m, cb in self.mode_checks.items() if cb.isEnabled() and cb.isChecked()]

    def set_max_exponent(self, k: int):
        idx = self.max_combo.findData(k)
        if idx >= 0:
            self.max_combo.setCurrentIndex(idx)

    def set_checked(self, impls=None, modes=None):
        """Check exactly these implementations / modes (tests and scripted use)."""
        if impls is not None:
            for i in range(self.impl_list.count()):
                item = self.impl_list.item(i)
                if item.flags() & Qt.ItemFlag.ItemIsEnabled:
                    name = item.data(Qt.ItemDataRole.UserRole)
                    item.setCheckState(Qt.CheckState.Checked if name in impls else Qt.CheckState.Unchecked)
        if modes is not None:
            for m, cb in self.mode_checks.items():
                cb.setChecked(m in modes)

    # ---- running a sweep ----------------------------------------------------------------------
    def backend_changed(self):
        """Offer what the new backend can run; sweeps start only on request (F5)."""
        if self.in_flight:
            self.cancel_sweep()
        self.unavailable.clear()
        self._refresh_controls()

    def start_sweep(self):
        impls, modes = self.checked_impls(), self.checked_modes()
        if not impls or not modes:
            self.status_message.emit("Check at least one implementation and one mode", 5000)
            return
        op = self.op_combo.currentText()
        kmax = self.max_combo.currentData() or vector_sweep.MIN_EXP
        sizes = vector_sweep.sizes_up_to(kmax)
        backend, ref_bytes = self.backend, self.ref_bytes
        repeats, budget = self.REPEATS, self.BUDGET_S
        self.points, self.refs, self.last_error = [], {}, None
        self._sweep_op = op
        self._clear_plot()
        self._set_title()
        self.table.setRowCount(0)
        total = len(vector_sweep.plan(backend, [op], [i for i in implementations(backend)
                                                     if i.name in impls], modes)) * len(sizes)
        self.progress.setMaximum(max(total, 1))
        self.progress.setValue(0)
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.info.setText(f"Measuring {op} for {len(impls)} implementation(s) up to N = 2^{kmax}…")
        self.status_message.emit(f"Throughput sweep of {op} started", 3000)
        self.submit(SweepRequest(op, tuple(impls), tuple(modes), tuple(sizes), backend,
                                 repeats=repeats, ref_bytes=ref_bytes, budget_s=budget))

    def cancel_sweep(self):
        if not self.in_flight:
            return
        self.cancel()
        self._sweep_done(f"Sweep cancelled after {len(self.points)} point(s)")

    def on_progress(self, item):
        if isinstance(item, vector_sweep.SweepReferences):
            self.refs = dict(item.refs)
            self._draw_references()
        elif isinstance(item, vector_sweep.ImplUnavailableNotice):
            self.unavailable[item.impl] = item.reason
            self._mark_unavailable(item.impl, item.reason)
        elif isinstance(item, vector_sweep.SweepNotice):
            self.status_message.emit(item.message, 8000)
        elif isinstance(item, vector_sweep.SweepError):
            self.last_error = item.message
            self.error_message.emit(item.message)
        elif isinstance(item, vector_sweep.SweepPoint):
            self.points.append(item)
            self.progress.setValue(item.index or len(self.points))
            self._add_row(item)
            if not item.skipped:
                self._update_curve(item.impl, item.mode)
                self._update_bounds()
                if item.timings is not None:
                    self.report_timings(item.timings)

    def on_result(self, summary):
        if self.last_error:
            self._sweep_done(f"Sweep stopped: {self.last_error}")
        else:
            n = len([p for p in self.points if not p.skipped])
            skipped = len(self.points) - n
            extra = f", {skipped} skipped (see the note column)" if skipped else ""
            self._sweep_done(f"Sweep done: {n} point(s) measured{extra}")
        self._update_crossover()

    def on_failed(self, message, tb):
        self.last_error = message
        super().on_failed(message, tb)
        self._sweep_done(f"Sweep failed: {message}")

    def on_cancelled(self):
        self._sweep_done(f"Sweep cancelled after {len(self.points)} point(s)")

    def _sweep_done(self, text: str):
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.info.setText(text)
        self.status_message.emit(text, 8000)

    def _mark_unavailable(self, name: str, reason: str):
        for i in range(self.impl_list.count()):
            item = self.impl_list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == name:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled & ~Qt.ItemFlag.ItemIsUserCheckable)
                item.setToolTip(f"unavailable: {reason}")
                item.setForeground(pg.mkColor("#999"))
        self.status_message.emit(f"{name} is unavailable: {reason}", 8000)

    # ---- drawing ------------------------------------------------------------------------------
    def _metric(self) -> str:
        return "GB/s" if self.metric_combo.currentIndex() == 0 else "Gelem/s"

    def _clear_plot(self):
        for item in list(self._curves.values()) + list(self._spreads.values()):
            self.plot.removeItem(item)
        self._curves.clear()
        self._spreads.clear()
        self.legend.clear()
        for item in self._ref_items:
            self.plot.removeItem(item)
        self._ref_items.clear()
        if self._cross_item is not None:
            self.plot.removeItem(self._cross_item)
            self._cross_item = None

    def _set_title(self):
        op = get_op(self._sweep_op)
        unit = "GB/s" if self._metric() == "GB/s" else "G elements/s"
        self.plot.setTitle(f"{op.name}: {op.formula} — {unit} against N", color="#333", size="11pt")

    def _redraw(self):
        self.plot.setLabel("left", "GB/s" if self._metric() == "GB/s" else "G elements/s")
        self._set_title()
        for impl, mode in list(self._curves):
            self._update_curve(impl, mode)
        self._draw_references()
        self._update_crossover()

    def _curve_data(self, impl: str, mode: str):
        metric = self._metric()
        pts = sorted((p.N, p.rate(metric)) for p in self.points
                     if p.impl == impl and p.mode == mode and not p.skipped and p.rate(metric))
        return np.array([n for n, _ in pts], float), np.array([v for _, v in pts], float)

    def _spread_data(self, impl: str, mode: str):
        """Each point's fastest-to-slowest range of the repeats, in the chart's log10 units."""
        metric = self._metric()
        rows = []
        for p in self.points:
            if p.impl != impl or p.mode != mode or p.skipped or not p.rate(metric):
                continue
            lo_hi = p.rate_range(metric)
            if lo_hi is not None:
                rows.append((p.N, p.rate(metric), *lo_hi))
        rows.sort()
        x = np.log10([r[0] for r in rows]) if rows else np.zeros(0)
        y = np.log10([r[1] for r in rows]) if rows else np.zeros(0)
        top = np.log10([r[3] for r in rows]) - y if rows else np.zeros(0)
        bottom = y - np.log10([r[2] for r in rows]) if rows else np.zeros(0)
        return x, y, top, bottom

    def _update_curve(self, impl: str, mode: str):
        x, y = self._curve_data(impl, mode)
        curve = self._curves.get((impl, mode))
        if curve is None and not len(x):
            return  # nothing measured (e.g. no event timing in the simulator): no legend entry
        colour = IMPL_COLOURS.get(impl, "#444")
        if curve is None:
            pen = pg.mkPen(colour, width=2, style=MODE_STYLES.get(mode, Qt.PenStyle.SolidLine))
            curve = self.plot.plot([], [], pen=pen, symbol=MODE_SYMBOLS.get(mode, "o"),
                                   symbolSize=6, symbolBrush=colour, symbolPen=colour)
            self._curves[(impl, mode)] = curve
            # the spread of the repeats: an error bar from the slowest to the fastest run. The
            # plot is log-log and ErrorBarItem has no log mode, so it takes log10 coordinates
            # (beam: a tenth of the log10(2) between two sizes of a sweep)
            bars = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), beam=0.03,
                                   pen=pg.mkPen(colour, width=1.5))
            self.plot.addItem(bars, ignoreBounds=True)
            self._spreads[(impl, mode)] = bars
            self._update_key()
        curve.setData(x, y)
        sx, sy, top, bottom = self._spread_data(impl, mode)
        self._spreads[(impl, mode)].setData(x=sx, y=sy, top=top, bottom=bottom)
        self._apply_visibility()

    def _update_key(self):
        """The legend as a key: one entry per implementation drawn (its colour) and one per mode
        (its line style and symbol), not one per curve: 7 implementations × 3 modes would be 21
        entries covering the chart. Clicking an entry ticks or unticks it in the side panel."""
        self.legend.clear()
        impls = [i for i in IMPL_COLOURS if any(k[0] == i for k in self._curves)]
        impls += sorted({k[0] for k in self._curves} - set(impls))
        modes = [m for m in vector_sweep.MODES if any(k[1] == m for k in self._curves)]
        for kind, name in [("impl", i) for i in impls] + [("mode", m) for m in modes]:
            sample = self._key_samples.get((kind, name))
            if sample is None:
                if kind == "impl":
                    colour = IMPL_COLOURS.get(name, "#444")
                    sample = pg.PlotDataItem(pen=pg.mkPen(colour, width=3))
                else:
                    sample = pg.PlotDataItem(pen=pg.mkPen(KEY_GREY, width=2, style=MODE_STYLES[name]),
                                             symbol=MODE_SYMBOLS[name], symbolSize=6,
                                             symbolBrush=KEY_GREY, symbolPen=KEY_GREY)
                sample.visibleChanged.connect(lambda k=(kind, name): self._on_key_clicked(*k))
                self._key_samples[(kind, name)] = sample
            self.legend.addItem(sample, name if kind == "impl" else f"{name} (all)")
        self._apply_visibility()

    def _on_key_clicked(self, kind: str, name: str):
        on = self._key_samples[(kind, name)].isVisible()
        if kind == "mode":
            if self.mode_checks[name].isEnabled():
                self.mode_checks[name].setChecked(on)
            return
        for i in range(self.impl_list.count()):
            item = self.impl_list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == name and item.flags() & Qt.ItemFlag.ItemIsEnabled:
                item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def _apply_visibility(self, *_):
        checked = set(self.checked_impls())
        modes = set(self.checked_modes())
        for (impl, mode), curve in self._curves.items():
            on = impl in checked and mode in modes
            curve.setVisible(on)
            self._spreads[(impl, mode)].setVisible(on)
        # the key's samples show what is ticked (signals held: this is not a click)
        for (kind, name), sample in self._key_samples.items():
            sample.blockSignals(True)
            sample.setVisible(name in (checked if kind == "impl" else modes))
            sample.blockSignals(False)
        self.legend.update()

    def _reference_value(self, key: str):
        v = self.refs.get(key)
        if not v or self._metric() == "GB/s":
            return v
        # elements per second that a copy at this bandwidth allows for the swept op
        op = get_op(self._sweep_op)
        per = op.bus_bytes_per_element if key in ("h2d-pinned", "d2h-pinned") else op.bytes_per_element
        return v / per

    def _draw_references(self):
        for item in self._ref_items:
            self.plot.removeItem(item)
        self._ref_items.clear()
        unit = "GB/s" if self._metric() == "GB/s" else "G elem/s"
        for key, text, colour, style, where in REF_LINES:
            v = self._reference_value(key)
            if not v:
                continue
            line = pg.InfiniteLine(pos=math.log10(v), angle=0, movable=False,
                                   pen=pg.mkPen(colour, width=1.5, style=style),
                                   label=f"{text} {v:,.0f} {unit}" if v >= 100 else f"{text} {v:.3g} {unit}",
                                   labelOpts={"position": where, "color": "#333",
                                              "fill": (255, 255, 255, 190),
                                              "anchors": [(0, 1), (0, 1)]})
            line.setToolTip(f"{text}: measured on this machine at the start of the sweep")
            self.plot.addItem(line, ignoreBounds=True)
            self._ref_items.append(line)
        self._update_bounds()

    def _update_bounds(self):
        vals = [v for v in (self._reference_value(k) for k, *_ in REF_LINES) if v]
        ns = [p.N for p in self.points if p.N > 0] or [2**vector_sweep.MIN_EXP]
        if vals:
            self._bounds_item.setData([min(ns), max(ns)], [min(vals), max(vals)])
        else:
            self._bounds_item.setData([], [])

    def crossover_n(self) -> int | None:
        return vector_sweep.crossover(self.points, self._sweep_op)

    def _update_crossover(self):
        if self._cross_item is not None:
            self.plot.removeItem(self._cross_item)
            self._cross_item = None
        n = self.crossover_n()
        if n is None:
            return
        self._cross_item = pg.InfiniteLine(
            pos=math.log10(n), angle=90, movable=False,
            pen=pg.mkPen("#555", width=1, style=Qt.PenStyle.DashLine),
            label=f"GPU end to end beats the CPU from N = {_pow2_label(n)}",
            labelOpts={"position": 0.04, "color": "#333", "anchors": [(1, 1), (1, 1)],
                       "fill": (255, 255, 255, 200)})
        self.plot.addItem(self._cross_item, ignoreBounds=True)

    # ---- the table and its exports ------------------------------------------------------------
    @staticmethod
    def row_values(p: vector_sweep.SweepPoint) -> list[str]:
        return [p.op, p.impl, p.mode, str(p.N), _fmt(p.h2d_ms), _fmt(p.kernel_ms), _fmt(p.d2h_ms),
                _fmt(p.time_ms), _fmt(p.gbs), _fmt(p.gelems), p.skipped or p.note or ""]

    def _add_row(self, p: vector_sweep.SweepPoint):
        r = self.table.rowCount()
        self.table.insertRow(r)
        for c, text in enumerate(self.row_values(p)):
            item = QTableWidgetItem(text)
            if c == len(COLUMNS) - 1 and text:
                item.setToolTip(text)
            if 3 <= c < len(COLUMNS) - 1:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(r, c, item)
        self.table.scrollToBottom()

    def table_rows(self) -> list[list[str]]:
        return [[self.table.item(r, c).text() if self.table.item(r, c) else ""
                 for c in range(self.table.columnCount())] for r in range(self.table.rowCount())]

    def export_csv(self, path: str):
        buf = io.StringIO(newline="")
        w = csv.writer(buf)
        w.writerow(COLUMNS)
        w.writerows(self.table_rows())
        write_text(path, buf.getvalue(), newline="")    # atomic: a failure keeps the old file
        self.status_message.emit(f"Saved {self.table.rowCount()} row(s) to {path}", 5000)

    def export_json(self, path: str):
        doc = {"view": self.view_id, "backend": self.backend.name, "device": self.backend.device,
               "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
               "op": self._sweep_op, "references_gbs": self.refs,
               "crossover_n": self.crossover_n(), "unavailable": self.unavailable,
               "error": self.last_error,
               "points": [p.as_dict() for p in self.points]}
        write_json(path, doc, indent=1)                   # atomic: a failure keeps the old file
        self.status_message.emit(f"Saved {len(self.points)} point(s) to {path}", 5000)

    def _ask_csv(self):
        path, _ = QFileDialog.getSaveFileName(self, "Export the sweep as CSV", "throughput.csv",
                                              "CSV files (*.csv)")
        if path:
            self._save(self.export_csv, path)

    def _ask_json(self):
        path, _ = QFileDialog.getSaveFileName(self, "Export the sweep as JSON", "throughput.json",
                                              "JSON files (*.json)")
        if path:
            self._save(self.export_json, path)

    def _save(self, fn, path):
        try:
            check_writable(path)
            fn(path)
        except ValueError as exc:
            self.error_message.emit(str(exc))
        except OSError as exc:
            self.error_message.emit(f"Could not save {path}: {exc.strerror or exc}")

