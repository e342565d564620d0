"""The timing panel's drawings: the last frame's phases as one bar on a millisecond ruler (like a
profiler's timeline row), and the frame-number axis of its chart of recent frames."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PyQt6.QtCore import QRectF, Qt
from PyQt6.QtGui import QBrush, QColor, QFontMetrics, QPainter
from PyQt6.QtWidgets import QSizePolicy, QWidget

from kernels.timing import Timings

from .timing_breakdown import Segment, frame_segments
from .timing_text import COLOURS, describe, fmt_ms


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
