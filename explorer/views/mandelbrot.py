"""Mandelbrot zoom: a camera over the complex plane, rendered on the worker at the canvas's
physical pixel size, with a side panel for iterations, colour, bookmarks, location and export.

Flow: a camera change moves the last frame at once (setRect) and asks for a render. At most one
render is in flight; while it runs, further changes only mark the view dirty, and the newest
camera is submitted as soon as the frame comes back (before that frame is displayed, so the
worker computes while the GUI paints). On the CPU a render first yields a quarter-resolution
frame, shown upscaled, so a slow machine still answers the mouse.

Zoom never stops: while float64 has the digits the float64 kernel draws; past them (or below
1e-290) a DeepFrameRequest goes to the scheduler's deep renderer (perturbation, then extended
exponents), whose reference orbit serves the pans and zooms after it. The format in use shows in
the readout and the side panel; the reference orbit's progress in the status bar; Esc cancels.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from decimal import Decimal

from PyQt6.QtCore import QRectF, Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PyQt6.QtWidgets import QHBoxLayout, QProgressDialog, QSplitter

from kernels import palettes
from kernels.frame import Frame
from kernels.mandelbrot import request as km
from kernels.mandelbrot.number_format import number_format
from kernels.scheduler import (
    Compiled,
    Exported,
    ExportProgress,
    PixelValue,
    ReadPixel,
    Warmup,
)
from kernels.timing import Timings
from services.export_jobs import MandelbrotExport
from services.files import check_export_path
from services.kfr import format_kfr, parse_kfr
from services.requests import check_location, place_request

from .base import BaseView
from .mandelbrot_camera import KEY_ZOOM, PAN_STEP, Camera, CameraState
from .mandelbrot_canvas import Canvas
from .mandelbrot_controls import Bookmark, MandelbrotControls
from .mandelbrot_location import format_location, parse_location
from .mandelbrot_readout import (
    CoordinateReadout,
    centre_places,
    coordinate_text,
    readout_text,
)

COARSE = 4                  # the CPU's first pass renders at 1/COARSE resolution
PROGRESSIVE_MIN_PIXELS = 160 * 120
# a deep frame slower than this makes the next ones coarse-first on the GPU too (on the CPU they
# always are): the reference orbit of a new place, or millions of iterations
DEEP_PROGRESSIVE_MS = 150.0
WHEEL_GESTURE_MS = 400      # wheel steps closer than this form one history entry


@dataclass(frozen=True)
class _Ticket:
    """What a submitted frame shows: the camera and the canvas size it was rendered for."""
    state: CameraState
    w: int
    h: int
    coarse: bool = False


class MandelbrotView(BaseView):
    view_id = "mandelbrot"

    frame_displayed = pyqtSignal(object, float)   # Frame, display ms (setImage [+ repaint])
    export_finished = pyqtSignal(str)             # path written
    export_failed = pyqtSignal(str)               # plain message (also on cancel)
    hover_value = pyqtSignal(float, float, float)  # row, col, smooth count

    def __init__(self, scheduler, backend, parent=None):
        super().__init__(scheduler, backend, parent)
        self.camera = Camera()                 # no precision limit: deep frames take over
        self.progressive = True          # CPU coarse-then-full frames
        self.paint_synchronously = False  # the UI bench times setImage + a forced repaint
        self._warm: set = set()          # backends whose kernels are compiled
        self._started = False
        self._dirty = False
        self._shown: _Ticket | None = None
        self._frame = None
        self._format = "float64"             # number format of the current camera's frames
        self._deep_slow = False              # the last deep frame was slow: coarse first
        self._progress_shown = False
        self._tickets: dict[int, _Ticket] = {}   # generation -> what that submission shows
        self._hover_busy = False
        self._hover_next = None
        self._exporting = False
        self._export_dialog: QProgressDialog | None = None

        self.canvas = Canvas()
        self.readout = CoordinateReadout(self.canvas)   # where the picture looks, over its corner
        self.controls = MandelbrotControls()
        self.load_notes = list(self.controls.load_notes)    # the window shows them once built
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

        self._wheel_timer = QTimer(self, singleShot=True, interval=WHEEL_GESTURE_MS)
        self._wheel_timer.timeout.connect(self.camera.end_gesture)
        self._resize_timer = QTimer(self, singleShot=True, interval=0)
        self._resize_timer.timeout.connect(self._canvas_resized)

        vb = self.canvas.vb
        vb.drag_started.connect(self.camera.begin_gesture)
        vb.panned.connect(self._on_pan)
        vb.drag_finished.connect(self.camera.end_gesture)
        vb.box_zoom.connect(self._on_box)
        vb.wheel_zoom.connect(self._on_wheel)
        vb.double_clicked.connect(self._on_double_click)
        self.canvas.key_pressed.connect(self._on_key)
        self.canvas.resized.connect(self._resize_timer.start)
        self.canvas.hovered.connect(self._on_hover)

        c = self.controls
        c.colouring_changed.connect(self.request_render)
        c.colouring_changed.connect(self._update_readout)     # the iteration limit is part of it
        c.bookmark_chosen.connect(self.go_to_bookmark)
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
        self._pump()

    # ---- state -> request --------------------------------------------------------------------
    def canvas_size(self) -> tuple[int, int]:
        """The canvas in physical pixels (the size frames are rendered at)."""
        return self.canvas.physical_size()

    def iterations(self) -> int:
        n = self.controls.iterations()
        return int(n) if n is not None else int(km.auto_iterations(self.camera.width))

    def number_format(self, w: int | None = None) -> str:
        """"float64" | "perturbation" | "extended": the arithmetic frames of the current camera use
        at `w` pixels across (default: the canvas's)."""
        s = self.camera.state
        if w is None:
            w = max(self.canvas_size()[0], 1)
        return number_format(s.center_re, s.center_im, s.width, w)

    def build_request(self, w: int, h: int):
        """A MandelbrotRequest where float64 suffices, else a DeepFrameRequest (the centre's and
        width's digits as decimal strings)."""
        s = self.camera.state
        c = self.controls
        fmt = self.number_format(w)
        colour = {"palette": c.palette.currentText(), "density": float(c.density.value()),
                  "offset": float(c.offset.value()), "interior": tuple(c.interior()),
                  "mapping": c.mapping_for(fmt), "want_values": False, "backend": self.backend}
        return place_request(s.center_re, s.center_im, s.width, (w, h), self.iterations(), **colour)

    # ---- rendering -----------------------------------------------------------------------------
    def showEvent(self, ev):
        super().showEvent(ev)
        if not self._started:
            self._started = True
            if self.controls.isVisibleTo(self):     # the picture gets all the room it can
                panel = self.controls.minimumSizeHint().width()
                self.splitter.setSizes([max(0, self.width() - panel), panel])
            self._dirty = True
            if self.in_flight and self.backend not in self._warm:
                self.status_message.emit("Compiling kernels…", 0)  # said again: the window listens now
            self._pump()

    def request_render(self):
        self._dirty = True
        self._pump()

    def _pump(self):
        """Submit the next job if none is in flight: the kernels' warm-up first (it needs no
        picture, so it starts with the view), then a frame once the view is shown."""
        if self.in_flight:
            return
        if self.backend not in self._warm:
            self.status_message.emit("Compiling kernels…", 0)
            self.submit(Warmup("mandelbrot", self.backend))
            return
        if not self._started or not self._dirty:
            return
        w, h = self.canvas_size()
        if w <= 0 or h <= 0:
            return              # resumes from the resize that gives the canvas an area
        self._submit_frame(w, h)

    def _submit_frame(self, w: int, h: int, *, replace_running: bool = False):
        try:
            req = self.build_request(w, h)
            req.validate()
        except ValueError as exc:
            self._dirty = False
            self.status_message.emit(f"Cannot render this view: {exc}", 5000)
            return
        self._dirty = False
        deep = isinstance(req, km.DeepFrameRequest)
        slow = not self.backend.is_gpu or (deep and self._deep_slow)
        progressive = self.progressive and slow and w * h >= PROGRESSIVE_MIN_PIXELS
        if progressive:
            coarse = dataclasses.replace(req, size=(max(1, w // COARSE), max(1, h // COARSE)))
            req = km.ProgressiveRequest(full=req, coarse=coarse)
        ticket = _Ticket(self.camera.state, w, h)
        gen = self.submit(req, replace_running=replace_running)
        # kept beside the job: the frame's request carries only float64 centres, not the camera
        self._tickets = {gen: ticket}

    def on_result(self, result):
        if isinstance(result, Compiled):
            self._warm.add(result.backend)
            t = Timings(backend=result.backend.name, label="mandelbrot: compile kernels")
            t.add("compile", result.ms)
            self.report_timings(t)
            self.status_message.emit(
                f"Kernels compiled in {result.ms:.0f} ms" if result.ms is not None else "Kernels ready", 3000)
            self._dirty = True
            self._pump()
            return
        assert isinstance(result, Frame), result
        ticket = self._current_ticket()
        fmt = result.meta.get("format", "float64")
        if fmt != "float64":
            total = result.timings.phases_ms.get("total")
            self._deep_slow = total is not None and total > DEEP_PROGRESSIVE_MS
        if self._progress_shown:    # the reference orbit's progress was on show: say it is done
            self._progress_shown = False
            self.status_message.emit(f"Deep frame ({fmt}) done", 2000)
        self._pump()            # the next frame computes while this one is painted
        self._display(ticket, result)

    def _current_ticket(self) -> _Ticket:
        return next(iter(self._tickets.values()))

    def on_progress(self, frame):
        if isinstance(frame, km.DeepProgress):
            self._show_deep_progress(frame)
            if frame.stage == "pixels":
                return          # the pixels of a deep frame end soon: let them finish
        else:
            self._display(dataclasses.replace(self._current_ticket(), coarse=True), frame)
        if self._dirty:         # drop the full pass of a view that is already out of date
            w, h = self.canvas_size()
            if w > 0 and h > 0 and self.backend in self._warm:
                self._submit_frame(w, h, replace_running=True)

    def on_failed(self, message, tb):
        if self.backend not in self._warm:
            self._warm.add(self.backend)    # do not retry a failing compile in a loop
        self.error_message.emit(f"Mandelbrot render failed: {message}")
        self._pump()

    def on_cancelled(self):
        self._pump()

    def _show_deep_progress(self, p):
        """The deep frame's stage in the status bar: the reference orbit (arbitrary precision on
        the host, seconds at great depths), then the pixels."""
        if p.stage == "pixels" and not self._progress_shown and self.backend.is_gpu:
            return              # a GPU frame's pixels take milliseconds: no message for them
        self._progress_shown = True
        if p.stage == "compile":
            self.status_message.emit("Compiling the deep-zoom kernels…", 0)
            return
        what = "Reference orbit" if p.stage == "reference" else "Deep-zoom pixels"
        self.status_message.emit(f"{what}: {max(0.0, min(1.0, p.fraction)):.0%}   (Esc cancels)", 0)

    def cancel_render(self) -> bool:
        """Stop the frame being computed (Esc); the picture keeps the last finished frame and
        nothing is computed until the view changes again. False when nothing was running."""
        if not self.in_flight:
            return False
        self._dirty = False
        self.cancel()
        self._progress_shown = False
        self.status_message.emit("Frame cancelled: the picture shows the last finished one", 4000)
        return True

    def _display(self, ticket: _Ticket, frame):
        t0 = time.perf_counter()
        self.canvas.image.setImage(frame.rgba, autoLevels=False)
        self._shown, self._frame = ticket, frame
        self._place_image()
        if self.paint_synchronously:
            self.canvas.viewport().repaint()
        ms = (time.perf_counter() - t0) * 1e3
        frame.timings.add("host", ms)
        frame.timings.detail["display"] = ms   # the panel draws display apart
        self.report_timings(frame.timings)
        self.frame_displayed.emit(frame, ms)

    def _place_image(self):
        """Put the shown frame where its camera says, relative to the current camera."""
        t = self._shown
        if t is None or self.canvas.image.image is None:
            return
        w, h = self.canvas_size()
        cur = self.camera.state
        # the scale between the two frames' pixels (Decimal: deep widths are no floats); a frame
        # magnified past any use is kept within what a float and Qt hold
        k = float(min((t.state.width / t.w) / (cur.width / max(w, 1)), Decimal("1e12")))
        x0, y0 = cur.to_pixel(*t.state.to_complex(0.0, 0.0, t.w, t.h), max(w, 1), max(h, 1))
        x0, y0 = (max(-1e15, min(1e15, v)) for v in (x0, y0))
        self.canvas.image.setRect(QRectF(x0, y0, t.w * k, t.h * k))

    def _canvas_resized(self):
        self._place_image()
        self._update_format(announce=False)
        self._update_readout()      # the centre's places follow the pixel size
        self.request_render()

    # ---- camera changes ----------------------------------------------------------------------
    def _camera_changed(self, ok: bool = True):
        if not ok:
            if self.camera.refusal:
                self.status_message.emit(self.camera.refusal, 5000)
            return
        self._place_image()
        self._update_format(announce=True)
        self.controls.show_auto_iterations(km.auto_iterations(self.camera.width))
        self._update_readout()
        self.request_render()

    def _update_readout(self):
        s = self.camera.state
        w, _ = self.canvas_size()
        self.readout.set_text(readout_text(s.center_re, s.center_im, s.width, max(w, 1),
                                           self.iterations(), self.controls.iterations() is None,
                                           self._format))

    def _update_format(self, announce: bool):
        """The number format of the current camera, on the side panel (and, when it changes
        during a gesture, in the status bar)."""
        fmt = self.number_format()
        if fmt != getattr(self, "_format_shown", None):     # rich text is slow
            self._format_shown = fmt
            self.controls.set_number_format(fmt)
        if announce and fmt != self._format:
            words = {"float64": "float64 suffices again",
                     "perturbation": "past float64's digits: deep zoom by perturbation",
                     "extended": "below float64's range: extended exponents"}
            self.status_message.emit(f"Number format: {fmt} ({words[fmt]})", 4000)
        self._format = fmt

    def _on_pan(self, dx, dy):
        w, _ = self.canvas_size()
        self._camera_changed(self.camera.pan_pixels(dx, dy, w))

    def _on_wheel(self, factor, x, y):
        w, h = self.canvas_size()
        self.camera.begin_gesture()
        self._wheel_timer.start()
        self._camera_changed(self.camera.zoom_about(factor, x, y, w, h))

    def _on_box(self, x0, y0, x1, y1):
        w, h = self.canvas_size()
        if abs(x1 - x0) < 3 and abs(y1 - y0) < 3:
            return
        self._camera_changed(self.camera.zoom_to_box(x0, y0, x1, y1, w, h))

    def _on_double_click(self, x, y):
        w, h = self.canvas_size()
        self._camera_changed(self.camera.centre_on(x, y, w, h))

    def _on_key(self, ev):
        w, h = self.canvas_size()
        k, cam = ev.key(), self.camera
        step = PAN_STEP
        if k == Qt.Key.Key_Left:
            self._camera_changed(cam.pan_fraction(-step, 0, w, h))
        elif k == Qt.Key.Key_Right:
            self._camera_changed(cam.pan_fraction(step, 0, w, h))
        elif k == Qt.Key.Key_Up:
            self._camera_changed(cam.pan_fraction(0, step, w, h))
        elif k == Qt.Key.Key_Down:
            self._camera_changed(cam.pan_fraction(0, -step, w, h))
        elif k in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self._camera_changed(cam.zoom_centre(KEY_ZOOM, w, h))
        elif k == Qt.Key.Key_Minus:
            self._camera_changed(cam.zoom_centre(1.0 / KEY_ZOOM, w, h))
        elif k == Qt.Key.Key_Home:
            self._camera_changed(cam.reset())
        elif k == Qt.Key.Key_Backspace:
            if cam.back():
                self._camera_changed()
            else:
                self.status_message.emit("No earlier view to go back to", 2000)
        elif k == Qt.Key.Key_Escape and not self.canvas.vb.cancel_box():
            self.cancel_render()                    # no zoom box being drawn: stop the frame

    # ---- bookmarks, location -----------------------------------------------------------------
    def go_to(self, center_re, center_im, width, iterations=None, *, keep_iterations=False) -> bool:
        """Jump to a location (a bookmark, pasted text): centre and width as numbers, Decimals or
        decimal strings of any length. It meets the limits every location meets
        (services.requests.check_location); a refusal leaves the view as it was and says why in the
        status bar (and in self.camera.refusal)."""
        w, _ = self.canvas_size()
        try:
            check_location(center_re, center_im, width, None if keep_iterations else iterations)
            state = CameraState.of(center_re, center_im, width)
        except (ValueError, ArithmeticError) as exc:
            self.camera.refusal = f"Cannot go there: {exc}"
            self._camera_changed(False)
            return False
        ok = self.camera.go_to(state, max(w, 1))
        if ok and not keep_iterations:
            blocked = self.controls.blockSignals(True)
            try:
                self.controls.set_iterations(iterations)
            finally:            # an error here must never leave the panel's signals off
                self.controls.blockSignals(blocked)
        self._camera_changed(ok)
        return ok

    def go_to_bookmark(self, b: Bookmark):
        if self.go_to(b.center_re, b.center_im, b.width, b.iterations):
            self.status_message.emit(f"{b.name}", 3000)

    def location_text(self) -> str:
        s = self.camera.state
        return format_location(s.center_re, s.center_im, s.width, self.controls.iterations())

    def copy_location(self):
        try:
            text = self.location_text()
        except (ValueError, ArithmeticError) as exc:     # never expected: the camera is checked
            self.status_message.emit(f"Cannot copy the location: {exc}", 6000)
            return
        QGuiApplication.clipboard().setText(text)
        self.status_message.emit(f"Copied: {text}", 4000)

    def paste_location(self, text: str | None = None) -> bool:
        """Go to the location in `text` (default: the clipboard). Bad text leaves the view
        unchanged and says why in the status bar."""
        if text is None:
            text = QGuiApplication.clipboard().text()
        w, h = self.canvas_size()
        try:
            loc = parse_location(text, aspect=max(w, 1) / max(h, 1))
        except ValueError as exc:
            self.status_message.emit(f"Cannot paste location: {exc}", 6000)
            return False
        if not self.go_to(loc.center_re, loc.center_im, loc.width, loc.iterations):
            self.status_message.emit(f"Cannot paste location: {self.camera.refusal}", 6000)
            return False
        self.status_message.emit("Pasted location", 2000)
        return True

    # ---- hover readout -----------------------------------------------------------------------
    def _on_hover(self, x, y):
        w, h = self.canvas_size()
        if not (0 <= x < w and 0 <= y < h):
            return
        re_, im_ = self.camera.state.to_complex(x, y, w, h)
        self._hover_text = self._coord_text(re_, im_)
        self.status_message.emit(self._hover_text, 0)
        t, frame = self._shown, self._frame
        if (t is None or frame is None or t.coarse or frame.fetch_value is None
                or t.state != self.camera.state or (t.w, t.h) != (w, h)):
            return
        self._hover_next = (int(y), int(x), frame)
        if not self._hover_busy:
            self._submit_hover()

    def _coord_text(self, re_, im_) -> str:
        w, _ = self.canvas_size()
        places = centre_places(self.camera.state.pixel_size(max(w, 1)))
        re_s, im_s = coordinate_text(re_, places), coordinate_text(im_, places)
        return f"c = {'' if re_ < 0 else '+'}{re_s} {'' if im_ < 0 else '+'}{im_s}i"

    # ---- Kalles Fraktaler location files -----------------------------------------------------
    def open_kfr(self, path: str) -> bool:
        """Go to the place in the .kfr file at `path`; a file that cannot be read or holds no
        place leaves the view unchanged and says why."""
        w, h = self.canvas_size()
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read(2_000_000)
            k = parse_kfr(text)
            width = k.width(max(w, 1), max(h, 1))
        except (OSError, ValueError) as exc:
            self.status_message.emit(f"Cannot open {path}: {getattr(exc, 'strerror', None) or exc}", 6000)
            return False
        if not self.go_to(k.center_re, k.center_im, width, k.iterations):
            self.status_message.emit(f"Cannot open {path}: {self.camera.refusal}", 6000)
            return False
        self.status_message.emit(f"Opened {path}", 3000)
        return True

    def save_kfr(self, path: str) -> bool:
        """Write the current place as a .kfr file (KF's Zoom from this canvas's aspect)."""
        s = self.camera.state
        w, h = self.canvas_size()
        try:
            text = format_kfr(s.center_re, s.center_im, s.width, (max(w, 1), max(h, 1)),
                              self.iterations(), colours=palettes.lut(self.controls.palette.currentText()))
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        except (OSError, ValueError) as exc:
            self.status_message.emit(f"Cannot save {path}: {getattr(exc, 'strerror', None) or exc}", 6000)
            return False
        self.status_message.emit(f"Saved {path}", 3000)
        return True

    def open_kfr_dialog(self):
        from PyQt6.QtWidgets import QFileDialog
        path, _ = QFileDialog.getOpenFileName(self, "Open a Kalles Fraktaler location", "",
                                              "KF locations (*.kfr);;All files (*)")
        if path:
            self.open_kfr(path)

    def save_kfr_dialog(self):
        from PyQt6.QtWidgets import QFileDialog
        path, _ = QFileDialog.getSaveFileName(self, "Save as a Kalles Fraktaler location",
                                              "location.kfr", "KF locations (*.kfr)")
        if path:
            self.save_kfr(path)

    def _submit_hover(self):
        row, col, frame = self._hover_next
        self._hover_next = None
        self._hover_busy = True
        self.submit(ReadPixel(frame.fetch_value, row, col, self.backend), key=self.side_key("hover"))

    def _hover_done(self, value: PixelValue | None):
        self._hover_busy = False
        if value is not None:
            row, col, v = value.row, value.col, value.value
            if v == v:          # NaN: that frame's values have been reused since
                limit = self._frame.request.max_iter if self._frame is not None else None
                inside = limit is not None and v >= limit
                what = "inside the set" if inside else f"smooth count {v:,.2f}"
                self.status_message.emit(f"{getattr(self, '_hover_text', '')}   {what}", 0)
                self.hover_value.emit(float(row), float(col), float(v))
        if self._hover_next is not None:
            self._submit_hover()

    # ---- export ------------------------------------------------------------------------------
    def export_dialog(self):
        from .mandelbrot_export import ask_export
        choice = ask_export(self, self.canvas_size(), gpus=self.export_gpus())
        if choice is not None:
            path, (w, h), gpus = choice
            self.start_export(path, w, h, gpus=gpus)

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
        try:
            # the path first: a folder that cannot be written must not cost a whole render
            check_export_path(path)
            req = dataclasses.replace(self.build_request(w, h), want_values=path.lower().endswith(".npy"))
            req.validate()
        except ValueError as exc:
            self.status_message.emit(f"Cannot export: {exc}", 6000)
            self.export_failed.emit(str(exc))
            return False
        if self._exporting:
            self.status_message.emit("An export is already running; cancel it first", 6000)
            return False
        self.submit(MandelbrotExport(req, path, self.backend, gpus=tuple(gpus) if gpus else None),
                    key=self.side_key("export"))
        self._exporting = True
        if show_progress:
            dlg = QProgressDialog(f"Rendering {w}×{h}…", "Cancel", 0, 1000, self)
            dlg.setWindowTitle("Export")
            dlg.setMinimumDuration(0)
            dlg.setAutoClose(False)
            dlg.setAutoReset(False)
            dlg.canceled.connect(self.cancel_export)
            dlg.setValue(0)
            dlg.show()
            self._export_dialog = dlg
        self.status_message.emit(f"Exporting {w}×{h} to {path}…", 0)
        return True

    def cancel_export(self):
        # the job stops at its next tile; the user need not wait for that
        self.cancel(self.side_key("export"))
        self._exporting = False
        self._close_export_dialog()
        self.status_message.emit("Export cancelled", 4000)
        self.export_failed.emit("cancelled")

    def _export_progress(self, fraction: float):
        if self._export_dialog is not None:
            self._export_dialog.setValue(int(max(0.0, min(1.0, fraction)) * 1000))

    def _close_export_dialog(self):
        if self._export_dialog is not None:
            self._export_dialog.canceled.disconnect(self.cancel_export)
            self._export_dialog.close()
            self._export_dialog.deleteLater()
            self._export_dialog = None

    # ---- results under the view's side keys ---------------------------------------------------
    def on_side_result(self, key, result):
        if key == self.side_key("hover"):
            self._hover_done(result)
        elif isinstance(result, ExportProgress):
            self._export_progress(result.fraction)
        elif isinstance(result, Exported):
            self._exporting = False
            self._close_export_dialog()
            self.status_message.emit(f"Exported {result.path}", 5000)
            self.export_finished.emit(result.path)

    def on_side_failed(self, key, message):
        if key == self.side_key("hover"):
            self._hover_done(None)
        elif key == self.side_key("export"):
            self._exporting = False
            self._close_export_dialog()
            if message is None:
                self.status_message.emit("Export cancelled", 4000)
                self.export_failed.emit("cancelled")
            else:
                self.error_message.emit(f"Export failed: {message}")
                self.export_failed.emit(message)

    def shutdown(self):
        self._close_export_dialog()
        super().shutdown()
