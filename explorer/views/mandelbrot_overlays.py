"""The Mandelbrot view's overlay selector: none / iterations / lane efficiency / BLA steps /
perturbation steps / rebases / redone, drawn by the renderer in place of the picture
(kernels/mandelbrot/colouring/overlays.py), with a legend (the colour bar, its scale and unit) and the
frame's totals. Overlays without a meaning for the frame in view are greyed, their reason in the
tooltip: lane efficiency on the CPU (no warps) and on deep frames, the deep step counts on float64
frames. The choice stays while it cannot be drawn: it comes back when the view goes deep again.

`OverlayHook(view)` puts the panel into the view's side panel and follows its frames.
"""
from __future__ import annotations

import math

from PyQt6.QtCore import QRectF, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QKeySequence, QPainter, QShortcut
from PyQt6.QtWidgets import QComboBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from kernels.mandelbrot.colouring import overlays as ov

SHORTCUT = "Ctrl+Shift+O"       # the next overlay that has a meaning here (after the last: none)


def _tick(x: float) -> str:
    if abs(x) >= 1e6:
        return f"{x:.3g}"
    return f"{x:,.0f}" if abs(x) >= 10 or x == int(x) else f"{x:.2g}"


class OverlayLegend(QWidget):
    """A colour bar of the overlay palette with the scale's ends, middle and unit."""

    BAR_H = 14

    def __init__(self, parent=None):
        super().__init__(parent)
        self.scale: ov.Scale | None = None
        self._colours = [QColor(int(w & 0xFF), int((w >> 8) & 0xFF), int((w >> 16) & 0xFF))
                         for w in ov.lut_words().tolist()]
        self.setMinimumHeight(self.BAR_H + 2 * self.fontMetrics().height() + 6)

    def set_scale(self, scale: ov.Scale | None):
        self.scale = scale
        self.setToolTip("" if scale is None else
                        f"{scale.unit}; {'log' if scale.log else 'linear'} scale from "
                        f"{_tick(scale.lo)} to {_tick(scale.hi)}")
        self.update()

    def ticks(self) -> list[tuple[float, str]]:
        """(position 0..1 along the bar, text) of the labelled values."""
        s = self.scale
        if s is None:
            return []
        out = []
        for t in (0.0, 0.5, 1.0):
            x = s.lo + (math.expm1(t * math.log1p(s.hi - s.lo)) if s.log else t * (s.hi - s.lo))
            out.append((t, _tick(x)))
        return out

    def paintEvent(self, ev):
        if self.scale is None:
            return
        p = QPainter(self)
        w = max(1, self.width() - 2)
        n = len(self._colours)
        for i, c in enumerate(self._colours):
            p.fillRect(QRectF(1 + w * i / n, 1, w / n + 1, self.BAR_H), c)
        p.setPen(self.palette().windowText().color())
        fh = self.fontMetrics().height()
        for t, text in self.ticks():
            tw = self.fontMetrics().horizontalAdvance(text)
            x = min(max(1 + t * w - tw / 2, 0), self.width() - tw)
            p.drawText(QRectF(x, self.BAR_H + 2, tw + 1, fh), text)
        unit = self.scale.unit + (" (log scale)" if self.scale.log else "")
        p.drawText(QRectF(0, self.BAR_H + 2 + fh, self.width(), fh),
                   int(Qt.AlignmentFlag.AlignLeft), self.fontMetrics().elidedText(
                       unit, Qt.TextElideMode.ElideRight, self.width()))
        p.end()


class OverlayPanel(QGroupBox):
    """The selector, the legend of the overlay drawn, the frame's totals and, when the chosen
    overlay is not drawn, why."""

    changed = pyqtSignal(str)           # the overlay's name, "" for none

    def __init__(self, parent=None):
        super().__init__("Overlay", parent)
        lay = QVBoxLayout(self)
        self.combo = QComboBox()
        self.combo.addItem("None (the picture)", "")
        for name in ov.NAMES:
            self.combo.addItem(ov.LABELS[name], name)
        self.combo.setToolTip("Draw what the kernels did per pixel instead of the picture, "
                              f"computed on the device ({SHORTCUT}: next overlay)")
        lay.addWidget(self.combo)
        self.legend = OverlayLegend()
        lay.addWidget(self.legend)
        self.totals = QLabel()
        self.totals.setWordWrap(True)
        self.totals.setToolTip("This frame's totals (also in the timing panel's title)")
        lay.addWidget(self.totals)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #a05a00")
        lay.addWidget(self.note)
        for w in (self.legend, self.totals):     # shown or not, the panel keeps its height
            policy = w.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            w.setSizePolicy(policy)
        self.reasons: dict[str, str] = {}
        self.set_context(deep=False, gpu=True)
        self.show_info(None)
        self.combo.currentIndexChanged.connect(lambda _: self.changed.emit(self.current()))

    def current(self) -> str:
        return self.combo.currentData() or ""

    def select(self, name: str):
        i = self.combo.findData(name)
        if i >= 0:
            self.combo.setCurrentIndex(i)

    def enabled(self, name: str) -> bool:
        item = self.combo.model().item(self.combo.findData(name))
        return item is not None and item.isEnabled()

    def set_context(self, deep: bool, gpu: bool, float32: bool = False,
                    formula: str = "mandelbrot"):
        """Grey the overlays without a meaning for a deep / float64 frame on the GPU / CPU (in
        float32 or not, of `formula`), the reason in their tooltip."""
        model = self.combo.model()
        self.reasons = {}
        for name in ov.NAMES:
            item = model.item(self.combo.findData(name))
            why = ov.unavailable(name, deep, gpu, float32, formula)
            item.setEnabled(why is None)
            item.setToolTip(f"Not for this frame: {why}" if why else ov.UNITS[name])
            if why:
                self.reasons[name] = why
        self._say_why()

    def show_info(self, info: ov.OverlayInfo | None):
        """The legend and totals of the frame shown (Frame.meta["overlay"], or None)."""
        drawn = info is not None and bool(info.name)
        self.legend.set_scale(info.scale if drawn else None)
        self.legend.setVisible(drawn)
        text = info.text() if drawn else ""
        self.totals.setText(text)
        self.totals.setVisible(bool(text))
        self._say_why()

    def _say_why(self):
        why = self.reasons.get(self.current())
        self.note.setText(f"{ov.LABELS[self.current()]} is not drawn here: {why}" if why else "")
        self.note.setVisible(bool(why))

    def next_overlay(self):
        """The next overlay with a meaning here, after the last none."""
        names = [""] + [n for n in ov.NAMES if n not in self.reasons]
        cur = self.current()
        i = names.index(cur) if cur in names else 0
        self.select(names[(i + 1) % len(names)])


class OverlayHook:
    """The overlay panel in `view`'s side panel: its choice goes into the view's model (and a new
    frame), each displayed frame sets its legend, totals and which overlays have a meaning."""

    def __init__(self, view):
        self.view = view
        self.panel = OverlayPanel()
        lay = view.controls.layout()
        lay.insertWidget(min(2, lay.count()), self.panel)      # below the colour box
        self.panel.changed.connect(self._chosen)
        view.frame_displayed.connect(self._frame)
        sc = QShortcut(QKeySequence(SHORTCUT), view)
        sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        sc.activated.connect(self.panel.next_overlay)
        self.refresh()

    def refresh(self):
        """Which overlays have a meaning for the view's frames now (backend, number format)."""
        m = self.view.model
        float32 = getattr(getattr(m, "number_choice", None), "number_type", "") == "float32"
        self.panel.set_context(deep=m.format != "float64",
                               gpu=bool(getattr(m.backend, "is_gpu", False)), float32=float32,
                               formula=m.formula)

    def _chosen(self, name: str):
        self.view.model.overlay = name
        say = f"Overlay: {ov.LABELS[name]}" if name else "Overlay off: the picture"
        why = self.panel.reasons.get(name)
        self.view.status_message.emit(say + (f" (not drawn here: {why})" if why else ""), 4000)
        self.view.request_render()

    def _frame(self, frame, _ms):
        self.panel.set_context(deep=frame.meta.get("format", "float64") != "float64",
                               gpu=bool(getattr(self.view.model.backend, "is_gpu", False)),
                               float32=frame.meta.get("number_type") == "float32",
                               formula=getattr(getattr(frame, "request", None), "formula",
                                               "mandelbrot"))
        self.panel.show_info(frame.meta.get("overlay"))
