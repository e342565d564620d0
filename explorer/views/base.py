"""What every view shares: a backend, keys on the scheduler, and signals to the window.

A view keeps only display state. It builds frozen requests (carrying its backend) and submits them
under its key; the scheduler owns the renderers. Events come back on the GUI thread through the
Qt adapter, and only the newest submission's events per key reach the view's hooks.
"""
from __future__ import annotations

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QWidget

from kernels.backend import Backend
from kernels.scheduler import Delivered, Failed, Progress, Stopped
from kernels.timing import Timings

from ..scheduler_qt import QtScheduler


class BaseView(QWidget):
    """Subclasses set view_id/title, build widgets, and implement request_render().

    `self.submit(request)` runs a request under the view's own key (at most one in flight, the
    newest wins); `self.submit(request, key=self.side_key("hover"))` under a side key of the view.
    Hooks for the view's own key: on_result / on_progress / on_failed / on_cancelled; for side
    keys: on_side_result (progress items and the result) / on_side_failed (cancel and failure both
    end a side job).
    """

    view_id = "base"

    timings_ready = pyqtSignal(object)          # kernels.timing.Timings
    status_message = pyqtSignal(str, int)        # text, timeout ms (0 = until replaced)
    error_message = pyqtSignal(str)              # a failure the user should read
    # a result or failure kept on show until read: a frame's progress overwrites the status bar
    notice = pyqtSignal(str)
    busy = pyqtSignal(bool)

    def __init__(self, scheduler: QtScheduler, backend: Backend, parent=None):
        super().__init__(parent)
        self.scheduler = scheduler
        self.backend = backend
        self._generations: dict[str, int] = {}
        self._in_flight = False
        self._stale = False
        scheduler.event.connect(self._route)

    # ---- for subclasses ---------------------------------------------------------------------
    def request_render(self):
        """Build a request from the view's state and submit it."""

    def backend_changed(self):
        """The backend just changed (self.backend is the new one): update the controls."""

    def on_result(self, result):
        pass

    def on_progress(self, item):
        pass

    def on_failed(self, message: str, tb: str):
        self.error_message.emit(message)

    def on_cancelled(self):
        pass

    def on_side_result(self, key: str, result):
        pass

    def on_side_failed(self, key: str, message: str | None):
        """A side job failed (message) or was cancelled (None)."""

    def side_key(self, name: str) -> str:
        return f"{self.view_id}:{name}"

    def submit(self, request, *, key: str | None = None, replace_running: bool = False) -> int:
        key = key or self.view_id
        gen = self.scheduler.submit(key, request, replace_running=replace_running)
        self._generations[key] = gen
        if key == self.view_id and gen >= 0:
            self._set_in_flight(True)
        return gen

    def cancel(self, key: str | None = None):
        key = key or self.view_id
        self.scheduler.cancel(key)
        self._generations.pop(key, None)
        if key == self.view_id:
            self._set_in_flight(False)

    def set_backend(self, backend: Backend):
        """The one way a backend reaches a view: controls follow at once; the view re-renders now
        when it is on screen, else the next time it is shown."""
        if backend == self.backend:
            return
        self.backend = backend
        self.backend_changed()
        if self.isVisible():
            self.request_render()
        else:
            self._stale = True

    def showEvent(self, ev):
        super().showEvent(ev)
        if self._stale:
            self._stale = False
            self.request_render()

    @property
    def in_flight(self) -> bool:
        return self._in_flight

    def has_job(self, key: str | None = None) -> bool:
        """Whether a job the view submitted under `key` (default: its own) has not ended yet."""
        return (key or self.view_id) in self._generations

    def report_timings(self, t: Timings):
        self.timings_ready.emit(t)

    def shutdown(self):
        """Called before the window closes; cancels every key of the view."""
        for key in list(self._generations):
            self.scheduler.cancel(key)
        self._generations.clear()
        self._set_in_flight(False)

    # ---- routing -----------------------------------------------------------------------------
    def _set_in_flight(self, v: bool):
        if v != self._in_flight:
            self._in_flight = v
            self.busy.emit(v)

    def _route(self, ev):
        key = ev.key
        if self._generations.get(key) != ev.generation:
            return
        own = key == self.view_id
        if isinstance(ev, Progress):
            self.on_progress(ev.item) if own else self.on_side_result(key, ev.item)
            return
        del self._generations[key]
        if own:
            self._set_in_flight(False)
        if isinstance(ev, Delivered):
            self.on_result(ev.result) if own else self.on_side_result(key, ev.result)
        elif isinstance(ev, Failed):
            self.on_failed(ev.message, ev.traceback) if own else self.on_side_failed(key, ev.message)
        elif isinstance(ev, Stopped):
            self.on_cancelled() if own else self.on_side_failed(key, None)
