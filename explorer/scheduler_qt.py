"""The thin Qt adapter over kernels.scheduler: its events become one signal on the GUI thread.

The scheduler calls `deliver(event)` on its worker thread; emitting a signal of a QObject that lives
on the GUI thread queues the call there, so views only ever see events on the GUI thread. In
synchronous mode (tests) jobs run on the GUI thread too, from the event loop: `submit` posts a
drain instead of running the job inside the call, so a view's code after `submit` always runs
before the job's result arrives, exactly as with the thread.
"""
from __future__ import annotations

import weakref

from PyQt6.QtCore import QObject, QTimer, pyqtSignal

from kernels.jobs import default_handlers
from kernels.scheduler import Busy, Scheduler
from services.export_jobs import HANDLERS as EXPORT_HANDLERS


class QtScheduler(QObject):
    event = pyqtSignal(object)          # kernels.scheduler.Delivered | Progress | Failed | Stopped
    busy_changed = pyqtSignal(bool)

    instances: "weakref.WeakSet[QtScheduler]" = weakref.WeakSet()

    def __init__(self, parent=None, *, synchronous: bool = False):
        super().__init__(parent)
        self.core = Scheduler(self._deliver, synchronous=synchronous, autodrain=False,
                              handlers=default_handlers())
        for request_type, handler in EXPORT_HANDLERS.items():
            self.core.register(request_type, handler)
        self.synchronous = synchronous
        self._drain_posted = False
        # the synchronous mode's next step: a timer of the scheduler's own, stopped by shutdown
        # (a QTimer.singleShot to a bound method could fire on a scheduler deleted with its
        # window: a segfault in a test's teardown). No Qt parent: `event` above shadows
        # QObject.event, so the scheduler must receive no events (a child's ChildAdded)
        self._drain_timer = QTimer()
        self._drain_timer.setSingleShot(True)
        self._drain_timer.setInterval(0)
        self._drain_timer.timeout.connect(self._drain)
        QtScheduler.instances.add(self)

    def _deliver(self, ev):
        if isinstance(ev, Busy):
            self.busy_changed.emit(ev.busy)
        else:
            self.event.emit(ev)

    # ---- the scheduler's interface -----------------------------------------------------------
    def register(self, request_type, handler):
        self.core.register(request_type, handler)

    def submit(self, key: str, request, *, replace_running: bool = False) -> int:
        if not self.synchronous:
            return self.core.submit(key, request, replace_running=replace_running)
        gen = self.core.submit(key, request, replace_running=replace_running)
        if gen >= 0 and not self._drain_posted:
            self._drain_posted = True
            self._drain_timer.start()
        return gen

    def _drain(self):
        self._drain_posted = False
        if self.core.drain(max_steps=1) and not self._drain_posted:
            self._drain_posted = True      # one job or step per event-loop turn, like the thread
            self._drain_timer.start()

    def drain(self):
        """Synchronous mode: run what is queued now (tests call it to skip the event loop)."""
        self.core.drain()

    def cancel(self, key: str):
        self.core.cancel(key)

    def is_current(self, key: str, generation: int) -> bool:
        return self.core.is_current(key, generation)

    def shutdown(self, timeout: float = 0.1) -> bool:
        self._drain_timer.stop()
        return self.core.shutdown(timeout)

    @property
    def running(self) -> bool:
        return self.core.running

    def idle(self) -> bool:
        return self.core.idle()
