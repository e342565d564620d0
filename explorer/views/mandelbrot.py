"""Mandelbrot zoom: the widget of explorer.models.mandelbrot's model, a canvas at its physical pixel
size and a side panel (iterations, colour, bookmarks, location, export). Gestures become the
model's commands, its requests go to the scheduler, and frames come back through it to the canvas.

Flow: a camera change moves the last frame at once (setRect) and asks for a render. At most one
render is in flight; while it runs, further changes only mark the view dirty, and the newest
camera is submitted as soon as the frame comes back (before that frame is displayed, so the
worker computes while the GUI paints). On the CPU a render first yields a quarter-resolution
frame, shown upscaled, so a slow machine still answers the mouse.

Zoom never stops: while float64 has the digits the float64 kernel draws; past them (or below
1e-290) a DeepFrameRequest goes to the scheduler's deep renderer (perturbation, then extended
exponents), whose reference orbit serves the pans and zooms after it. The format in use shows in
the readout and the side panel; the reference orbit's progress in the status bar; Esc cancels.
Frames, hover readout, place text and files, exports: mandelbrot_frames, _hover, _places,
_exporting.
"""
from __future__ import annotations

from PyQt6.QtCore import Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import QHBoxLayout, QSplitter

from kernels.mandelbrot.requests.formulas import EQUATIONS, LABELS

from ..models.camera import KEY_ZOOM, PAN_STEP
from ..models.location import parse_location, width_text
from ..models.mandelbrot import (CAMERA, COLOURING, FORMAT_NEWS, FORMULA, ITERATIONS,
                                 MandelbrotModel)
from .base import BaseView
from .mandelbrot_canvas import Canvas
from .mandelbrot_controls import Bookmark, MandelbrotControls
from .mandelbrot_exporting import ExportRunner
from .mandelbrot_frames import frame_loop
from .mandelbrot_hover import HoverReadout
from .mandelbrot_minibrot import MinibrotZoom
from .mandelbrot_number_type import NumberTypeControls
from .mandelbrot_overlays import OverlayHook
from .mandelbrot_places import PlaceActions
from .mandelbrot_readout import CoordinateReadout, readout_text, reference_text

WHEEL_GESTURE_MS = 400      # wheel steps closer than this form one history entry
# keys -> (model command, its arguments)
KEY_COMMANDS = {Qt.Key.Key_Left: ("pan_fraction", (-PAN_STEP, 0)),
                Qt.Key.Key_Right: ("pan_fraction", (PAN_STEP, 0)),
                Qt.Key.Key_Up: ("pan_fraction", (0, PAN_STEP)),
                Qt.Key.Key_Down: ("pan_fraction", (0, -PAN_STEP)),
                Qt.Key.Key_Plus: ("zoom_centre", (KEY_ZOOM,)),
                Qt.Key.Key_Equal: ("zoom_centre", (KEY_ZOOM,)),
                Qt.Key.Key_Minus: ("zoom_centre", (1.0 / KEY_ZOOM,)),
                Qt.Key.Key_Home: ("reset", ())}


class MandelbrotView(BaseView):
    view_id = "mandelbrot"

    frame_displayed = pyqtSignal(object, float)   # Frame, display ms (setImage [+ repaint])
    export_finished = pyqtSignal(str)             # path written
    export_failed = pyqtSignal(str)               # plain message (also on cancel)
    hover_value = pyqtSignal(float, float, float)  # row, col, smooth count

    def __init__(self, scheduler, backend, parent=None, *, warm_early: bool = True):
        """`warm_early`: load the kernels while the window is built; off when another view opens
        first (the worker and its GIL then go to that view's first result, and this view's
        kernels load when it is first shown)."""
        super().__init__(scheduler, backend, parent)
        self.model = MandelbrotModel(backend, self.canvas_size)
        self.paint_synchronously = False  # the UI bench times setImage + a forced repaint
        self._format_shown = None         # the number format on the side panel (rich text is slow)
        self._jumping = False             # a bookmark's jump: its camera change keeps it selected

        self.canvas = Canvas()
        self.readout = CoordinateReadout(self.canvas)   # where the picture looks, over its corner
        self.controls = MandelbrotControls()
        self.load_notes = list(self.controls.load_notes)    # the window shows them once built
        self.model.colouring = self.controls.colouring()
        self.model.fixed_iterations = self.controls.iterations()
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.canvas)
        split.addWidget(self.controls)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 0)
        split.setCollapsible(0, True)     # dragged shut, the canvas has no area: nothing renders
        split.setCollapsible(1, True)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split)
        self.splitter = split

        self.frames = frame_loop(self)
        self.hover = HoverReadout(self)
        self.places = PlaceActions(self)
        self.exports = ExportRunner(self)
        self.number_types = NumberTypeControls(self)    # float32 / float64, comparison mode
        self.minibrot = MinibrotZoom(self)          # N: zoom to the minibrot in view
        self.overlays = OverlayHook(self)     # the overlay selector in the side panel
        self.wheel_timer = QTimer(self, singleShot=True, interval=WHEEL_GESTURE_MS)
        self.wheel_timer.timeout.connect(self.model.end_gesture)
        self.resize_timer = QTimer(self, singleShot=True, interval=0)
        self.resize_timer.timeout.connect(self._canvas_resized)

        m = self.model
        m.observe(CAMERA, self._camera_changed)
        m.observe(ITERATIONS, self._show_iterations)
        m.observe(COLOURING, self.request_render)
        m.observe(COLOURING, self._update_readout)     # the iteration limit is part of it
        m.observe(FORMULA, self._formula_changed)
        vb = self.canvas.vb
        vb.drag_started.connect(m.begin_gesture)
        vb.panned.connect(self._on_pan)
        vb.drag_finished.connect(m.end_gesture)
        vb.box_zoom.connect(self._on_box)
        vb.wheel_zoom.connect(self._on_wheel)
        vb.double_clicked.connect(self._on_double_click)
        self.canvas.key_pressed.connect(self._on_key)
        self.canvas.resized.connect(self.resize_timer.start)
        self.frame_displayed.connect(lambda *_: self._update_readout())   # a deep frame's reference
        self.canvas.hovered.connect(self.hover.moved)

        c = self.controls
        c.formula_changed.connect(self.model.choose_formula)
        c.colouring_changed.connect(self._panel_changed)
        c.bookmark_chosen.connect(self.go_to_bookmark)
        c.bookmark_box.add_requested.connect(self.add_bookmark)
        c.bookmark_box.message.connect(lambda text: self.status_message.emit(text, 6000))
        c.bookmark_box.message.connect(self.notice.emit)    # added, removed, or why not: kept
        c.copy_requested.connect(self.copy_location)
        c.paste_requested.connect(self.paste_location)
        c.export_requested.connect(self.export_dialog)
        c.kfr_open_requested.connect(self.open_kfr_dialog)
        c.kfr_save_requested.connect(self.save_kfr_dialog)

        for seq, slot, widget, ctx in (
                ("Ctrl+C", self.copy_location, self.canvas, Qt.ShortcutContext.WidgetShortcut),
                ("Ctrl+V", self.paste_location, self.canvas, Qt.ShortcutContext.WidgetShortcut),
                ("Ctrl+E", self.export_dialog, self, Qt.ShortcutContext.WidgetWithChildrenShortcut)):
            sc = QShortcut(QKeySequence(seq), widget)
            sc.setContext(ctx)
            sc.activated.connect(slot)
        self._update_format(announce=False)
        self._update_readout()
        # load the kernels while the window is still being built and shown: on a GPU machine the
        # warm-up (numba's target set-up, cached kernels into the context) takes about a second
        if warm_early:
            self.frames.pump()

    # ---- the model's state, for the window, tools and tests --------------------------------------
    @property
    def camera(self):
        return self.model.camera

    @property
    def last_frame(self):
        """The frame on show (kernels.frame.Frame), or None before the first."""
        return self.model.frame

    @property
    def exporting(self) -> bool:
        return self.model.exporting

    @property
    def progressive(self) -> bool:
        """CPU (and slow deep) frames come coarse first, then full."""
        return self.model.progressive

    @progressive.setter
    def progressive(self, on: bool):
        self.model.progressive = bool(on)

    def canvas_size(self) -> tuple[int, int]:
        """The canvas in physical pixels (the size frames are rendered at)."""
        return self.canvas.physical_size()

    def backend_changed(self):
        self.model.backend = self.backend
        self.overlays.refresh()

    # ---- rendering -----------------------------------------------------------------------------
    def showEvent(self, ev):
        super().showEvent(ev)
        m = self.model
        if not m.started:
            m.started = True
            if self.controls.isVisibleTo(self):     # the picture gets all the room it can
                panel = self.controls.minimumSizeHint().width()
                self.splitter.setSizes([max(0, self.width() - panel), panel])
            m.dirty = True
            if self.in_flight and not m.is_warm():
                self.status_message.emit("Loading the kernels…", 0)  # said again: the window listens now
            self.frames.pump()

    def request_render(self):
        self.model.dirty = True
        self.frames.pump()

    # the view's own key: frames (explorer/views/mandelbrot_frames.py)
    def on_result(self, result):
        self.frames.on_result(result)

    def on_progress(self, item):
        self.frames.on_progress(item)

    def on_failed(self, message, tb):
        self.frames.on_failed(message)

    def on_cancelled(self):
        self.frames.pump()

    def cancel_render(self) -> bool:
        """Stop the frame being computed (Esc); the picture keeps the last finished frame and
        nothing is computed until the view changes again. False when nothing was running."""
        return self.frames.cancel()

    def _canvas_resized(self):
        self.frames.place_image()
        self._update_format(announce=False)
        self._update_readout()      # the centre's places follow the pixel size
        self.request_render()

    # ---- the model changed -------------------------------------------------------------------------
    def _camera_changed(self, ok: bool = True):
        if not ok:
            if self.camera.refusal:
                self.status_message.emit(self.camera.refusal, 5000)
                self.notice.emit(self.camera.refusal)
            return
        if not self._jumping:             # moved off the bookmark: no longer highlighted
            self.controls.bookmark_box.clear_selection()
        self.frames.place_image()
        self._update_format(announce=True)
        self.controls.show_auto_iterations(self.model.auto_iterations())
        self._update_readout()
        self.request_render()

    def _formula_changed(self, formula: str):
        """Another formula (the panel's, or a place's): the panel shows it, the overlays and the
        number type follow (only the Mandelbrot set has overlays and float32 kernels), and the
        view is drawn again."""
        self.controls.set_formula(formula)
        self.overlays.refresh()
        self.number_types.refresh(announce=False)
        self._update_readout()
        self.status_message.emit(f"Formula: {LABELS[formula]}, {EQUATIONS[formula]}", 4000)
        self.request_render()

    def _panel_changed(self):
        self.model.set_colouring(self.controls.colouring(), self.controls.iterations())

    def _show_iterations(self, n):
        """A jump set the iterations: the panel shows them without reporting a change back."""
        blocked = self.controls.blockSignals(True)
        try:
            self.controls.set_iterations(n)
        finally:            # an error here must never leave the panel's signals off
            self.controls.blockSignals(blocked)

    def _update_readout(self):
        m = self.model
        s = m.camera.state
        w, _ = self.canvas_size()
        frame = m.frame if m.format != "float64" else None      # the deep frame on show
        self.readout.set_text(readout_text(s.center_re, s.center_im, s.width, max(w, 1),
                                           m.iterations(), m.fixed_iterations is None,
                                           self.number_types.label(),
                                           reference_text(frame.meta if frame else None)))

    def _update_format(self, announce: bool):
        """The number format of the current camera, on the side panel (and, when it changes
        during a gesture, in the status bar)."""
        before = self.model.refresh_format()
        fmt = self.model.format
        if fmt != self._format_shown:     # rich text is slow
            self._format_shown = fmt
            self.controls.set_number_format(fmt)
        if announce and fmt != before:
            self.status_message.emit(f"Number format: {fmt} ({FORMAT_NEWS[fmt]})", 4000)
        self.number_types.refresh(announce and fmt == before)

    # ---- gestures ----------------------------------------------------------------------------
    def _on_pan(self, dx, dy):
        self.model.pan(dx, dy)

    def _on_wheel(self, factor, x, y):
        self.wheel_timer.start()
        self.model.wheel_zoom(factor, x, y)

    def _on_box(self, x0, y0, x1, y1):
        if not self.minibrot.take_box(x0, y0, x1, y1):     # Shift+N armed it: a minibrot's box
            self.model.zoom_box(x0, y0, x1, y1)

    def _on_double_click(self, x, y):
        self.model.centre_on(x, y)

    def _on_key(self, ev):
        k = ev.key()
        if k in KEY_COMMANDS:
            command, args = KEY_COMMANDS[k]
            getattr(self.model, command)(*args)
        elif k == Qt.Key.Key_Backspace:
            if not self.model.back():
                self.status_message.emit("No earlier view to go back to", 2000)
        elif k == Qt.Key.Key_Escape and not self.canvas.vb.cancel_box():
            if not self.minibrot.cancel():          # a minibrot search first, else the frame
                self.cancel_render()

    # ---- places --------------------------------------------------------------------------------
    def go_to(self, center_re, center_im, width, iterations=None, *, keep_iterations=False,
              formula: str | None = None) -> bool:
        """Jump to a location (explorer.models.mandelbrot.MandelbrotModel.go_to; `formula`: the
        place's, None keeps the view's); a refusal leaves the view as it was and says why in the
        status bar (and in self.camera.refusal)."""
        return self.model.go_to(center_re, center_im, width, iterations,
                                keep_iterations=keep_iterations, formula=formula)

    def go_to_bookmark(self, b: Bookmark):
        self._jumping = True
        try:
            went = self.go_to(b.center_re, b.center_im, b.width, b.iterations, formula=b.formula)
        finally:
            self._jumping = False
        if went:
            self.status_message.emit(f"{b.name}", 3000)

    def add_bookmark(self, name: str | None = None) -> bool:
        """Keep the current place (centre, width, the iterations if fixed) as the user's own
        bookmark `name` (asked for when None)."""
        box = self.controls.bookmark_box
        # the place as Copy location gives it: every digit the zoom needs, no more
        loc = parse_location(self.model.location_text())
        if name is None:
            name = box.ask_name("Add bookmark", f"My place (width {width_text(loc.width)})")
            if name is None:
                return False
        return box.add(name, loc.center_re, loc.center_im, loc.width, loc.iterations,
                       loc.formula)

    def location_text(self) -> str:
        return self.model.location_text()

    def copy_location(self):
        self.places.copy()

    def paste_location(self, text: str | None = None) -> bool:
        """Go to the location in `text` (default: the clipboard); False, and why, when bad."""
        return self.places.paste(text)

    def open_kfr(self, path: str) -> bool:
        return self.places.open_kfr(path)

    def save_kfr(self, path: str) -> bool:
        return self.places.save_kfr(path)

    def open_kfr_dialog(self):
        self.places.open_kfr_dialog()

    def save_kfr_dialog(self):
        self.places.save_kfr_dialog()

    # ---- export --------------------------------------------------------------------------------
    def export_dialog(self):
        self.exports.ask()

    def export_gpus(self) -> list:
        """The GPUs an export may use (kernels.spread.GpuInfo): every GPU of the machine when the
        view runs on a real GPU, none on the CPU (or the simulator, which is one device)."""
        if not self.backend.is_gpu or self.backend.simulated:
            return []
        from kernels.spread import gpu_list
        return gpu_list()

    def start_export(self, path: str, w: int, h: int, *, show_progress: bool = True,
                     gpus: tuple[int, ...] | None = None) -> bool:
        """Render the current view at w×h into path (.png or .npy) on the worker; `gpus`: spread
        the picture's bands over these GPUs (one worker thread each) instead."""
        return self.exports.start(path, w, h, show_progress=show_progress, gpus=gpus)

    def cancel_export(self):
        self.exports.cancel()

    # ---- results under the view's side keys ---------------------------------------------------
    def on_side_result(self, key, result):
        if key == self.side_key("hover"):
            self.hover.done(result)
        elif key == self.side_key("compare"):
            self.number_types.done(result)
        elif key == self.minibrot.key:
            self.minibrot.on_result(result)
        else:
            self.exports.on_result(result)

    def on_side_failed(self, key, message):
        if key == self.side_key("hover"):
            self.hover.done(None)
        elif key == self.side_key("compare"):
            self.number_types.failed(message)
        elif key == self.minibrot.key:
            self.minibrot.on_failed(message)
        elif key == self.side_key("export"):
            self.exports.on_failed(message)

    def shutdown(self):
        self.exports.close_dialog()
        self.number_types.close()
        super().shutdown()
