"""What every view shares: a backend, a key on the render worker, and signals to the window."""
from __future__ import annotations

from typing import Callable

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QLabel, QVBoxLayout, QWidget

from kernels.backend import Backend
from kernels.timing import Timings

from ..worker import CancelToken, RenderWorker


class BaseView(QWidget):
    """Subclasses set view_id/title, build widgets, and implement request_render().

    Submit work with `self.submit(fn)`; override on_result / on_progress / on_failed. Only the
    newest submission's outcome reaches them (stale generations are dropped here as well as in the
    worker). Report each finished frame's Timings with `self.timings_ready.emit(t)`.
    """

    view_id = "base"
    title = "View"

    timings_ready = pyqtSignal(object)          # kernels.timing.Timings
    status_message = pyqtSignal(str, int)        # text, timeout ms (0 = until replaced)
    error_message = pyqtSignal(str)              # a failure the user should read
    busy = pyqtSignal(bool)

    def __init__(self, worker: RenderWorker, backend: Backend, parent=None):
        super().__init__(parent)
        self.worker = worker
        self.backend = backend
        self._generation = 0
        self._in_flight = False
        worker.result.connect(self._route_result)
        worker.progress.connect(self._route_progress)
        worker.failed.connect(self._route_failed)
        worker.cancelled.connect(self._route_cancelled)

    # ---- for subclasses ---------------------------------------------------------------------
    def request_render(self):
        """Build a request from the view's state and submit it. Called on backend switch."""

    def on_result(self, value):
        pass

    def on_progress(self, item):
        pass

    def on_failed(self, message: str, tb: str):
        self.error_message.emit(message)

    def on_cancelled(self):
        pass

    def submit(self, fn: Callable[[CancelToken], object], *, cancel_running: bool = False) -> int:
        self._generation = self.worker.submit(self.view_id, fn, cancel_running=cancel_running)
        self._set_in_flight(True)
        return self._generation

    def cancel(self):
        self.worker.cancel(self.view_id)
        self._set_in_flight(False)

    def set_backend(self, backend: Backend):
        if backend != self.backend:
            self.backend = backend
            self.request_render()

    @property
    def in_flight(self) -> bool:
        return self._in_flight

    def report_timings(self, t: Timings):
        self.timings_ready.emit(t)

    def shutdown(self):
        """Called before the window closes; the worker is shut down after every view."""
        self.cancel()

    # ---- routing -----------------------------------------------------------------------------
    def _mine(self, key: str, generation: int) -> bool:
        return key == self.view_id and generation == self._generation

    def _set_in_flight(self, v: bool):
        if v != self._in_flight:
            self._in_flight = v
            self.busy.emit(v)

    def _route_result(self, key, generation, value):
        if self._mine(key, generation):
            self._set_in_flight(False)
            self.on_result(value)

    def _route_progress(self, key, generation, item):
        if self._mine(key, generation):
            self.on_progress(item)

    def _route_failed(self, key, generation, message, tb):
        if self._mine(key, generation):
            self._set_in_flight(False)
            self.on_failed(message, tb)

    def _route_cancelled(self, key, generation):
        if self._mine(key, generation):
            self._set_in_flight(False)
            self.on_cancelled()


class PlaceholderView(BaseView):
    """Stands in for a view that has not landed."""

    def __init__(self, worker, backend, view_id: str, title: str, parent=None):
        self.view_id, self.title = view_id, title
        super().__init__(worker, backend, parent)
        lay = QVBoxLayout(self)
        lab = QLabel(f"{title}: this view is not available in this build.")
        lab.setWordWrap(True)
        lay.addWidget(lab)
