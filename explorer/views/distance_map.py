"""The distance view's map: a lon/lat plot holding the heatmap image, coastlines, iso-distance
rings, the reference marker and a colour bar. Display only; it computes no pixels.

Longitudes are drawn as they are (the view may pan past ±180°); coastlines and rings are drawn
three times, shifted by a full turn either way, so the picture wraps wherever the user looks.
"""
from __future__ import annotations

import functools
import json
import math
import os
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QRectF, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QPen

from kernels.distance import request as kd
from kernels import palettes

from ..shipped_data import shipped_file

COASTLINE_PATH = Path(shipped_file("ne_110m_coastline.geojson"))
COASTLINE_CREDIT = "Natural Earth 1:110m coastline, public domain"
LON_LIMIT = 540.0            # panning stops one and a half turns out: enough to cross either way
WRAPS = (-360.0, 0.0, 360.0)
NICE_STEPS = (1, 2, 5)
LABEL_SPACING_PX = 48        # ring labels closer than this on screen are thinned out
RING_POINTS = 256


MAX_COASTLINE_BYTES = 64 * 2 ** 20     # a coastline file larger than this is not one


def coastline_xy(path: str = str(COASTLINE_PATH)) -> tuple[np.ndarray, np.ndarray]:
    """All coastline LineStrings as one (lons, lats) pair with NaN between lines, repeated at
    each wrap; empty arrays when the file is missing or unusable (the map works without it)."""
    xs, ys, _ = load_coastline(path)
    return xs, ys


@functools.lru_cache(maxsize=4)
def load_coastline(path: str = str(COASTLINE_PATH)) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """(lons, lats, problems): the coastline of a GeoJSON FeatureCollection, checked as it is
    read. A file that is missing, not JSON or not a FeatureCollection gives no coastline and one
    problem; a feature that is not a (Multi)LineString of [lon, lat] pairs in range is skipped and
    counted. Never raises: the map must open whatever the file holds."""
    name = os.path.basename(path)
    try:
        if os.path.getsize(path) > MAX_COASTLINE_BYTES:
            return _none(f"the coastline file {name} is larger than "
                         f"{MAX_COASTLINE_BYTES // 2 ** 20} MiB; no coastline drawn")
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        return _none(f"the coastline file {name} cannot be read ({exc.strerror or exc}); "
                     "no coastline drawn")
    except (ValueError, RecursionError) as exc:
        return _none(f"the coastline file {name} is not valid JSON ({exc}); no coastline drawn")
    features = data.get("features") if isinstance(data, dict) else None
    if not isinstance(features, list):
        return _none(f"the coastline file {name} holds no list of features; no coastline drawn")
    parts, skipped = [], 0
    for feat in features:
        lines = _feature_lines(feat)
        if lines is None:
            skipped += 1
            continue
        for pts in lines:
            parts.append(pts)
            parts.append(np.full((1, 2), np.nan))
    problems = ()
    if skipped:
        problems = (f"{skipped} of {len(features)} coastline features in {name} were not lines of "
                    "[lon, lat] points and were left out",)
    if not parts:
        xs, ys, more = _none(f"the coastline file {name} holds no usable lines; no coastline drawn")
        return xs, ys, problems + more
    one = np.concatenate(parts)
    xs = np.concatenate([one[:, 0] + w for w in WRAPS])
    ys = np.tile(one[:, 1], len(WRAPS))
    return xs, ys, problems


def _none(problem: str):
    return np.empty(0), np.empty(0), (problem,)


def _feature_lines(feat) -> list[np.ndarray] | None:
    """The feature's lines as (n, 2) float arrays, or None when it is not a LineString or
    MultiLineString whose points are finite [lon, lat] pairs with lat in [-90, 90]."""
    geom = feat.get("geometry") if isinstance(feat, dict) else None
    if not isinstance(geom, dict):
        return None
    kind, coords = geom.get("type"), geom.get("coordinates")
    if kind == "LineString":
        coords = [coords]
    elif kind != "MultiLineString":
        return None
    if not isinstance(coords, list):
        return None
    lines = []
    for line in coords:
        if not isinstance(line, list) or not all(
                isinstance(p, list) and len(p) >= 2 and all(_is_number(v) for v in p[:2]) for p in line):
            return None
        if len(line) < 2:
            continue
        pts = np.array([p[:2] for p in line], dtype=np.float64)
        if not np.isfinite(pts).all() or np.abs(pts[:, 1]).max() > 90.0 or np.abs(pts[:, 0]).max() > 540.0:
            return None
        lines.append(pts)
    return lines


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def ring_step(view_height_km: float) -> float:
    """A round ring spacing (1, 2 or 5 × 10^k), about fifteen to the view's height: 1000 km on
    the whole world, tens of km over a region."""
    target = max(view_height_km, 1e-6) / 15.0
    exp = math.floor(math.log10(target))
    best = None
    for k in (exp - 1, exp, exp + 1):
        for m in NICE_STEPS:
            step = m * 10.0 ** k
            if best is None or abs(math.log(step / target)) < abs(math.log(best / target)):
                best = step
    return best


def split_at_jumps(lons: np.ndarray, lats: np.ndarray, jump: float = 180.0):
    """Insert NaN where consecutive longitudes jump by more than `jump` degrees (a ring round a
    pole), so no line crosses the whole map."""
    cut = np.nonzero(np.abs(np.diff(lons)) > jump)[0] + 1
    return np.insert(lons, cut, np.nan), np.insert(lats, cut, np.nan)


def rings_xy(ref_lat: float, ref_lon: float, step_unit: float, unit: str):
    """Iso-distance rings every `step_unit` (in `unit`) up to the antipode, with wraps."""
    km = kd.UNIT_KM[unit]
    max_km = kd.HALF_CIRCUMFERENCE_KM
    xs, ys = [], []
    r = step_unit
    count = 0
    while r * km < max_km - 1e-6 and count < 200:
        lats, lons = kd.ring_polyline(ref_lat, ref_lon, r * km, RING_POINTS)
        lons, lats = split_at_jumps(lons, lats)
        for w in WRAPS:
            xs.append(lons + w)
            ys.append(lats)
            xs.append([np.nan])
            ys.append([np.nan])
        r += step_unit
        count += 1
    if not xs:
        return np.empty(0), np.empty(0)
    return np.concatenate(xs), np.concatenate(ys)


def ring_label_points(ref_lat: float, ref_lon: float, step_unit: float, unit: str,
                      every: int = 1, limit: int = 40):
    """Where to write the distance of every `every`-th ring: straight south of the reference
    (north once the ring passes the south pole), as (lat, lon, text)."""
    km = kd.UNIT_KM[unit]
    out = []
    r = step_unit * every
    step_unit = step_unit * every
    while r * km < kd.HALF_CIRCUMFERENCE_KM - 1e-6 and len(out) < limit:
        arc = math.degrees(r * km / kd.EARTH_RADIUS_KM)
        if ref_lat - arc >= -90.0:
            lat = ref_lat - arc
        elif ref_lat + arc <= 90.0:
            lat = ref_lat + arc
        else:
            r += step_unit
            continue
        out.append((lat, ref_lon, f"{r:g} {unit}"))
        r += step_unit
    return out


def colour_map(palette: str) -> pg.ColorMap:
    """The same LUT the kernels colour with, as a pyqtgraph ColorMap for the colour bar."""
    lut = np.asarray(palettes.lut(palette, 256))
    return pg.ColorMap(np.linspace(0.0, 1.0, len(lut)), lut)


class MapViewBox(pg.ViewBox):
    """A ViewBox that reports clicks (not drags) in lon/lat and keeps the aspect in degrees.

    The whole world always fits: the map keeps its aspect (a degree of latitude is as tall as a
    degree of longitude is wide), so in a view taller than 2:1 the 360° × 180° box leaves empty
    bands beyond the poles (letterbox) instead of being cropped at the sides; in a wider view the
    world repeats east and west, as it does when panning past ±180°. Until the user pans or zooms,
    the view keeps fitting the world as its size changes (`fitting_world`).
    """

    clicked = pyqtSignal(float, float)     # lon, lat

    def __init__(self):
        super().__init__(lockAspect=1.0, enableMenu=False)
        self.fitting_world = True
        self._set_limits()
        self.sigRangeChangedManually.connect(self._moved_by_user)

    def world_half_spans(self) -> tuple[float, float]:
        """Half the lon and lat spans that show the whole world at this size and aspect."""
        w, h = self.width(), self.height()
        if w <= 0 or h <= 0:
            return 180.0, 90.0
        ratio = h / w
        return max(180.0, 90.0 / ratio), max(90.0, 180.0 * ratio)

    def _set_limits(self):
        # the latitudes may reach past the poles as far as a world-wide view needs, and a hair
        # more: at exactly that span pyqtgraph's aspect lock moves the view without emitting
        # sigRangeChanged (a pan then asked for no new frame)
        half_lat = self.world_half_spans()[1] * (1.0 + 1e-6)
        self.setLimits(xMin=-LON_LIMIT, xMax=LON_LIMIT, yMin=-half_lat, yMax=half_lat,
                       maxYRange=2.0 * half_lat, minXRange=1e-3, minYRange=1e-3)

    def fit_world(self):
        """Show the whole world, centred on 0°, 0°; keep doing so as the view is resized."""
        self.fitting_world = True
        self._set_limits()
        half_lon, half_lat = self.world_half_spans()
        self.setRange(xRange=(-half_lon, half_lon), yRange=(-half_lat, half_lat), padding=0.0)

    def _moved_by_user(self, *_):
        self.fitting_world = False

    def updateViewRange(self, forceX=False, forceY=False):
        # the view never looks past a pole, unless it is taller than the world: then the world
        # sits in the middle of it (a letterbox), not pushed against one edge
        super().updateViewRange(forceX, forceY)
        y0, y1 = self.state["viewRange"][1]
        span = y1 - y0
        if span <= 180.0:
            shift = max(0.0, -90.0 - y0) + min(0.0, 90.0 - y1)
        else:
            shift = -0.5 * (y0 + y1)
        if abs(shift) > 1e-9 * span:
            self.state["targetRange"][1] = [y0 + shift, y1 + shift]
            super().updateViewRange(forceX, forceY)

    def resizeEvent(self, ev):
        self._set_limits()
        super().resizeEvent(ev)
        if self.fitting_world:
            self.fit_world()

    def mouseClickEvent(self, ev):
        if ev.button() == Qt.MouseButton.LeftButton and not ev.double():
            ev.accept()
            # pyqtgraph's axes pass their clicks on to the linked view box: a click on an axis
            # lies outside the map and must not move the reference point there
            if not self.sceneBoundingRect().contains(ev.scenePos()):
                return
            p = self.mapSceneToView(ev.scenePos())
            (x0, x1), (y0, y1) = self.viewRange()
            if x0 <= p.x() <= x1 and y0 <= p.y() <= y1:
                self.clicked.emit(float(p.x()), float(p.y()))
            return
        super().mouseClickEvent(ev)


class LatitudeAxis(pg.AxisItem):
    """The latitude axis: no ticks in the empty bands beyond the poles of a letterboxed world."""

    def tickValues(self, minVal, maxVal, size):
        return [(spacing, [v for v in values if -90.0 <= v <= 90.0])
                for spacing, values in super().tickValues(minVal, maxVal, size)]


class MapCanvas(pg.GraphicsLayoutWidget):
    """The plot: image (row 0 north), coastlines, rings, reference marker, colour bar."""

    hovered = pyqtSignal(float, float)     # lon, lat under the mouse
    left = pyqtSignal()                    # the mouse left the map

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackground("#202124")
        self.vb = MapViewBox()
        self.plot = self.addPlot(row=0, col=0, viewBox=self.vb,
                                 axisItems={"left": LatitudeAxis("left")})
        self.plot.setLabel("bottom", "longitude (°)")
        self.plot.setLabel("left", "latitude (°)")
        self.plot.showGrid(x=False, y=False)
        self.plot.hideButtons()

        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setZValue(0)
        self.plot.addItem(self.image)

        lons, lats, problems = load_coastline(str(COASTLINE_PATH))
        self.load_notes = list(problems)       # the view passes them on to the status bar
        self.coast = pg.PlotDataItem(lons, lats, connect="finite",
                                     pen=pg.mkPen(QColor(255, 255, 255, 200), width=1))
        self.coast.setZValue(2)
        self.plot.addItem(self.coast)

        ring_pen = QPen(QColor(20, 20, 20, 170))
        ring_pen.setCosmetic(True)
        ring_pen.setWidthF(1.2)
        ring_pen.setStyle(Qt.PenStyle.DashLine)
        self.rings = pg.PlotDataItem([], [], connect="finite", pen=ring_pen)
        self.rings.setZValue(3)
        self.plot.addItem(self.rings)

        self._ring_labels: list[pg.TextItem] = []

        self.marker = pg.ScatterPlotItem(size=13, symbol="o", pen=pg.mkPen("w", width=2),
                                         brush=pg.mkBrush(220, 30, 40))
        self.marker.setZValue(4)
        self.plot.addItem(self.marker)

        self.bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=colour_map(kd.DEFAULT_PALETTE),
                                   interactive=False, colorMapMenu=False, width=18)
        self.addItem(self.bar, row=0, col=1)
        self.bar.axis.setLabel("distance (km)")
        self.bar.axis.setWidth(62)      # room for the label beside five-digit ticks

        self.scene().sigMouseMoved.connect(self._mouse_moved)

    # ---- updates -------------------------------------------------------------------------------
    def show_frame(self, rgba: np.ndarray, bounds) -> None:
        lat0, lat1, lon0, lon1 = bounds
        self.image.setImage(rgba, autoLevels=False)
        # negative height: row 0 of the frame is the northern edge, drawn at the top
        self.image.setRect(QRectF(lon0, lat1, lon1 - lon0, lat0 - lat1))

    def set_scale(self, vmax: float, unit: str, palette: str) -> None:
        if getattr(self, "_bar_palette", None) != palette:
            self.bar.setColorMap(colour_map(palette))
            self._bar_palette = palette
        self.bar.setLevels((0.0, float(vmax)))
        self.bar.axis.setLabel(f"distance ({unit})")

    def bar_label(self) -> str:
        return self.bar.axis.labelText

    def set_reference(self, lat: float, lon: float) -> None:
        self.marker.setData([lon - w for w in WRAPS], [lat] * len(WRAPS))

    def set_rings(self, xs: np.ndarray, ys: np.ndarray) -> None:
        self.rings.setData(xs, ys, connect="finite")

    def set_ring_labels(self, points) -> None:
        """points: (lat, lon, text); written at the wrap copy nearest the view's centre."""
        (x0, x1), _ = self.vb.viewRange()
        mid = 0.5 * (x0 + x1)
        while len(self._ring_labels) < len(points):
            # nearly opaque: over the dark end of a palette a faint box left dark text on purple
            item = pg.TextItem(color=(15, 15, 15), fill=pg.mkBrush(255, 255, 255, 210), anchor=(0.5, 0.5))
            font = item.textItem.font()
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
            item.setFont(font)
            item.setZValue(3.5)
            self.plot.addItem(item)
            self._ring_labels.append(item)
        for item, (lat, lon, text) in zip(self._ring_labels, points):
            lon = min((lon + w for w in WRAPS), key=lambda x: abs(x - mid))
            item.setText(text)
            item.setPos(lon, lat)
            item.setVisible(True)
        for item in self._ring_labels[len(points):]:
            item.setVisible(False)

    def ring_label_texts(self) -> list[str]:
        return [t.toPlainText() for t in self._ring_labels if t.isVisible()]

    def visible_bounds(self) -> tuple[float, float, float, float]:
        """The visible lon/lat box clipped to the poles: (lat0, lat1, lon0, lon1)."""
        (x0, x1), (y0, y1) = self.vb.viewRange()
        return max(-90.0, y0), min(90.0, y1), x0, x1

    def pixels_for(self, bounds) -> tuple[int, int]:
        """Physical pixels the box covers on screen, so frames are as sharp as the display."""
        lat0, lat1, lon0, lon1 = bounds
        px, py = self.vb.viewPixelSize()
        dpr = self.devicePixelRatioF() or 1.0
        if not px or not py:
            return 0, 0
        w = int(round((lon1 - lon0) / px * dpr))
        h = int(round((lat1 - lat0) / py * dpr))
        return max(w, 0), max(h, 0)

    def _mouse_moved(self, pos):
        if self.plot.sceneBoundingRect().contains(pos) and self.vb.sceneBoundingRect().contains(pos):
            p = self.vb.mapSceneToView(pos)
            self.hovered.emit(float(p.x()), float(p.y()))
        else:
            self.left.emit()
