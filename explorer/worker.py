"""The one render worker: a long-lived QThread that runs every compute job, GPU or CPU.

Views submit jobs under a key (their view id). Per key, at most one job runs and one waits:
submitting again replaces the waiting job, so input storms never queue work, and a result that a
newer submission has made stale is dropped. A job is a plain callable taking a CancelToken; if it
returns a generator, each yielded item is reported as progress and the worker serves other keys
between items, so a long sweep never blocks the other views. The worker never touches widgets:
everything goes back through queued signals.
"""
from __future__ import annotations

import threading
import traceback
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from types import GeneratorType
from typing import Callable

from PyQt6.QtCore import QThread, pyqtSignal


class Cancelled(Exception):
    """Raised by CancelToken.check() inside a job that was cancelled."""


class CancelToken:
    def __init__(self):
        self._event = threading.Event()

    def cancel(self):
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self):
        if self._event.is_set():
            raise Cancelled()


@dataclass
class _Job:
    key: str
    generation: int
    fn: Callable
    token: CancelToken = field(default_factory=CancelToken)
    gen: GeneratorType | None = None


class RenderWorker(QThread):
    """Owns all compute. Signals carry (key, generation, payload)."""

    result = pyqtSignal(str, int, object)
    progress = pyqtSignal(str, int, object)
    failed = pyqtSignal(str, int, str, str)   # key, generation, message, traceback text
    cancelled = pyqtSignal(str, int)
    busy_changed = pyqtSignal(bool)

    instances: "weakref.WeakSet[RenderWorker]" = weakref.WeakSet()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("RenderWorker")
        self._cond = threading.Condition()
        self._pending: "OrderedDict[str, _Job]" = OrderedDict()
        self._running: dict[str, _Job] = {}     # generator jobs between steps, and the current job
        self._latest: dict[str, int] = {}
        self._counter = 0
        self._stopping = False
        self._busy = False
        RenderWorker.instances.add(self)

    # ---- called from the GUI thread -------------------------------------------------------
    def submit(self, key: str, fn: Callable[[CancelToken], object], *, cancel_running: bool = False) -> int:
        """Queue fn for key, replacing any job of that key still waiting. Returns its generation."""
        with self._cond:
            if self._stopping:
                return -1
            self._counter += 1
            gen = self._counter
            self._latest[key] = gen
            self._pending[key] = _Job(key, gen, fn)
            self._pending.move_to_end(key)
            if cancel_running and key in self._running:
                self._running[key].token.cancel()
            self._cond.notify()
        if not self.isRunning():
            self.start()
        return gen

    def cancel(self, key: str):
        """Drop the waiting job of key and ask its running job to stop."""
        with self._cond:
            self._pending.pop(key, None)
            if key in self._running:
                self._running[key].token.cancel()
            self._latest[key] = self._counter = self._counter + 1  # anything still in flight is stale

    def is_current(self, key: str, generation: int) -> bool:
        with self._cond:
            return self._latest.get(key) == generation

    def shutdown(self, timeout_ms: int = 10000) -> bool:
        """Cancel everything, stop the thread and wait for it. True when it stopped."""
        with self._cond:
            self._stopping = True
            self._pending.clear()
            for job in self._running.values():
                job.token.cancel()
            self._cond.notify_all()
        if self.isRunning():
            return self.wait(timeout_ms)
        return True

    # ---- the worker thread ----------------------------------------------------------------
    def _next_job(self) -> _Job | None:
        """Round-robin: a fresh job first, else the next step of a generator job."""
        with self._cond:
            while True:
                if self._stopping:
                    return None
                if self._pending:
                    key, job = self._pending.popitem(last=False)
                    old = self._running.get(key)
                    if old is not None:           # a newer job replaces a generator job
                        old.token.cancel()
                        self._close(old)
                    self._running[key] = job
                    return job
                gens = [j for j in self._running.values() if j.gen is not None]
                if gens:
                    job = gens[0]
                    self._running.pop(job.key)   # re-append to rotate among generator jobs
                    self._running[job.key] = job
                    return job
                self._set_busy(False)
                self._cond.wait()

    def _set_busy(self, busy: bool):
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    @staticmethod
    def _close(job: _Job):
        if job.gen is not None:
            try:
                job.gen.close()
            except Exception:
                pass

    def _finish(self, job: _Job):
        with self._cond:
            if self._running.get(job.key) is job:
                del self._running[job.key]

    def run(self):
        while True:
            job = self._next_job()
            if job is None:
                break
            self._set_busy(True)
            try:
                if job.gen is None:
                    out = job.fn(job.token)
                    if isinstance(out, GeneratorType):
                        job.gen = out
                        continue
                    value = out
                else:
                    try:
                        item = next(job.gen)
                    except StopIteration as stop:
                        value = stop.value
                    else:
                        if self.is_current(job.key, job.generation):
                            self.progress.emit(job.key, job.generation, item)
                        continue
                self._finish(job)
                if self.is_current(job.key, job.generation):
                    self.result.emit(job.key, job.generation, value)
            except Cancelled:
                self._close(job)
                self._finish(job)
                self.cancelled.emit(job.key, job.generation)
            except Exception as exc:  # a job's error must never kill the worker
                self._close(job)
                self._finish(job)
                if self.is_current(job.key, job.generation):
                    msg = str(exc) or type(exc).__name__
                    self.failed.emit(job.key, job.generation, msg, traceback.format_exc())
        with self._cond:
            for job in list(self._running.values()):
                self._close(job)
            self._running.clear()
        self._set_busy(False)
