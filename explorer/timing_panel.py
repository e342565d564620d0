"""The timing panel: each view's last frame phase by phase, its recent frames, and totals per phase.

The window passes every Timings with the view it came from (`panel.add(t, view_id)`); the panel
keeps a history per view and backend and shows the one whose jobs arrived last (or the one picked
in its list), so a sweep's points and a zoom's frames never share a chart. The arithmetic (named
phases that add up, "unaccounted" for the rest) lives in explorer.timing_breakdown.

Jobs arrive at frame rate; the widgets are refreshed by a timer at most ~15 times a second, so a
100 frames/s view does not spend its frames redrawing statistics.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QRectF, Qt, QTimer
from PyQt6.QtGui import QBrush, QColor, QFontMetrics, QPainter
from PyQt6.QtWidgets import (QComboBox, QDockWidget, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                             QSizePolicy, QStackedWidget, QTableWidget, QTableWidgetItem,
                             QVBoxLayout, QWidget)

from kernels.timing import Timings
from services.views import VIEWS

from .timing_breakdown import (COPY_PHASES, EXPLAIN, FRAME_PHASES, NAMES, History, Segment,
                               frame_segments, frame_total, phase_ms, sub_phases)

COLOURS = {"h2d": "#e8a33d", "kernel": "#3d8fe8", "compute": "#3d8fe8", "colourise": "#93c5f7",
           "d2h": "#a05ad6", "host": "#6b7280", "host-work": "#6b7280", "display": "#a3aab5",
           "other": "#d4d7dd", "compile": "#d9534f"}
HISTORY = 200
VIEW_TITLES = dict(VIEWS)
WHERE = {"cuda": "GPU", "cpu": "CPU"}
NO_COPIES = "no host↔device copies on the CPU"


def fmt_ms(ms) -> str:
    if ms is None:
        return "not timed"
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


def source_title(source: str | None) -> str:
    if source is None:
        return "all views"
    return VIEW_TITLES.get(source, source)


def _copy_note(t: Timings, phase: str) -> str:
    nb = t.bytes.get(phase, 0)
    if not nb:
        return ""
    bw = t.bandwidth_gbs(phase)
    return f"{fmt_bytes(nb)} at {bw:.1f} GB/s" if bw else f"{fmt_bytes(nb)} moved"


def describe(t: Timings) -> str:
    """The frame in plain lines (the bar's tooltip): every phase of the bar, then its total."""
    on_cpu = t.backend == "cpu"
    lines = []
    for phase, ms in phase_ms(t).items():
        if on_cpu and phase in COPY_PHASES:
            continue
        if ms is None and not t.bytes.get(phase):
            continue
        note = _copy_note(t, phase) if phase in COPY_PHASES else ""
        lines.append(f"{NAMES[phase]}: {fmt_ms(ms)}" + (f"  ({note})" if note else ""))
    lines.append(f"frame total: {fmt_ms(frame_total(t))}")
    if on_cpu:
        lines.append(NO_COPIES)
    return "\n".join(lines)


def _text_colour(bg: str) -> QColor:
    c = QColor(bg)
    lum = 0.299 * c.red() + 0.587 * c.green() + 0.114 * c.blue()
    return QColor("#111") if lum > 150 else QColor("white")


def nice_step(span: float, max_ticks: int) -> float:
    """A 1-2-5 step that cuts `span` into at most `max_ticks` pieces."""
    if span <= 0 or max_ticks < 1:
        return 1.0
    raw = span / max_ticks
    base = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * base >= raw:
            return m * base
    return 10 * base


def _tick_text(v: float, step: float) -> str:
    if step >= 1:
        return f"{v:.0f}"
    digits = max(0, -math.floor(math.log10(step)))
    return f"{v:.{digits}f}"


class PhaseBar(QWidget):
    """The last frame's phases end to end on one millisecond axis, like a profiler's timeline row.

    Durations are laid end to end in the order the phases usually run; a label is drawn inside its
    segment only where it fits whole (the listing below carries every number)."""

    BAR_H = 22
    RULER_H = 16

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMinimumHeight(self.BAR_H + self.RULER_H + 4)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.segments: list[Segment] = []
        self.empty_text = "no frame yet"

    def set_timings(self, t: Timings | None, empty_text: str = "no frame yet"):
        self.segments = frame_segments(t) if t is not None else []
        self.empty_text = empty_text
        self.setToolTip(describe(t) + "\n\nPhases laid end to end; hover the listing for what "
                        "each one is." if t is not None else "")
        self.update()

    def total(self) -> float:
        return sum(s.ms for s in self.segments)

    def _bar_rect(self) -> QRectF:
        return QRectF(1, 2, max(self.width() - 2, 1), self.BAR_H)

    def segment_rects(self) -> list[tuple[Segment, QRectF, str | None]]:
        """Each segment's rectangle and the label drawn inside it (None where it would not fit)."""
        r, total = self._bar_rect(), self.total()
        if total <= 0:
            return []
        fm = QFontMetrics(self.font())
        out, x = [], r.left()
        for seg in self.segments:
            w = r.width() * seg.ms / total
            rect = QRectF(x, r.top(), w, r.height())
            text = fmt_ms(seg.ms)
            out.append((seg, rect, text if fm.horizontalAdvance(text) + 8 <= w else None))
            x += w
        return out

    def ruler_ticks(self) -> list[tuple[float, str]]:
        """(x in pixels, text) of the time axis under the bar; the last label says "ms"."""
        total, r = self.total(), self._bar_rect()
        if total <= 0:
            return []
        fm = QFontMetrics(self.font())
        widest = fm.horizontalAdvance(f"{total:.1f} ms") + 12
        step = nice_step(total, max(1, int(r.width() // widest)))
        ticks, k = [], 0
        while k * step <= total * (1 + 1e-9):
            v = k * step
            ticks.append((r.left() + r.width() * v / total, _tick_text(v, step)))
            k += 1
        if ticks:
            x, text = ticks[-1]
            ticks[-1] = (x, text + " ms")
        return ticks

    def paintEvent(self, ev):
        p = QPainter(self)
        r = self._bar_rect()
        p.fillRect(r, QColor("#f2f3f5"))
        if not self.segments:
            p.setPen(QColor("#666"))
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, self.empty_text)
            p.end()
            return
        for seg, rect, label in self.segment_rects():
            p.fillRect(rect, QColor(COLOURS[seg.key]))
            if seg.key == "other":          # hatched: time that no phase measured
                p.fillRect(rect, QBrush(QColor("#9aa0aa"), Qt.BrushStyle.BDiagPattern))
            if label:
                p.setPen(_text_colour(COLOURS[seg.key]))
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
        fm = QFontMetrics(self.font())
        p.setPen(QColor("#555"))
        y = r.bottom() + 1
        for x, text in self.ruler_ticks():
            p.drawLine(int(x), int(y), int(x), int(y + 3))
            w = fm.horizontalAdvance(text)
            left = min(max(x - w / 2, 0), self.width() - w - 1)   # keep the end labels whole
            p.drawText(int(left), int(y + 4 + fm.ascent()), text)
        p.end()


class JobAxis(pg.AxisItem):
    """Whole frame numbers only: a frame is 1, 2, 3, never 0.5."""

    def tickValues(self, minVal, maxVal, size):
        lo, hi = math.ceil(max(minVal, 1)), math.floor(maxVal)
        if hi < lo:
            return []
        step = max(1, int(nice_step(hi - lo + 1, max(1, int(size // 45)))))
        first = lo + (-lo) % step
        return [(step, list(range(first, hi + 1, step)))]

    def tickStrings(self, values, scale, spacing):
        return [str(round(v)) for v in values]


class TimingPanel(QWidget):
    """Feed it Timings with add(t, source); everything else is display."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._histories: dict[tuple, History] = {}
        self._shown: tuple | None = None        # (source, backend) on screen
        self._arriving: tuple | None = None     # the key of the newest job
        self._wanted_source: str | None = None  # asked for by show_source before it had a job
        self._dirty = False
        self.jobs = 0

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
        self.reset_btn.setToolTip("Clear every view's history and totals")
        self.reset_btn.clicked.connect(self.reset)

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
        key = (source, t.backend)
        hist = self._histories.get(key)
        if hist is None:
            hist = self._histories[key] = History(source, t.backend, maxlen=HISTORY)
        hist.add(t)
        self.jobs += 1
        # follow the jobs: switch when they start coming from another view or backend, so a view
        # picked in the list stays on screen while the same view keeps computing
        if key != self._arriving:
            self._arriving = key
            self._shown = key
        self._dirty = True

    def show_source(self, source: str | None):
        """Show this view's newest history (e.g. when its tab is chosen)."""
        keys = [k for k in self._histories if k[0] == source]
        self._wanted_source = source
        if keys:
            self._shown = keys[-1] if self._arriving not in keys else self._arriving
        else:
            self._shown = None
        self._dirty = True
        self.refresh()

    def reset(self):
        self._histories.clear()
        self._shown = self._arriving = None
        self.jobs = 0
        self._dirty = True
        self.refresh()

    def shown(self) -> History | None:
        return self._histories.get(self._shown) if self._shown else None

    def last(self) -> Timings | None:
        h = self.shown()
        return h.last if h else None

    def stats(self) -> dict[str, tuple[float, int]]:
        """Totals of the shown history: phase -> (ms, calls)."""
        h = self.shown()
        return {k: (v[0], v[1]) for k, v in h.totals.items()} if h else {}

    # ---- display --------------------------------------------------------------------------------
    def _on_pick(self, index: int):
        key = self.source_combo.itemData(index)
        if key in self._histories:
            self._shown = key
            self._dirty = True
            self.refresh()

    def _key_text(self, key) -> str:
        return f"{source_title(key[0])} — {WHERE.get(key[1], key[1])}"

    def refresh(self):
        if not self._dirty:
            return
        self._dirty = False
        self._refresh_combo()
        h = self.shown()
        frame = h.last_frame if h else None
        if h is None:
            who = source_title(self._wanted_source) if self._wanted_source else "a view"
            self.title.setText(f"Last frame: none yet. When {who} computes, its frame appears "
                               "here split into copies, kernel and host time.")
            self.bar.set_timings(None, "no frame yet")
            self.numbers.setText("")
        elif frame is None:
            self.title.setText(f"{self._key_text(self._shown)}: kernels compiled, no frame yet")
            self.bar.set_timings(None, "compiled; waiting for the first frame")
            self.numbers.setText("")
        else:
            self.title.setText(f"Last frame of {self._key_text(self._shown)}: {frame.label or 'job'}")
            self.bar.set_timings(frame)
            self.numbers.setText(self._listing(frame))
        self._refresh_compile(h)
        self._refresh_chart(h)
        self._refresh_table(h)

    def _refresh_combo(self):
        keys = list(self._histories)
        current = [self.source_combo.itemData(i) for i in range(self.source_combo.count())]
        if current != keys:
            self.source_combo.blockSignals(True)
            self.source_combo.clear()
            for k in keys:
                self.source_combo.addItem(self._key_text(k), k)
            self.source_combo.blockSignals(False)
        if not keys:
            self.source_combo.addItem("no jobs yet", None)
            self.source_combo.setEnabled(False)
            return
        self.source_combo.setEnabled(True)
        if self._shown in keys:
            self.source_combo.setCurrentIndex(keys.index(self._shown))

    def _listing(self, t: Timings) -> str:
        """The bar's numbers, one row per segment, coloured like the bar: the panel's legend."""
        total = frame_total(t) or 1.0
        on_cpu = t.backend == "cpu"
        segs = {s.key: s for s in frame_segments(t)}
        rows = []

        def row(key, name, ms, note="", indent=False):
            share = f"{100 * ms / total:.0f} %" if ms is not None else ""
            swatch = f"<span style='color:{COLOURS[key]}'>■</span>"
            pad = "&nbsp;&nbsp;&nbsp;" if indent else ""
            rows.append(f"<tr><td>{pad}{swatch} {name}</td><td align='right'>{fmt_ms(ms)}</td>"
                        f"<td align='right'>{share}</td></tr>")
            if note:    # a line of its own: beside the numbers it would not fit a narrow dock
                rows.append(f"<tr><td colspan='3' style='color:#555'>&nbsp;&nbsp;&nbsp;&nbsp;{note}"
                            "</td></tr>")

        for phase, ms in phase_ms(t).items():
            if on_cpu and phase in COPY_PHASES:
                continue
            if ms is None and not t.bytes.get(phase):
                continue
            if phase == "other" and not ms:
                continue
            note = _copy_note(t, phase) if phase in COPY_PHASES else ""
            row(phase, NAMES[phase], ms, note)
            for key in ("compute", "colourise") if phase == "kernel" else \
                       ("host-work", "display") if phase == "host" else ():
                if key in segs:
                    row(key, NAMES[key], segs[key].ms, indent=True)
        rows.append(f"<tr><td><b>frame total</b></td><td align='right'><b>{fmt_ms(frame_total(t))}"
                    "</b></td><td align='right'>100 %</td></tr>")
        notes = []
        if on_cpu:
            notes.append(NO_COPIES)
        untimed = [NAMES[p] for p in ("h2d", "kernel", "d2h") if t.backend != "cpu"
                   and t.phases_ms.get(p) is None and (t.bytes.get(p) or p == "kernel")]
        if untimed:
            notes.append("not timed (no CUDA events, e.g. under the simulator): "
                         + ", ".join(untimed) + "; their time is in “unaccounted”")
        inside = {k: v for k, v in sub_phases(t).items() if k not in ("colourise", "display")}
        if inside:
            notes.append("timed inside the phases above: "
                         + ", ".join(f"{k} {fmt_ms(v)}" for k, v in inside.items()))
        note_html = "".join(f"<div style='color:#555'>{n}</div>" for n in notes)
        return ("<table cellspacing='0' cellpadding='1' width='100%'>" + "".join(rows)
                + "</table>" + note_html)

    def _refresh_compile(self, h: History | None):
        comp = h.totals.get("compile") if h else None
        if comp:
            last_c = h.last.phases_ms.get("compile") if h.last else None
            self.compile_label.setText(
                f"<span style='color:{COLOURS['compile']}'>■</span> JIT compile: {fmt_ms(comp[0])} "
                f"in {comp[1]} job(s)" + (f", last {fmt_ms(last_c)}" if last_c is not None else "")
                + " — kept out of the frames")
        else:
            self.compile_label.setText("JIT compile: none yet" if h is None
                                       else "JIT compile: none for these jobs")

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
        order = ("compile",) + FRAME_PHASES
        rows = [(ph, *h.totals[ph]) for ph in order if ph in h.totals
                and not (h.on_cpu and ph in COPY_PHASES) and not (ph == "other" and not h.totals[ph][0])]
        grand = sum(tot for ph, tot, _ in rows if ph != "compile") or 1.0
        self.table.setRowCount(len(rows))
        for i, (ph, tot, calls) in enumerate(rows):
            share = "—" if ph == "compile" else f"{100 * tot / grand:.1f} %"
            vals = [NAMES[ph], fmt_ms(tot), share, fmt_ms(tot / calls)]
            for j, v in enumerate(vals):
                item = QTableWidgetItem(v)
                if j:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                else:
                    item.setToolTip(EXPLAIN.get(ph, ""))
                self.table.setItem(i, j, item)
        rowh = self.table.verticalHeader().defaultSectionSize()
        self.table.setFixedHeight(self.table.horizontalHeader().height() + rowh * len(rows) + 4)
        note = f"{h.count} frame(s) of {self._key_text((h.source, h.backend))} since the last reset"
        self.table_note.setText(note + (f"; {NO_COPIES}" if h.on_cpu else ""))


class TimingDock(QDockWidget):
    def __init__(self, parent=None):
        super().__init__("Timing", parent)
        self.setObjectName("TimingDock")
        self.panel = TimingPanel(self)
        self.setWidget(self.panel)
        self.setToolTip("Where each frame's time went: kernel versus copies between host and device")
