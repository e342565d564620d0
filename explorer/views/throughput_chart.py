"""The throughput chart: a log-log plot of every implementation × mode's rate against N, the copy
bandwidths as grey ceilings, the spread of the repeats as bars, the GPU/CPU crossover as a
vertical line, and a key under the plot. It draws explorer.models.throughput.ThroughputModel and
sends clicks on the key back to it as ticks.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QPointF, QRectF, Qt

from kernels.vector import sweep as vector_sweep

from ..models.throughput import ThroughputModel, pow2_label

# One colour per implementation, none of them grey (greys are the reference lines) and no two
# alike: NVRTC in blues, the two CPU ones red and dark purple, so the CPU backend's only pair of
# curves is told apart at a glance.
IMPL_COLOURS = {"vectorize": "#ff7f0e", "cuda-jit": "#2ca02c", "cuda-jit-stride": "#17becf",
                "cuda-jit-ilp4": "#bcbd22", "nvrtc": "#1f77b4", "nvrtc-ilp4": "#08306b",
                "pycuda": "#e377c2", "cpu-numba": "#d62728", "numpy": "#6a3d9a"}
MODE_STYLES = {"kernel": Qt.PenStyle.SolidLine, "pinned": Qt.PenStyle.DashLine,
               "pageable": Qt.PenStyle.DotLine}
MODE_SYMBOLS = {"kernel": "o", "pinned": "s", "pageable": "t"}
# (key, label, grey, line style): neutral so no reference is mistaken for a curve
REF_LINES = (("d2d-copy", "device copy", "#4d4d4d", Qt.PenStyle.DashLine),
             ("h2d-pinned", "h→d pinned", "#737373", Qt.PenStyle.DotLine),
             ("d2h-pinned", "d→h pinned", "#737373", Qt.PenStyle.DashDotLine),
             ("cpu-copy", "CPU copy", "#5e5e5e", Qt.PenStyle.DashDotDotLine))
# the labels sit above the curves (which draw at z 0) and the crossover line
LABEL_Z = 20
LABEL_MARGIN_PX = 4
KEY_COLUMNS, KEY_SPACING = 6, 12
KEY_GREY = "#444"              # the legend's mode samples: line style and symbol only


def _label_places(box: QRectF, y: float, w: float, h: float) -> list[QRectF]:
    """Where a label w×h may sit against a line at scene y inside box, best first: above the
    line, then under it; at the right end, the left end, then every eighth in between."""
    left, right = box.left() + LABEL_MARGIN_PX, box.right() - LABEL_MARGIN_PX - w
    xs = [right, left] + [left + (right - left) * k / 8 for k in range(7, 0, -1)]
    out = [QRectF(x, top, w, h) for top in (y - h, y + 1) for x in xs]
    inside = [r for r in out if r.top() >= box.top() and r.bottom() <= box.bottom()]
    return inside or [QRectF(right, min(max(y - h, box.top()), box.bottom() - h), w, h)]


def _inside(points: np.ndarray, rect: QRectF) -> int:
    """How many of the (n, 2) scene points lie in rect."""
    x, y = points[:, 0], points[:, 1]
    return int(np.count_nonzero((x >= rect.left()) & (x <= rect.right())
                                & (y >= rect.top()) & (y <= rect.bottom())))


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


class ReferenceLine(pg.InfiniteLine):
    """A copy bandwidth as a horizontal line; `label` is its text, a separate item that the chart
    places (ThroughputChart.place_reference_labels) in front of the curves."""

    def __init__(self, pos: float, pen, text: str):
        super().__init__(pos=pos, angle=0, movable=False, pen=pen)
        self.label = pg.TextItem(text, color="#222", anchor=(1, 1), fill=pg.mkBrush(255, 255, 255, 215))
        self.label.setZValue(LABEL_Z)
        self.label.end = "right"
        self.label.size_px = lambda: (self.label.textItem.boundingRect().width(),
                                      self.label.textItem.boundingRect().height())


class ThroughputChart(pg.PlotWidget):
    """The model's curves, ceilings and crossover; `legend` is the key under the plot."""

    def __init__(self, model: ThroughputModel, parent=None):
        super().__init__(parent, axisItems={"bottom": SizeAxis("bottom"), "left": RateAxis("left")})
        self.model = model
        self._curves: dict[tuple, pg.PlotDataItem] = {}
        self._spreads: dict[tuple, pg.ErrorBarItem] = {}
        self._key_samples: dict[tuple, pg.PlotDataItem] = {}
        self._ref_items: list = []
        self._cross_item = None
        self.setBackground("w")
        self.setLogMode(x=True, y=True)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.setLabel("bottom", "N (float32 elements)")
        self.setLabel("left", "GB/s")
        # the key sits in a row of its own under the chart, so it never covers a curve
        self.legend = pg.LegendItem(labelTextColor="k", colCount=KEY_COLUMNS,
                                   horSpacing=KEY_SPACING, frame=False)
        self.getPlotItem().layout.addItem(self.legend, 4, 1, alignment=Qt.AlignmentFlag.AlignHCenter)
        # invisible points at the reference values, so auto-range keeps the ceilings in view
        self._bounds_item = pg.PlotDataItem(pen=None, symbol="o", symbolSize=1, symbolPen=None,
                                            symbolBrush=(0, 0, 0, 0))
        self.addItem(self._bounds_item)
        vb = self.getPlotItem().vb
        vb.sigRangeChanged.connect(self.place_reference_labels)
        vb.sigResized.connect(self.place_reference_labels)
        self.legend.setToolTip("Colour = implementation, line style = mode; bars = fastest to "
                               "slowest repeat. Click a sample to hide or show its curves")
        model.subscribe(self._on_model)

    # ---- what is drawn (tests and scripts read these) -------------------------------------------
    def drawn_curves(self) -> dict[tuple, pg.PlotDataItem]:
        """(implementation, mode) -> its curve, for every curve drawn since the sweep began."""
        return dict(self._curves)

    def spread_bars(self, impl: str, mode: str) -> pg.ErrorBarItem:
        return self._spreads[(impl, mode)]

    def key_sample(self, kind: str, name: str) -> pg.PlotDataItem:
        """The key's sample of an implementation (kind "impl") or a mode (kind "mode")."""
        return self._key_samples[(kind, name)]

    def reference_lines(self) -> list[pg.InfiniteLine]:
        return list(self._ref_items)

    def crossover_line(self) -> pg.InfiniteLine | None:
        return self._cross_item

    # ---- following the model --------------------------------------------------------------------
    def _on_model(self, event: str, *args):
        if event == "started":
            self.clear_results()
            self.setTitle(self.model.title(), color="#333", size="11pt")
        elif event == "references":
            self.draw_references()
        elif event == "point" and not args[0].skipped:
            self.update_curve(args[0].impl, args[0].mode)
            self.update_bounds()
        elif event == "settings" and args[0] == "metric":
            self.redraw()
        elif event in ("checked", "choices", "unavailable"):
            self.apply_visibility()
        elif event == "finished" and self.model.state in ("done", "stopped"):
            self.update_crossover()

    def clear_results(self):
        for item in list(self._curves.values()) + list(self._spreads.values()):
            self.removeItem(item)
        self._curves.clear()
        self._spreads.clear()
        self.legend.clear()
        for item in self._ref_items:
            self.removeItem(item)
            self.removeItem(item.label)
        self._ref_items.clear()
        if self._cross_item is not None:
            self.removeItem(self._cross_item)
            self._cross_item = None

    def redraw(self):
        self.setLabel("left", self.model.axis_label())
        self.setTitle(self.model.title(), color="#333", size="11pt")
        for impl, mode in list(self._curves):
            self.update_curve(impl, mode)
        self.draw_references()
        self.update_crossover()

    def update_curve(self, impl: str, mode: str):
        x, y = self.model.curve(impl, mode)
        curve = self._curves.get((impl, mode))
        if curve is None and not len(x):
            return  # nothing measured (e.g. no event timing in the simulator): no legend entry
        colour = IMPL_COLOURS.get(impl, "#444")
        if curve is None:
            pen = pg.mkPen(colour, width=2, style=MODE_STYLES.get(mode, Qt.PenStyle.SolidLine))
            curve = self.plot([], [], pen=pen, symbol=MODE_SYMBOLS.get(mode, "o"),
                              symbolSize=6, symbolBrush=colour, symbolPen=colour)
            self._curves[(impl, mode)] = curve
            # the spread of the repeats: an error bar from the slowest to the fastest run. The
            # plot is log-log and ErrorBarItem has no log mode, so it takes log10 coordinates
            # (beam: a tenth of the log10(2) between two sizes of a sweep)
            bars = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), beam=0.03,
                                   pen=pg.mkPen(colour, width=1.5))
            self.addItem(bars, ignoreBounds=True)
            self._spreads[(impl, mode)] = bars
            self._update_key()
        curve.setData(x, y)
        sx, sy, top, bottom = self.model.spread(impl, mode)
        self._spreads[(impl, mode)].setData(x=sx, y=sy, top=top, bottom=bottom)
        self.apply_visibility()

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
        self.fit_key()
        self.apply_visibility()

    def fit_key(self):
        """As many key columns as the chart's width holds (at most KEY_COLUMNS): a fixed six made
        the plot wider than a narrow window, cutting off its right end and the labels there."""
        legend = self.__dict__.get("legend")      # resized once before the key exists
        if legend is None or not legend.items:
            return
        hint = Qt.SizeHint.MinimumSize           # a label's rect is stretched by the layout
        widest = max(sample.effectiveSizeHint(hint).width() + label.effectiveSizeHint(hint).width()
                     for sample, label in legend.items) + 2 * KEY_SPACING
        cols = int(max(1, min(KEY_COLUMNS, (self.width() - 80) // max(widest, 1.0))))
        if cols != legend.columnCount:
            legend.setColumnCount(cols)
            self.getPlotItem().setGeometry(self.range)    # the view's rect, as a resize sets it

    def resizeEvent(self, ev):
        self.fit_key()                          # first: the plot is laid out to the new key
        super().resizeEvent(ev)

    def _on_key_clicked(self, kind: str, name: str):
        on = self._key_samples[(kind, name)].isVisible()
        if kind == "mode":
            self.model.set_mode_checked(name, on)
        else:
            self.model.set_impl_checked(name, on)

    def apply_visibility(self):
        checked = set(self.model.checked_impls())
        modes = set(self.model.checked_modes())
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
        self.place_reference_labels()      # which end of a line is free depends on the curves

    def draw_references(self):
        for item in self._ref_items:
            self.removeItem(item)
            self.removeItem(item.label)
        self._ref_items.clear()
        unit = "GB/s" if self.model.metric == "GB/s" else "G elem/s"
        for key, text, colour, style in REF_LINES:
            v = self.model.reference_value(key)
            if not v:
                continue
            line = ReferenceLine(math.log10(v), pg.mkPen(colour, width=1.5, style=style),
                                 f"{text} {v:,.0f} {unit}" if v >= 100 else f"{text} {v:.3g} {unit}")
            line.setToolTip(f"{text}: measured on this machine at the start of the sweep")
            self.addItem(line, ignoreBounds=True)
            self.addItem(line.label, ignoreBounds=True)
            self._ref_items.append(line)
        self.update_bounds()
        self.place_reference_labels()

    def place_reference_labels(self):
        """Each reference's label just above or just under its line, in front of the curves (a
        curve drawn over a label hid it), where it covers the least of them: at the right end,
        the left end or between, the first place where no curve runs (one covering a curve hid
        the curve instead: "CPU copy" over the CPU curves). Labels never cover each other or
        leave the plot."""
        vb = self.getPlotItem().vb
        box = vb.sceneBoundingRect()
        if not self._ref_items or box.height() <= 0 or box.width() <= 0:
            return
        to_scene = self._view_to_scene(vb, box)
        points = self._curve_points(to_scene)
        taken: list[QRectF] = []
        for line in sorted(self._ref_items, key=lambda item: -item.value()):
            y = float(to_scene(np.zeros(1), np.array([line.value()]))[1][0])
            w, h = line.label.size_px()
            rect = min(_label_places(box, y, w, h),
                       key=lambda r: (sum(r.intersects(t) for t in taken), _inside(points, r)))
            taken.append(rect)
            line.label.setAnchor((0, 0))
            line.label.setPos(vb.mapSceneToView(rect.topLeft()))
            line.label.end = ("right" if rect.right() >= box.right() - LABEL_MARGIN_PX - 1
                              else "left" if rect.left() <= box.left() + LABEL_MARGIN_PX + 1
                              else "middle")

    @staticmethod
    def _view_to_scene(vb, box):
        """Vectorised view (log10) -> scene coordinates of the plot's box."""
        (x0, x1), (y0, y1) = vb.viewRange()

        def to_scene(x, y):
            return (box.left() + (x - x0) / ((x1 - x0) or 1.0) * box.width(),
                    box.top() + (y1 - y) / ((y1 - y0) or 1.0) * box.height())
        return to_scene

    def _curve_points(self, to_scene) -> np.ndarray:
        """Scene points along every visible curve (vertices and 16 between each pair)."""
        out = [np.zeros((0, 2))]
        t = np.linspace(0.0, 1.0, 17)[:, None]
        for curve in self._curves.values():
            x, y = curve.getData()       # already in log10 (display) coordinates
            if not curve.isVisible() or x is None or len(x) < 1:
                continue
            sx, sy = to_scene(np.asarray(x, float), np.asarray(y, float))
            if len(sx) == 1:
                out.append(np.column_stack([sx, sy]))
                continue
            xs = (sx[:-1] + t * (sx[1:] - sx[:-1])).ravel()
            ys = (sy[:-1] + t * (sy[1:] - sy[:-1])).ravel()
            out.append(np.column_stack([xs, ys]))
        return np.concatenate(out)

    def update_bounds(self):
        vals = [v for v in (self.model.reference_value(k) for k, *_ in REF_LINES) if v]
        if vals:
            self._bounds_item.setData(list(self.model.size_span()), [min(vals), max(vals)])
        else:
            self._bounds_item.setData([], [])

    def update_crossover(self):
        if self._cross_item is not None:
            self.removeItem(self._cross_item)
            self._cross_item = None
        n = self.model.crossover_n()
        if n is None:
            return
        self._cross_item = pg.InfiniteLine(
            pos=math.log10(n), angle=90, movable=False,
            pen=pg.mkPen("#555", width=1, style=Qt.PenStyle.DashLine),
            label=f"GPU end to end beats the CPU from N = {pow2_label(n)}",
            labelOpts={"position": 0.04, "color": "#333", "anchors": [(1, 1), (1, 1)],
                       "fill": (255, 255, 255, 200)})
        self.addItem(self._cross_item, ignoreBounds=True)
