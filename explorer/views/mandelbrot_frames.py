"""The Mandelbrot view's screen for its render loop (explorer/models/mandelbrot_loop.py, Qt-free):
the FrameScreen protocol kept with the view's widgets, signals and status line."""
from __future__ import annotations

from PyQt6.QtCore import QRectF

from ..models.mandelbrot_loop import MAX_STRETCH, STALE_OPACITY, FrameLoop, deep_compile_words
from .wait_line import WaitLine

__all__ = ["QtFrameScreen", "frame_loop", "MAX_STRETCH", "STALE_OPACITY", "deep_compile_words"]


class QtFrameScreen:
    """A MandelbrotView as the loop's FrameScreen."""

    def __init__(self, view):
        self._view = view
        # a compile's line counts its seconds up until the compile ends
        self._wait = WaitLine(view, view.status_message.emit)

    @property
    def backend(self):
        return self._view.backend

    @property
    def in_flight(self) -> bool:
        return self._view.in_flight

    def canvas_size(self):
        return self._view.canvas_size()

    def submit(self, request, *, key=None, replace_running=False):
        return self._view.submit(request, key=key, replace_running=replace_running)

    def side_key(self, name):
        return self._view.side_key(name)

    def cancel(self):
        self._view.cancel()

    def say(self, text, ms):
        self._view.status_message.emit(text, ms)

    def error(self, text):
        self._view.error_message.emit(text)

    def wait_start(self, what, tail=""):
        self._wait.start(what, tail)

    def wait_stop(self):
        self._wait.stop()

    def report_timings(self, timings):
        self._view.report_timings(timings)

    def show_picture(self, rgba):
        self._view.canvas.image.setImage(rgba, autoLevels=False)

    def place_picture(self, rect, opacity):
        image = self._view.canvas.image
        if image.image is None:
            return
        image.setOpacity(opacity)
        if rect is not None:
            image.setRect(QRectF(*rect))

    def paint_now(self):
        if self._view.paint_synchronously:      # the UI bench times setImage + a forced repaint
            self._view.canvas.viewport().repaint()

    def shown(self, frame, display_ms):
        self._view.report_timings(frame.timings)
        self._view.frame_displayed.emit(frame, display_ms)


def frame_loop(view) -> FrameLoop:
    """The view's render loop, drawing on the view."""
    return FrameLoop(QtFrameScreen(view), view.model)
