"""The timing panel: each view's last frame phase by phase, its recent frames, and totals per phase.

The window passes every Timings with the view it came from (`panel.add(t, view_id)`); the panel
keeps a history per view and backend and shows the one whose jobs arrived last (or the one picked
in its list), so a sweep's points and a zoom's frames never share a chart. The arithmetic (named
phases that add up, "unaccounted" for the rest) lives in explorer.timing_breakdown, the histories
in explorer.timing_log, the words in explorer.timing_text and the bar in explorer.timing_bar.

Jobs arrive at frame rate; the widgets are refreshed by a timer at most ~15 times a second, so a
100 frames/s view does not spend its frames redrawing statistics.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import Qt, QTimer
from PyQt6.QtGui import QAction
from PyQt6.QtWidgets import (QComboBox, QDockWidget, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                             QStackedWidget, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from kernels.timing import Timings
from services.views import VIEWS

from .timing_bar import JobAxis, PhaseBar
from .timing_breakdown import EXPLAIN, FRAME_PHASES, phase_ms
from .timing_log import HISTORY, History, TimingLog
from .timing_text import COLOURS, NO_COPIES, compile_text, listing_html, totals_rows

VIEW_TITLES = dict(VIEWS)
WHERE = {"cuda": "GPU", "cpu": "CPU"}


def source_title(source: str | None) -> str:
    if source is None:
        return "all views"
    return VIEW_TITLES.get(source, source)


def key_text(key) -> str:
    """A history's name: its view and where it ran ("Mandelbrot zoom — GPU")."""
    return f"{source_title(key[0])} — {WHERE.get(key[1], key[1])}"


class TimingPanel(QWidget):
    """Feed it Timings with add(t, source); everything else is display."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.log = TimingLog(HISTORY)
        self._dirty = False

        self.source_combo = QComboBox()
        self.source_combo.setToolTip("Whose jobs the panel shows: it follows the view that "
                                     "computes, or pick one")
        self.source_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.source_combo.activated.connect(self._on_pick)
        self.title = QLabel("Last frame: none yet")
        self.title.setWordWrap(True)
        self.bar = PhaseBar()
        self.numbers = QLabel("")
        self.numbers.setTextFormat(Qt.TextFormat.RichText)
        self.numbers.setWordWrap(True)
        self.numbers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.compile_label = QLabel("JIT compile: none yet")
        self.compile_label.setWordWrap(True)
        self.compile_label.setToolTip("Compile time is kept out of the frames so the first call's "
                                      "JIT does not squash the chart; numba caches kernels on disk.")

        self.plot = pg.PlotWidget(background="w", axisItems={"bottom": JobAxis("bottom")})
        self.plot.setMinimumHeight(140)
        self.plot.setLabel("left", "ms")
        self.plot.setLabel("bottom", "frame of this view (newest right)")
        for side in ("left", "bottom"):
            self.plot.getAxis(side).enableAutoSIPrefix(False)   # never "ms (x0.001)"
        self.plot.showGrid(y=True, alpha=0.3)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self._bars = {}
        for ph in FRAME_PHASES:
            item = pg.BarGraphItem(x=[], height=[], width=0.8, y0=[], brush=COLOURS[ph], pen=None)
            self.plot.addItem(item)
            self._bars[ph] = item
        self.placeholder = QLabel("Each frame of the view will appear here as a bar split by "
                                  "phase (copies, kernel, host, unaccounted), newest on the right.")
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet("color: #666; border: 1px solid #ddd; background: white;")
        self.chart = QStackedWidget()
        self.chart.addWidget(self.placeholder)
        self.chart.addWidget(self.plot)

        # frames and compiles are counted in the note and the compile line, so no "calls" column:
        # the phase names keep their width in a narrow dock
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["phase", "total", "share", "average"])
        self.table.verticalHeader().setVisible(False)
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setToolTip("Like nvprof's 'GPU activities': time per phase over the shown view's "
                              "frames since the last reset (compile excluded from the shares).")
        self.table_note = QLabel("")
        self.table_note.setWordWrap(True)
        self.table_note.setStyleSheet("color: #555;")
        self.reset_btn = QPushButton("Reset")
        self.reset_btn.setToolTip("Clear the history and totals of the jobs shown (the view and "
                                  "backend picked above); the other views keep theirs. "
                                  "Right-click: Reset all")
        self.reset_btn.clicked.connect(self.reset)
        self.reset_btn.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.reset_all_action = QAction("Reset all (every view's history)", self.reset_btn)
        self.reset_all_action.triggered.connect(self.reset_all)
        self.reset_btn.addAction(self.reset_all_action)

        top = QHBoxLayout()
        top.addWidget(QLabel("Jobs of"))
        top.addWidget(self.source_combo, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.table_note, 1)
        bottom.addWidget(self.reset_btn, 0, Qt.AlignmentFlag.AlignRight)
        # narrower than this, the table's phase names and the listing would be cut
        self.setMinimumWidth(340)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.title)
        lay.addWidget(self.bar)
        lay.addWidget(self.numbers)
        lay.addWidget(self.compile_label)
        lay.addWidget(self.chart, 2)
        lay.addWidget(self.table, 1)
        lay.addLayout(bottom)

        self._timer = QTimer(self)
        self._timer.setInterval(66)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        self._dirty = True
        self.refresh()

    # ---- data ---------------------------------------------------------------------------------
    def add(self, t: Timings, source: str | None = None):
        """One job's Timings; `source` is the view id it came from (None: one shared history)."""
        self.log.add(t, source)
        self._dirty = True

    def show_source(self, source: str | None):
        """Show this view's newest history (e.g. when its tab is chosen)."""
        self.log.show_source(source)
        self._dirty = True
        self.refresh()

    def reset(self):
        """Clear the shown history (one view on one backend) only."""
        self.log.reset_shown()
        self._dirty = True
        self.refresh()

    def reset_all(self):
        """Clear every view's history."""
        self.log.reset()
        self._dirty = True
        self.refresh()

    def shown(self) -> History | None:
        return self.log.shown()

    def last(self) -> Timings | None:
        return self.log.last()

    def stats(self) -> dict[str, tuple[float, int]]:
        """Totals of the shown history: phase -> (ms, calls)."""
        return self.log.stats()

    # ---- display --------------------------------------------------------------------------------
    def _on_pick(self, index: int):
        if self.log.pick(self.source_combo.itemData(index)):
            self._dirty = True
            self.refresh()

    def refresh(self):
        if not self._dirty:
            return
        self._dirty = False
        self._refresh_combo()
        h = self.shown()
        frame = h.last_frame if h else None
        if h is None:
            wanted = self.log.wanted_source
            who = source_title(wanted) if wanted else "a view"
            self.title.setText(f"Last frame: none yet. When {who} computes, its frame appears "
                               "here split into copies, kernel and host time.")
            self.bar.set_timings(None, "no frame yet")
            self.numbers.setText("")
        elif frame is None:
            self.title.setText(f"{key_text(self.log.shown_key)}: kernels compiled, no frame yet")
            self.bar.set_timings(None, "compiled; waiting for the first frame")
            self.numbers.setText("")
        else:
            self.title.setText(f"Last frame of {key_text(self.log.shown_key)}: {frame.label or 'job'}")
            self.bar.set_timings(frame)
            self.numbers.setText(listing_html(frame))
        self.compile_label.setText(compile_text(h))
        self._refresh_chart(h)
        self._refresh_table(h)

    def _refresh_combo(self):
        keys = self.log.keys()
        # a view reset while others kept their jobs: listed as waiting, not as another view
        waiting = bool(keys) and self.log.shown_key is None
        wanted = keys + [None] if waiting else keys
        current = [self.source_combo.itemData(i) for i in range(self.source_combo.count())]
        if current != wanted:
            self.source_combo.blockSignals(True)
            self.source_combo.clear()
            for k in keys:
                self.source_combo.addItem(key_text(k), k)
            if waiting:
                self.source_combo.addItem(f"{source_title(self.log.wanted_source)} — no jobs "
                                          "since the reset", None)
            self.source_combo.blockSignals(False)
        if not keys:
            self.source_combo.addItem("no jobs yet", None)
            self.source_combo.setEnabled(False)
            return
        self.source_combo.setEnabled(True)
        self.source_combo.setCurrentIndex(wanted.index(self.log.shown_key))

    def _refresh_chart(self, h: History | None):
        frames = list(h.frames) if h else []
        if not frames:
            self.chart.setCurrentWidget(self.placeholder)
            for item in self._bars.values():
                item.setOpts(x=[], height=[], y0=[])
            return
        self.chart.setCurrentWidget(self.plot)
        x = np.array([n for n, _ in frames], dtype=float)
        base = np.zeros(len(frames))
        for ph in FRAME_PHASES:
            hgt = np.array([phase_ms(t)[ph] or 0.0 for _, t in frames], dtype=float)
            self._bars[ph].setOpts(x=x, height=hgt, y0=base.copy(), width=0.8)
            base += hgt
        last = int(x[-1])
        lo = max(0.5, last - HISTORY + 0.5) if len(frames) >= 10 else 0.5
        hi = max(last, 10) + 0.5 if len(frames) < 10 else last + 0.5
        self.plot.setXRange(lo, hi, padding=0)
        self.plot.setYRange(0, float(base.max()) * 1.08 or 1.0, padding=0)

    def _refresh_table(self, h: History | None):
        self.table.setVisible(h is not None)    # the chart's placeholder says what will come
        if h is None:
            self.table.setRowCount(0)
            self.table_note.setText("")
            return
        rows = totals_rows(h)
        self.table.setRowCount(len(rows))
        for i, (ph, vals) in enumerate(rows):
            for j, v in enumerate(vals):
                item = QTableWidgetItem(v)
                if j:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                else:
                    item.setToolTip(EXPLAIN.get(ph, ""))
                self.table.setItem(i, j, item)
        rowh = self.table.verticalHeader().defaultSectionSize()
        self.table.setFixedHeight(self.table.horizontalHeader().height() + rowh * len(rows) + 4)
        note = f"{h.count} frame(s) of {key_text((h.source, h.backend))} since the last reset"
        self.table_note.setText(note + (f"; {NO_COPIES}" if h.on_cpu else ""))


class TimingDock(QDockWidget):
    def __init__(self, parent=None):
        super().__init__("Timing", parent)
        self.setObjectName("TimingDock")
        self.panel = TimingPanel(self)
        self.setWidget(self.panel)
        self.setToolTip("Where each frame's time went: kernel versus copies between host and device")
