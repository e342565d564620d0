"""The roofline panel: the device's roofs, measured on the spot, and every job placed under them.

Log–log: arithmetic intensity (operations per byte) across, achieved operations per second up.
The bandwidth slope and the float32, float64 and int32 ceilings are the roofs of the backend shown
(kernels/roofs: measured once per device and kept); each job's counted work (kernels/roofs/work.py)
is a point, the newest job's drawn larger; the legend names the roofs and the markers. Hover or
click a point: its kernel, work, time and % of the roof that bounds it. The model
(explorer/models/roofline.py) holds the data and the words.

Roofs kept for this device and driver are read at once; roofs to measure (none kept, the button,
or a point that beat them beyond their spread) wait until the scheduler has been idle for
`quiet_ms`, then run as a background job a probe at a time: never beside the app's own work.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QElapsedTimer, Qt, QTimer
from PyQt6.QtWidgets import (QComboBox, QDockWidget, QHBoxLayout, QLabel, QPushButton,
                             QVBoxLayout, QWidget)

import kernels.roofs as roofs_pkg
from kernels.roofs import KIND_TITLES
from kernels.roofs.jobs import RoofsRequest
from kernels.scheduler import Delivered, Failed, Stopped

from .models.roofline import WHERE, RooflineModel

KIND_COLOURS = {"f32": "#1f77b4", "f64": "#d62728", "int32": "#2ca02c"}
ROOF_COLOURS = dict(KIND_COLOURS, bandwidth="#555555")
EXECUTED_SYMBOL, POINT_SYMBOL = "s", "o"
OFF_EDGE_SYMBOL = "t2"          # a triangle pointing off the edge: its intensity lies beyond
KEY = "roofline"
DEFAULT_Y = (1e6, 1e14)         # operations per second shown before anything is measured
# the scheduler idle this long before roofs are measured: a view's next frame, a sweep's next
# point or a warm-up's next compile usually follows within it
QUIET_MS = 1000
LEGEND_GREY = "#777777"


def _log(v):
    return math.log10(v)


class RooflinePanel(QWidget):
    """Feed it Timings with add(t, source); it asks the scheduler for the roofs it lacks."""

    def __init__(self, scheduler, backends: dict, parent=None):
        """backends: {"cpu": Backend, "cuda": Backend or None (no GPU here)}."""
        super().__init__(parent)
        self.scheduler = scheduler
        self.backends = {k: v for k, v in backends.items() if v is not None}
        self.model = RooflineModel()
        self.model.gpu_present = backends.get("cuda") is not None
        self._generations: dict[str, int] = {}
        self._remeasure: dict[str, bool] = {}   # backend -> its waiting measurement ignores the cache
        self._items: list = []          # (Point, Placement) of the scatter's spots, by index
        self._dirty = True
        self.quiet_ms = QUIET_MS
        self._quiet = QElapsedTimer()   # since when the scheduler has been idle
        self._quiet.start()

        self.backend_combo = QComboBox()
        self.backend_combo.setToolTip("Whose roofs and jobs are drawn: it follows the newest "
                                      "job, or pick one")
        for name in ("cuda", "cpu"):
            if name in self.backends:
                self.backend_combo.addItem(WHERE[name], name)
        self.backend_combo.activated.connect(self._on_pick)
        self.remeasure_btn = QPushButton("Re-measure roofs")
        self.remeasure_btn.setToolTip("Measure this device's bandwidth and float32, float64 and "
                                      "int32 peaks again once the app is idle (a few seconds; "
                                      "kept for next time)")
        self.remeasure_btn.clicked.connect(self.remeasure)
        self.clear_btn = QPushButton("Clear")
        self.clear_btn.setToolTip("Remove the points of the backend shown")
        self.clear_btn.clicked.connect(self.clear)
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.caption.setStyleSheet("color: #333;")
        self.note_label = QLabel("")
        self.note_label.setWordWrap(True)
        self.note_label.setStyleSheet("color: #9a5b00;")
        self.details = QLabel("Hover or click a point: its kernel, work, time and % of its roof.")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setStyleSheet("color: #222; background: #f6f6f6; padding: 4px;")
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # room for a point's whole description: the plot gives way, the words do not
        self.details.setMinimumHeight(self.fontMetrics().lineSpacing() * 8 + 8)

        self.plot = pg.PlotWidget(background="w")
        self.plot.setMinimumHeight(220)
        self.plot.setLogMode(True, True)      # the data below are log10 already: axes say 10^n
        self.plot.setLabel("bottom", "arithmetic intensity (operations per byte)")
        self.plot.setLabel("left", "operations per second")
        for side in ("left", "bottom"):
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.hideButtons()
        # the ranges follow the roofs and points at each refresh: a drag or wheel would not stay
        self.plot.setMouseEnabled(x=False, y=False)
        self.legend = self.plot.addLegend(offset=(-10, -10), labelTextSize="8pt",
                                          brush=pg.mkBrush(255, 255, 255, 210))
        self._roof_items: list = []
        self.scatter = pg.ScatterPlotItem(hoverable=True, tip=self._tip, pxMode=True)
        self.scatter.sigHovered.connect(self._on_hover)
        self.scatter.sigClicked.connect(self._on_click)
        self.plot.addItem(self.scatter)
        self.point_key = QLabel("")         # what each marker is (the roofs' legend is in the plot)
        self.point_key.setWordWrap(True)
        self.point_key.setStyleSheet("color: #333;")
        self.point_key.setVisible(False)
        self._key: list = []

        top = QHBoxLayout()
        top.addWidget(QLabel("Roofs of"))
        top.addWidget(self.backend_combo, 1)
        top.addWidget(self.remeasure_btn)
        top.addWidget(self.clear_btn)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.caption)
        lay.addWidget(self.note_label)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.point_key)
        lay.addWidget(self.details)
        self.setMinimumWidth(340)

        scheduler.event.connect(self._on_event)
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._tick)
        self._timer.start()
        # until a job arrives: the GPU's roofs where there is one
        self._preferred = "cuda" if "cuda" in self.backends else "cpu"
        self.refresh()

    # ---- data ---------------------------------------------------------------------------------
    def add(self, t, source: str | None = None):
        if self.model.add(t, source):
            self._dirty = True
            if self.isVisible():
                self.ensure_roofs(t.backend)

    def shown_backend(self) -> str:
        return self.model.shown or self._preferred

    def ensure_roofs(self, backend: str | None = None, remeasure: bool = False, why: str = "",
                     stale: bool = False):
        """Have the roofs of `backend`: those kept for its device at once, else measured once
        the app is idle (as `remeasure` always is)."""
        backend = backend or self.shown_backend()
        be = self.backends.get(backend)
        if be is None:
            return
        m = self.model
        # a measurement that failed is tried again only when asked (the button), never per job
        if not remeasure and (backend in m.roofs or backend in m.measuring
                              or backend in m.failed or backend in m.waiting):
            return
        if remeasure and (backend in m.measuring or backend in m.waiting):
            return
        if not remeasure:
            kept = roofs_pkg.kept_roofs(be)
            if kept is not None:
                m.set_roofs(backend, kept)
                self._dirty = True
                self.refresh()
                return
        m.failed.pop(backend, None)
        m.want(backend, why, stale=stale)
        self._remeasure[backend] = remeasure
        self._dirty = True
        self.refresh()

    def _idle(self) -> bool:
        idle = getattr(self.scheduler, "idle", None)
        return bool(idle()) if idle is not None else True

    def _tick(self):
        self.refresh()
        self.measure_if_idle()

    def measure_if_idle(self):
        """Submit the roofs waiting to be measured once the scheduler has been idle for
        quiet_ms; returns nothing (the timer calls it, tests too)."""
        if not self._idle():
            self._quiet.restart()
            return
        if not self.model.waiting or self._quiet.elapsed() < self.quiet_ms:
            return
        if not self.isVisible() or self.visibleRegion().isEmpty():
            return      # a tab behind another (the first start's case): measured once shown
        for backend in list(self.model.waiting):
            be = self.backends.get(backend)
            if be is None:
                self.model.waiting.pop(backend)
                continue
            self.model.start_measuring(backend)
            self._generations[backend] = self.scheduler.submit(
                f"{KEY}:{backend}", RoofsRequest(be, remeasure=self._remeasure.get(backend, True),
                                                 background=True))
        self._dirty = True
        self.refresh()

    def remeasure(self):
        self.ensure_roofs(self.shown_backend(), remeasure=True)

    def clear(self):
        self.model.clear(self.shown_backend())
        self._dirty = True
        self.refresh()

    def _on_event(self, ev):
        key = getattr(ev, "key", "")
        if not key.startswith(KEY + ":"):
            return
        backend = key.split(":", 1)[1]
        if self._generations.get(backend) != ev.generation:
            return
        if isinstance(ev, Delivered):
            self.model.set_roofs(backend, ev.result)
        elif isinstance(ev, Failed):
            self.model.set_failed(backend, ev.message)
        elif isinstance(ev, Stopped):
            self.model.stopped(backend)
        else:
            return
        self._dirty = True
        self.refresh()

    def _on_pick(self, index: int):
        self.model.shown = self.backend_combo.itemData(index)
        self._dirty = True
        self.ensure_roofs()
        self.refresh()

    def showEvent(self, ev):
        super().showEvent(ev)
        self.ensure_roofs()

    # ---- display --------------------------------------------------------------------------------
    def point_texts(self) -> list[str]:
        """The hover text of every point drawn, oldest first."""
        return [self.model.hover_text(p, pl) for p, pl in self._items]

    def _tip(self, x=None, y=None, data=None):
        if data is None or not (0 <= int(data) < len(self._items)):
            return ""
        p, pl = self._items[int(data)]
        return self.model.hover_text(p, pl)

    def _on_hover(self, item, points, ev):
        if len(points):
            self.details.setText(self._tip(data=points[0].data()))

    def _on_click(self, item, points, ev):
        if len(points):
            self.details.setText(self._tip(data=points[0].data()))

    def refresh(self):
        if not self._dirty:
            return
        self._dirty = False
        backend = self.shown_backend()
        i = self.backend_combo.findData(backend)
        if i >= 0 and i != self.backend_combo.currentIndex():
            self.backend_combo.setCurrentIndex(i)
        # a point above its roof beyond the roof's spread: the roofs are stale, measured again
        why = self.model.stale_reason(backend)
        if why and self.isVisible():
            self.ensure_roofs(backend, remeasure=True, why=why, stale=True)
            return                      # ensure_roofs refreshed
        caption = self.model.roofs_text(backend)
        self.caption.setText(caption)
        self.caption.setVisible(bool(caption))
        self.caption.setToolTip(self.model.roofs_tooltip(backend))
        note = self.model.note(backend)
        self.note_label.setText(note)
        self.note_label.setVisible(bool(note))
        self.remeasure_btn.setEnabled(backend in self.backends
                                      and backend not in self.model.measuring
                                      and backend not in self.model.waiting)
        self._draw_roofs(backend)
        self._draw_points(backend)

    def _draw_roofs(self, backend):
        for item in self._roof_items:
            self.plot.removeItem(item)
        self._roof_items = []
        self.legend.clear()
        for name, xs, ys in self.model.roof_lines(backend):
            colour = ROOF_COLOURS[name]
            title = "bandwidth" if name == "bandwidth" else f"{KIND_TITLES[name]} peak"
            curve = pg.PlotCurveItem([_log(x) for x in xs], [_log(y) for y in ys],
                                     pen=pg.mkPen(colour, width=2,
                                                  style=Qt.PenStyle.SolidLine if name == "bandwidth"
                                                  else Qt.PenStyle.DashLine))
            self.plot.addItem(curve)
            self.legend.addItem(curve, title)
            self._roof_items.append(curve)
        lo, hi = self.model.x_range(backend)
        self.plot.setXRange(_log(lo), _log(hi), padding=0.02)
        lo_y, hi_y = self.model.y_range(backend) or DEFAULT_Y
        self.plot.setYRange(_log(lo_y), _log(hi_y), padding=0.02)

    def _draw_points(self, backend):
        items = [(p, pl) for p, pl in self.model.placements(backend) if pl.plottable]
        self._items = items
        newest = self.model.latest_serial(backend)
        spots = []
        for idx, (p, pl) in enumerate(items):
            latest = p.serial == newest
            x, moved = self.model.drawn_x(pl.intensity, backend)
            symbol = EXECUTED_SYMBOL if "executed" in p.work.name else POINT_SYMBOL
            colour = KIND_COLOURS[p.work.kind]
            brush = pg.mkBrush(colour) if latest else pg.mkBrush(pg.mkColor(colour).lighter(150))
            spots.append({"pos": (_log(x), _log(pl.rate)), "data": idx,
                          "size": 14 if latest else 8, "brush": brush,
                          "symbol": OFF_EDGE_SYMBOL if moved else symbol,
                          "pen": pg.mkPen("k", width=1.5) if latest else pg.mkPen(None)})
        self.scatter.setData(spots)
        self._add_point_legend(backend)
        if items and newest is not None and items[-1][0].serial == newest:
            self.details.setText(self._tip(data=len(items) - 1))
        elif not items:
            self.details.setText(self.model.empty_text(backend))

    def _add_point_legend(self, backend):
        """The markers' key under the plot (in the plot it would cover points): a colour per
        number type, the executed lane-iterations' square, the off-the-axis triangle, the
        newest job's outline."""
        self._key = self._point_key(backend)
        # lines break between entries, never inside one
        html = "&nbsp;&nbsp; ".join(
            f'<span style="color:{colour}; font-size:13pt">{glyph}</span>&nbsp;'
            + title.replace(" ", "&nbsp;").replace("-", "\u2011")
            for glyph, colour, title in self._key)
        self.point_key.setText(html)
        self.point_key.setVisible(bool(self._key))

    def _point_key(self, backend) -> list[tuple[str, str, str]]:
        what = self.model.point_legend(backend)
        if not what["any"]:
            return []
        key = [("●", KIND_COLOURS[k], f"{KIND_TITLES[k]} work") for k in what["kinds"]]
        if what["executed"]:
            key.append(("■", LEGEND_GREY, "executed lane-iterations"))
        if what["moved"]:
            key.append(("▶", LEGEND_GREY, "intensity beyond the axis"))
        key.append(("⬤", "#000000", "newest job (larger, outlined)"))
        return key

    def legend_titles(self) -> list[str]:
        """The roofs' legend, then the markers' key (tests)."""
        return [label.text for _, label in self.legend.items] + [t for _, _, t in self._key]

    def spots(self) -> np.ndarray:
        """(x, y) in log10 of every point drawn (tests)."""
        return np.array([[s.pos().x(), s.pos().y()] for s in self.scatter.points()])


class RooflineDock(QDockWidget):
    def __init__(self, scheduler, backends: dict, parent=None):
        super().__init__("Roofline", parent)
        self.setObjectName("RooflineDock")
        self.panel = RooflinePanel(scheduler, backends, self)
        self.setWidget(self.panel)
        self.setToolTip("Each job's achieved rate against the device's measured roofs: memory "
                        "bandwidth and float32, float64 and int32 peaks")
