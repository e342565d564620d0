"""Distance heatmap: great-circle distance from a reference point over a lon/lat map, coloured on
the device, with coastlines, iso-distance rings and a colour bar in the chosen unit.

Click sets the reference point (a drag pans), the wheel zooms, hovering reads out the distance
(computed on the host from the formula: one point is cheaper than a device read-back). Every pan,
zoom or resize asks for a frame of the visible box at the screen's pixel size; at most one frame is
in flight and the newest view state is sent as soon as it returns, so input storms never queue.
The strategy selector shows what crosses the bus on the GPU; on the CPU it does not apply.
"""
from __future__ import annotations

import math
import time

from PyQt6.QtCore import Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QMainWindow, QPushButton,
                             QSizePolicy, QVBoxLayout)

from kernels.distance import request as kd
from kernels import palettes

from .base import BaseView
from .distance_map import (COASTLINE_CREDIT, LABEL_SPACING_PX, MapCanvas, ring_label_points,
                           ring_step, rings_xy)

MAX_SIDE = 4096                  # frames beyond this are scaled down (a 4K screen is 3840 wide)
KM_PER_DEGREE = kd.HALF_CIRCUMFERENCE_KM / 180.0
PALETTES = ("viridis", "inferno", "magma", "plasma", "cividis", "turbo", "CET-L17")
CPU_STRATEGY_TIP = ("The three strategies differ only in what is copied to the GPU. On the CPU "
                    "there is no bus to cross: all three are the same computation (the CPU twin).")
STRATEGY_KEYS_TIP = f" (Alt+{'/'.join(str(i + 1) for i in range(len(kd.STRATEGIES)))})"
HOVER_HINT = "Hover: distance · click: new reference"
SIM_BROADCAST_TIP = ("Not available under numba's CUDA simulator, which cannot build "
                     "@vectorize(target='cuda') ufuncs; it runs on a real GPU.")


def format_lat_lon(lat: float, lon: float) -> str:
    lon = (lon + 180.0) % 360.0 - 180.0
    return (f"{abs(lat):.3f}° {'N' if lat >= 0 else 'S'}, "
            f"{abs(lon):.3f}° {'E' if lon >= 0 else 'W'}")


def format_distance(value: float, unit: str) -> str:
    return f"{value:,.1f} {unit}" if value >= 10 else f"{value:,.3f} {unit}"


class DistanceView(BaseView):
    view_id = "distance"

    frame_shown = pyqtSignal(object)        # kernels.frame.Frame, after it is on screen

    def __init__(self, scheduler, backend, parent=None):
        super().__init__(scheduler, backend, parent)
        self.ref = kd.LONDON
        self.last_frame = None
        self.max_side = MAX_SIDE             # tests shrink it under the CUDA simulator
        self.hover_text = ""
        self._hover_at: tuple[float, float] | None = None     # lon, lat under the mouse
        self._rendered_on: set = set()       # backends that have delivered a frame (compiled)
        self._started = False
        self._dirty = False
        self._rings_key = None

        self.canvas = MapCanvas()
        self.load_notes = list(self.canvas.load_notes)    # the window shows them once built
        self.strategy_combo = QComboBox()
        for s in kd.STRATEGIES:
            self.strategy_combo.addItem(s, s)
            self.strategy_combo.setItemData(self.strategy_combo.count() - 1, kd.STRATEGY_HELP[s],
                                            Qt.ItemDataRole.ToolTipRole)
        self.strategy_combo.setCurrentText(kd.DEFAULT_STRATEGY)
        self.unit_combo = QComboBox()
        for u in kd.UNITS:
            self.unit_combo.addItem(f"{u} ({kd.UNIT_NAMES[u]})", u)
        self.unit_combo.setToolTip("Unit of the colour bar, the rings and the readout (U cycles)")
        self.palette_combo = QComboBox()
        have = set(palettes.names())
        self.palette_combo.addItems([p for p in PALETTES if p in have] or [palettes.DEFAULT])
        self.palette_combo.setCurrentText(kd.DEFAULT_PALETTE)
        self.palette_combo.setToolTip("Colour map, applied on the device")
        self.world_button = QPushButton("World")
        self.world_button.setToolTip("Show the whole world (Home)")
        self.readout = QLabel()
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setText(HOVER_HINT)        # an empty foot told a new user nothing
        self.rings_label = QLabel()
        self.rings_label.setToolTip("Dashed rings are iso-distance lines, drawn from the formula")
        # short, so the readout keeps its room in a narrow window; the whole credit in the tooltip
        credit = QLabel("Coastline: Natural Earth")
        credit.setToolTip(f"Coastline: {COASTLINE_CREDIT}")
        credit.setStyleSheet("color: gray")

        self.strategy_label = QLabel("&Strategy:")
        bar = QHBoxLayout()
        for lab, widget in ((self.strategy_label, self.strategy_combo),
                            (QLabel("&Unit:"), self.unit_combo), (QLabel("&Palette:"), self.palette_combo)):
            lab.setBuddy(widget)
            bar.addWidget(lab)
            bar.addWidget(widget)
        bar.addWidget(self.world_button)
        bar.addStretch(1)
        # the readout changes with every mouse move: it must never resize the window
        self.readout.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        foot = QHBoxLayout()
        foot.addWidget(self.readout, 1)
        foot.addWidget(self.rings_label)
        foot.addSpacing(12)
        foot.addWidget(credit)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 2)
        lay.addLayout(bar)
        lay.addWidget(self.canvas, 1)
        lay.addLayout(foot)

        self._render_timer = QTimer(self, singleShot=True, interval=0)
        self._render_timer.timeout.connect(self._pump)

        self.canvas.vb.clicked.connect(self._on_click)
        self.canvas.vb.sigRangeChanged.connect(self._on_range_changed)
        self.canvas.hovered.connect(self._on_hover)
        self.canvas.left.connect(self.clear_hover)
        self.strategy_combo.currentIndexChanged.connect(self._on_strategy)
        self.unit_combo.currentIndexChanged.connect(self._on_unit)
        self.palette_combo.currentIndexChanged.connect(self.request_render)
        self.world_button.clicked.connect(self.show_world)

        # Alt+digit, not Ctrl+digit: Ctrl+1..4 switch the window's views from anywhere
        strategy_keys = [(f"Alt+{i + 1}", lambda s=s: self.set_strategy(s))
                         for i, s in enumerate(kd.STRATEGIES)]
        for seq, slot in [("Home", self.show_world), ("U", self.next_unit)] + strategy_keys:
            sc = QShortcut(QKeySequence(seq), self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(slot)

        self.canvas.set_reference(*self.ref)
        self._update_backend_controls()
        self.show_world()

    # ---- state -------------------------------------------------------------------------------------
    @property
    def unit(self) -> str:
        return self.unit_combo.currentData()

    @property
    def strategy(self) -> str:
        return self.strategy_combo.currentData()

    @property
    def palette(self) -> str:
        return self.palette_combo.currentText()

    def set_reference(self, lat: float, lon: float):
        lat = min(90.0, max(-90.0, float(lat)))
        self.ref = (lat, float(lon))
        self.canvas.set_reference(lat, float(lon))
        self._update_rings()
        if self._hover_at is None:
            self.status_message.emit(f"Reference point: {format_lat_lon(lat, lon)}", 4000)
        else:       # the hover line names the new reference; it must not keep the old one
            self._show_hover()
        self.request_render()

    def set_strategy(self, strategy: str):
        i = self.strategy_combo.findData(strategy)
        item = self.strategy_combo.model().item(i) if i >= 0 else None
        if item is not None and item.isEnabled() and self.strategy_combo.isEnabled():
            self.strategy_combo.setCurrentIndex(i)

    def set_unit(self, unit: str):
        self.unit_combo.setCurrentIndex(self.unit_combo.findData(unit))

    def next_unit(self):
        self.unit_combo.setCurrentIndex((self.unit_combo.currentIndex() + 1) % self.unit_combo.count())

    def show_world(self):
        self.canvas.vb.fit_world()

    def backend_changed(self):
        self._update_backend_controls()

    def _update_backend_controls(self):
        b = self.backend
        combo = self.strategy_combo
        item = combo.model().item(kd.STRATEGIES.index("broadcast"))
        item.setEnabled(not b.simulated)
        item.setToolTip(SIM_BROADCAST_TIP if b.simulated else kd.STRATEGY_HELP["broadcast"])
        if b.simulated and self.strategy == "broadcast":
            combo.setCurrentIndex(kd.STRATEGIES.index(kd.DEFAULT_STRATEGY))
        combo.setEnabled(b.is_gpu)
        self.strategy_label.setText("&Strategy:" if b.is_gpu else "&Strategy (GPU only):")
        self.strategy_label.setToolTip("" if b.is_gpu else CPU_STRATEGY_TIP)
        combo.setToolTip(kd.STRATEGY_HELP[self.strategy] + STRATEGY_KEYS_TIP if b.is_gpu
                         else CPU_STRATEGY_TIP)

    # ---- rendering ---------------------------------------------------------------------------------
    def showEvent(self, ev):
        if not self._started:
            self._stale = False          # the first frame below covers it
            self._started = True
            self.request_render()
        super().showEvent(ev)

    def request_render(self):
        self._dirty = True
        self._render_timer.start()

    def build_request(self) -> kd.DistanceRequest | None:
        bounds = self.canvas.visible_bounds()
        w, h = self.canvas.pixels_for(bounds)
        if w * h < 2 or bounds[1] <= bounds[0] or bounds[3] <= bounds[2]:
            return None
        k = min(1.0, self.max_side / max(w, h))
        w, h = max(1, int(w * k)), max(1, int(h * k))
        return kd.DistanceRequest(bounds=tuple(float(v) for v in bounds), ref=self.ref,
                                  size=(w, h), unit=self.unit, strategy=self.strategy,
                                  palette=self.palette, backend=self.backend)

    def _pump(self):
        if not self._started or self.in_flight or not self._dirty:
            return
        req = self.build_request()
        if req is None:
            return                      # resumes from the resize that gives the map an area
        self._dirty = False
        try:
            req.validate()
        except ValueError as exc:
            self.status_message.emit(f"Cannot render this view: {exc}", 5000)
            return
        if self.backend not in self._rendered_on:
            self.status_message.emit("Compiling the distance kernels…", 0)
        self.submit(req)

    def on_result(self, frame):
        self._pump()                    # the next view state computes while this one is painted
        t0 = time.perf_counter()
        req = frame.request
        self._rendered_on.add(req.backend)
        self.canvas.show_frame(frame.rgba, req.bounds)
        self.canvas.set_scale(frame.meta["vmax"], req.unit, req.palette)
        ms = (time.perf_counter() - t0) * 1e3
        frame.timings.add("host", ms)
        frame.timings.detail["display"] = ms   # the panel draws display apart
        self.last_frame = frame
        compile_ms = frame.timings.phases_ms.get("compile")
        if compile_ms is not None:
            self.status_message.emit(f"Distance kernels compiled in {compile_ms:.0f} ms", 3000)
        self.report_timings(frame.timings)
        self.frame_shown.emit(frame)

    def on_failed(self, message, tb):
        self.error_message.emit(f"Distance heatmap failed: {message}")
        self._pump()                    # a newer view state, if any, still gets its frame

    def on_cancelled(self):
        self._pump()

    # ---- input -------------------------------------------------------------------------------------
    def _on_click(self, lon: float, lat: float):
        if -90.0 <= lat <= 90.0:
            self.set_reference(lat, lon)

    def _on_range_changed(self, *_):
        self._update_rings()
        self.request_render()

    def _on_strategy(self, _):
        if self.backend.is_gpu:
            self.strategy_combo.setToolTip(kd.STRATEGY_HELP[self.strategy] + STRATEGY_KEYS_TIP)
            self.status_message.emit(f"Strategy {self.strategy}: {kd.STRATEGY_HELP[self.strategy]}", 6000)
        self.request_render()

    def _on_unit(self, _):
        self.canvas.bar.axis.setLabel(f"distance ({self.unit})")
        self._update_rings()
        self._show_hover()
        self.request_render()

    def _on_hover(self, lon: float, lat: float):
        if not -90.0 <= lat <= 90.0:
            return
        self._hover_at = (lon, lat)
        self._show_hover()

    def _show_hover(self):
        """The readout and status line for the point under the mouse, from the current reference
        and unit (both change under a still mouse: a click, U)."""
        if self._hover_at is None:
            return
        lon, lat = self._hover_at
        d = kd.distance_km(self.ref[0], self.ref[1], lat, lon) / kd.UNIT_KM[self.unit]
        self.hover_text = (f"{format_lat_lon(lat, lon)}: {format_distance(d, self.unit)} from "
                           f"{format_lat_lon(*self.ref)}")
        self.readout.setText(self.hover_text)
        if self.isVisible():
            self.status_message.emit(self.hover_text, 0)

    def clear_hover(self):
        """The mouse left the map or the view left the screen: no readout of a point that is not
        under the mouse, and the window's status line no longer shows it (it stays until replaced,
        so it showed on the other tabs)."""
        if self._hover_at is None and not self.hover_text:
            return
        win = self.window()
        bar = win.statusBar() if isinstance(win, QMainWindow) else None
        if bar is not None and self.hover_text and bar.currentMessage() == self.hover_text:
            bar.clearMessage()
        self._hover_at = None
        self.hover_text = ""
        self.readout.setText(HOVER_HINT)

    def hideEvent(self, ev):
        super().hideEvent(ev)
        self.clear_hover()

    def _update_rings(self):
        lat0, lat1, _, _ = self.canvas.visible_bounds()
        height = max(lat1 - lat0, 1e-6) * KM_PER_DEGREE / kd.UNIT_KM[self.unit]
        step = ring_step(height)
        py = self.canvas.vb.viewPixelSize()[1] or 1.0
        ring_px = step * kd.UNIT_KM[self.unit] / KM_PER_DEGREE / py
        every = max(1, math.ceil(LABEL_SPACING_PX / max(ring_px, 1e-9)))
        labels = ring_label_points(self.ref[0], self.ref[1], step, self.unit, every)
        self.canvas.set_ring_labels(labels)     # cheap; follows the pan to the nearest wrap
        key = (self.ref, step, self.unit)
        if key == self._rings_key:
            return
        self._rings_key = key
        self.canvas.set_rings(*rings_xy(self.ref[0], self.ref[1], step, self.unit))
        self.rings_label.setText(f"Rings every {step:g} {self.unit}")
