"""The timing panel: where the last job's time went, a rolling history, and an nvprof-like table.

Jobs arrive at frame rate; the widgets are refreshed by a timer at most ~15 times a second, so a
100 frames/s view does not spend its frames redrawing statistics.
"""
from __future__ import annotations

from collections import deque

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QRectF, Qt, QTimer
from PyQt6.QtGui import QColor, QPainter
from PyQt6.QtWidgets import (QDockWidget, QGridLayout, QHeaderView, QLabel, QPushButton, QSizePolicy,
                             QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from kernels.timing import Timings

# the phases that add up to a frame, in the order they happen; compile is shown apart
STACK = ("h2d", "kernel", "d2h", "host")
NAMES = {"compile": "JIT compile", "h2d": "host→device copy", "kernel": "kernel / compute",
         "d2h": "device→host copy", "host": "host (display, other)", "other": "unaccounted"}
COLOURS = {"h2d": "#e8a33d", "kernel": "#3d8fe8", "d2h": "#a05ad6", "host": "#8a8f98",
           "other": "#d0d3d8", "compile": "#d9534f"}
HISTORY = 200


def fmt_ms(ms) -> str:
    if ms is None:
        return "n/a"
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.3f} ms"


def fmt_bytes(n: int) -> str:
    if n >= 2**30:
        return f"{n / 2**30:.2f} GiB"
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    if n >= 2**10:
        return f"{n / 2**10:.1f} KiB"
    return f"{n} B"


def describe(t: Timings) -> str:
    """One line per phase with ms, bytes and GB/s: the numbers behind the bar."""
    lines = []
    for p in STACK:
        ms = t.phases_ms.get(p)
        if ms is None and not t.bytes.get(p):
            continue
        text = f"{NAMES[p]}: {fmt_ms(ms)}"
        if p in ("h2d", "d2h"):
            nb = t.bytes.get(p, 0)
            text += f"  ({fmt_bytes(nb)}"
            bw = t.bandwidth_gbs(p)
            text += f", {bw:.1f} GB/s)" if bw else ")"
        lines.append(text)
        if p == "kernel":  # sub-phases (e.g. colourise) are timed inside the compute phase
            lines.extend(f"  incl. {name}: {fmt_ms(v)}" for name, v in t.detail.items())
    lines.append(f"total (wall clock): {fmt_ms(t.phases_ms.get('total'))}")
    return "\n".join(lines)


class PhaseBar(QWidget):
    """A horizontal bar split by phase, widths proportional to time."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMinimumHeight(22)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.segments: list[tuple[str, float]] = []

    def set_timings(self, t: Timings | None):
        segs = []
        if t is not None:
            for p in STACK:
                ms = t.phases_ms.get(p)
                if ms:
                    segs.append((p, ms))
            total = t.phases_ms.get("total") or 0.0
            rest = total - sum(ms for _, ms in segs)
            # GPU phases overlap with the host's wait, so only an unexplained remainder shows
            if rest > 0.05 * max(total, 1e-9):
                segs.append(("other", rest))
        self.segments = segs
        self.setToolTip(describe(t) if t else "")
        self.update()

    def paintEvent(self, ev):
        p = QPainter(self)
        r = self.rect().adjusted(0, 2, -1, -2)
        p.fillRect(r, QColor("#f2f3f5"))
        total = sum(ms for _, ms in self.segments)
        if total <= 0:
            p.setPen(QColor("#777"))
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, "no job yet")
            return
        x = float(r.left())
        for phase, ms in self.segments:
            w = r.width() * ms / total
            rect = QRectF(x, r.top(), w, r.height())
            p.fillRect(rect, QColor(COLOURS[phase]))
            if w > 40:
                p.setPen(QColor("white"))
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, fmt_ms(ms))
            x += w
        p.end()


class TimingPanel(QWidget):
    """Feed it Timings with add(); everything else is display."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._history: deque[Timings] = deque(maxlen=HISTORY)
        self._stats: dict[str, list] = {}
        self._dirty = False
        self.jobs = 0

        self.title = QLabel("Last job: none yet")
        self.title.setWordWrap(True)
        self.bar = PhaseBar()
        self.numbers = QLabel("")
        self.numbers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.numbers.setStyleSheet("font-family: monospace;")
        self.compile_label = QLabel("JIT compile: none yet")
        self.compile_label.setToolTip("Compile time is kept apart so the first call's JIT does not "
                                      "squash the chart; numba caches kernels on disk after it.")
        legend = QGridLayout()
        for i, ph in enumerate(STACK):
            legend.addWidget(QLabel(f"<span style='color:{COLOURS[ph]}'>■</span> {NAMES[ph]}"), i // 2, i % 2)

        self.plot = pg.PlotWidget(background="w")
        self.plot.setMinimumHeight(140)
        self.plot.setLabel("left", "ms")
        self.plot.setLabel("bottom", "job (newest right)")
        self.plot.showGrid(y=True, alpha=0.3)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self._bars = {}
        for ph in STACK:
            item = pg.BarGraphItem(x=[], height=[], width=0.9, y0=[], brush=COLOURS[ph], pen=None)
            self.plot.addItem(item)
            self._bars[ph] = item

        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["phase", "total", "share", "calls", "average"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setToolTip("Like nvprof's 'GPU activities': time per phase over every job since "
                              "the last reset (compile excluded from the shares).")
        self.reset_btn = QPushButton("Reset")
        self.reset_btn.setToolTip("Clear the history and the table")
        self.reset_btn.clicked.connect(self.reset)

        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addWidget(self.bar)
        lay.addLayout(legend)
        lay.addWidget(self.numbers)
        lay.addWidget(self.compile_label)
        lay.addWidget(self.plot, 2)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.reset_btn, 0, Qt.AlignmentFlag.AlignRight)

        self._timer = QTimer(self)
        self._timer.setInterval(66)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()

    # ---- data ---------------------------------------------------------------------------------
    def add(self, t: Timings):
        self._history.append(t)
        self.jobs += 1
        for ph in ("compile",) + STACK:
            ms = t.phases_ms.get(ph)
            if ms is None:
                continue
            s = self._stats.setdefault(ph, [0.0, 0])
            s[0] += ms
            s[1] += 1
        self._dirty = True

    def reset(self):
        self._history.clear()
        self._stats.clear()
        self.jobs = 0
        self._dirty = True
        self.refresh()

    def last(self) -> Timings | None:
        return self._history[-1] if self._history else None

    def stats(self) -> dict[str, tuple[float, int]]:
        return {k: (v[0], v[1]) for k, v in self._stats.items()}

    # ---- display --------------------------------------------------------------------------------
    def refresh(self):
        if not self._dirty:
            return
        self._dirty = False
        t = self.last()
        self.bar.set_timings(t)
        if t is None:
            self.title.setText("Last job: none yet")
            self.numbers.setText("")
        else:
            where = {"cuda": "GPU", "cpu": "CPU"}.get(t.backend, t.backend)
            self.title.setText(f"Last job: {t.label or 'job'} on {where}")
            self.numbers.setText(describe(t))
        comp = self._stats.get("compile")
        if comp:
            last_c = next((h.phases_ms["compile"] for h in reversed(self._history)
                           if h.phases_ms.get("compile") is not None), None)
            self.compile_label.setText(f"JIT compile: {fmt_ms(comp[0])} in {comp[1]} job(s)"
                                       + (f", last {fmt_ms(last_c)}" if last_c is not None else ""))
        else:
            self.compile_label.setText("JIT compile: none yet")
        self._refresh_chart()
        self._refresh_table()

    def _refresh_chart(self):
        hist = list(self._history)
        n = len(hist)
        x = np.arange(n, dtype=float)
        base = np.zeros(n)
        for ph in STACK:
            h = np.array([t.phases_ms.get(ph) or 0.0 for t in hist], dtype=float)
            self._bars[ph].setOpts(x=x, height=h, y0=base.copy(), width=0.9)
            base += h

    def _refresh_table(self):
        rows = [(ph, *self._stats[ph]) for ph in ("compile",) + STACK if ph in self._stats]
        grand = sum(tot for ph, tot, _ in rows if ph != "compile") or 1.0
        self.table.setRowCount(len(rows))
        for i, (ph, tot, calls) in enumerate(rows):
            share = "—" if ph == "compile" else f"{100 * tot / grand:.1f} %"
            vals = [NAMES[ph], fmt_ms(tot), share, str(calls), fmt_ms(tot / calls)]
            for j, v in enumerate(vals):
                item = QTableWidgetItem(v)
                if j:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)


class TimingDock(QDockWidget):
    def __init__(self, parent=None):
        super().__init__("Timing", parent)
        self.setObjectName("TimingDock")
        self.panel = TimingPanel(self)
        self.setWidget(self.panel)
        self.setToolTip("Where each frame's time went: kernel versus copies between host and device")
