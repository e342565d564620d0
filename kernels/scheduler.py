"""The one scheduler under all compute: typed requests in, typed results out, one worker thread.

Callers (the window's views, later the command line's posters and movies) submit a frozen request
under a key: `submit(key, request)`. The request carries its backend; a handler registered for the
request's type does the work with renderers the scheduler owns, keyed by (name, backend), so compute
state lives here and never in widgets. Rules:

- One thread runs every job (one GPU, one context, obvious ordering). Per key at most one job runs
  and one waits: a newer submission replaces the waiting one before it starts (latest wins), and a
  result made stale by a newer submission or a cancel is dropped, never delivered.
- A handler returns a result, or a generator: each yielded item is delivered as progress, and
  other keys' jobs run between items, so a long sweep or export never starves a view.
- `cancel(key)` and `shutdown()` return at once. Cancellation reaches inside long work through the
  job's CancelToken; shutdown waits at most `timeout` seconds and then abandons the thread (a
  daemon) — a JIT compile in flight cannot be interrupted and is not waited for.
- Everything the scheduler reports goes through one callback, `deliver(event)`, called on the
  worker thread: a thin adapter (explorer.scheduler_qt) turns it into a Qt signal. With
  `synchronous=True` jobs run on the caller's thread: inside `submit`, or only when the caller
calls `drain()` (autodrain=False: the Qt adapter drains from the event loop).

Qt-free: this module imports nothing from explorer or Qt.
"""
from __future__ import annotations

import threading
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from types import GeneratorType
from typing import Any, Callable, Hashable

from .backend import Backend


class Cancelled(Exception):
    """Raised by CancelToken.check() inside a job that was cancelled or superseded."""


class CancelToken:
    def __init__(self):
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def cancel(self):
        with self._lock:
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn()

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call fn() (on the cancelling thread) when the token is cancelled, at once if it is
        already: work that cannot call check(), such as a compiled loop polling a flag, learns of
        a cancel this way. Returns a function that forgets fn again."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(fn)
                return lambda: self._forget(fn)
        fn()
        return lambda: None

    def _forget(self, fn):
        with self._lock:
            if fn in self._callbacks:
                self._callbacks.remove(fn)

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self):
        if self._event.is_set():
            raise Cancelled()


# ---- what the scheduler reports (one class per kind of event) ---------------------------------
@dataclass(frozen=True)
class Delivered:
    """The job's final result (a typed result object: Frame, Compiled, SweepPoint, …)."""
    key: str
    generation: int
    result: Any


@dataclass(frozen=True)
class Progress:
    """An intermediate result of a job that is still running (a coarse frame, a sweep point)."""
    key: str
    generation: int
    item: Any


@dataclass(frozen=True)
class Failed:
    key: str
    generation: int
    message: str
    traceback: str


@dataclass(frozen=True)
class Stopped:
    """The job was cancelled (or superseded while running) and ended without a result."""
    key: str
    generation: int


@dataclass(frozen=True)
class Busy:
    busy: bool


Event = Delivered | Progress | Failed | Stopped | Busy


# ---- requests and results shared by every workload ---------------------------------------------
@dataclass(frozen=True)
class Warmup:
    """Compile a workload's kernels on a backend before its first frame is needed. `parts`: which
    of them, in the workload's words (empty: those of its first frame). `cached_only`: load only
    what numba's disk cache holds; where something would compile, answer ColdStart instead.
    `background`: a job of steps that runs only while no other job waits (Scheduler)."""
    workload: str
    backend: Backend
    parts: tuple = ()
    cached_only: bool = False
    background: bool = False


@dataclass(frozen=True)
class Compiled:
    """Kernels ready: `ms` of JIT compile (or cache load) time, 0 when they already were."""
    workload: str
    backend: Backend
    ms: float | None


@dataclass(frozen=True)
class ColdStart:
    """A Warmup(cached_only=True) found kernels missing from numba's disk cache: compiling them
    takes about `seconds` (a first start), and nothing was compiled yet."""
    workload: str
    backend: Backend
    seconds: float


@dataclass(frozen=True)
class WarmupStep:
    """A background warm-up compiled `part` (progress of Warmup(background=True))."""
    part: str
    done: int
    total: int


@dataclass(frozen=True)
class ReadPixel:
    """One raw value of a frame still held by its renderer (hover readouts)."""
    fetch: Callable[[int, int], float]
    row: int
    col: int
    backend: Backend


@dataclass(frozen=True)
class PixelValue:
    row: int
    col: int
    value: float


@dataclass(frozen=True)
class ExportProgress:
    fraction: float


@dataclass(frozen=True)
class Exported:
    path: str


class JobContext:
    """What a handler gets besides its request: the cancel token, the backend, the renderers and a
    way to report progress at once (for work that cannot yield, such as a file writer's loop)."""

    def __init__(self, scheduler: "Scheduler", job: "_Job"):
        self._scheduler = scheduler
        self._job = job
        self.token = job.token
        self.backend: Backend | None = getattr(job.request, "backend", None)

    def renderer(self, name: Hashable, factory: Callable[[], Any], backend: Backend | None = None):
        """The renderer `name` of this job's backend, made by factory() the first time."""
        return self._scheduler._renderer((name, backend or self.backend), factory)

    def report(self, item: Any):
        self._scheduler._report(self._job, item)

    def drop_renderers(self, match: Callable[[Hashable], bool]) -> int:
        """Forget the renderers whose name `match`es (a job's own, when it ends: its buffers and
        reference orbits go with them); returns how many went."""
        return self._scheduler._drop_renderers(match)


Handler = Callable[[JobContext, Any], Any]


@dataclass
class _Job:
    key: str
    generation: int
    request: Any
    handler: Handler
    token: CancelToken = field(default_factory=CancelToken)
    gen: GeneratorType | None = None

    @property
    def background(self) -> bool:
        """Stepped only when no other job waits: a warm-up that compiles ahead of need."""
        return bool(getattr(self.request, "background", False))


def _read_pixel(ctx: JobContext, req: ReadPixel) -> PixelValue:
    return PixelValue(req.row, req.col, float(req.fetch(req.row, req.col)))


class Scheduler:
    def __init__(self, deliver: Callable[[Event], None] | None = None, *, synchronous: bool = False,
                 autodrain: bool = True, handlers: dict[type, Handler] | None = None):
        self._deliver = deliver or (lambda event: None)
        self.synchronous = synchronous
        self.autodrain = autodrain        # synchronous mode: run jobs inside submit, or on drain()
        # the workloads' handlers come from kernels.jobs.default_handlers(), passed in by the caller
        self._handlers: dict[type, Handler] = {ReadPixel: _read_pixel}
        self._handlers.update(handlers or {})
        self._cond = threading.Condition()
        self._pending: "OrderedDict[str, _Job]" = OrderedDict()
        self._running: dict[str, _Job] = {}   # generator jobs between steps, and the current job
        self._latest: dict[str, int] = {}
        self._counter = 0
        self._stopping = False
        self._busy = False
        self._draining = False
        self._thread: threading.Thread | None = None
        self._renderers: dict = {}            # touched on the worker thread only

    # ---- for callers (any thread; in practice the GUI thread) --------------------------------
    def register(self, request_type: type, handler: Handler):
        self._handlers[request_type] = handler

    def submit(self, key: str, request: Any, *, replace_running: bool = False) -> int:
        """Queue `request` under `key`, replacing the key's waiting job. Returns the generation
        that its events will carry (-1 after shutdown). With replace_running, the key's running
        job is cancelled too (it stops at its next check)."""
        handler = self._handler_for(request)
        with self._cond:
            if self._stopping:
                return -1
            self._counter += 1
            gen = self._counter
            self._latest[key] = gen
            self._pending[key] = _Job(key, gen, request, handler)
            self._pending.move_to_end(key)
            if replace_running and key in self._running:
                self._running[key].token.cancel()
            self._cond.notify()
        if self.synchronous:
            if self.autodrain:
                self.drain()
        elif self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="gpu-explorer-scheduler", daemon=True)
            self._thread.start()
        return gen

    def cancel(self, key: str):
        """Drop the key's waiting job and ask its running job to stop; nothing of it is delivered."""
        with self._cond:
            self._pending.pop(key, None)
            if key in self._running:
                self._running[key].token.cancel()
            self._counter += 1
            self._latest[key] = self._counter

    def is_current(self, key: str, generation: int) -> bool:
        """False once a newer submission or a cancel has made it stale, and after shutdown."""
        with self._cond:
            return not self._stopping and self._latest.get(key) == generation

    def shutdown(self, timeout: float = 0.1) -> bool:
        """Cancel everything and stop the thread, waiting at most `timeout` seconds. True when the
        thread has ended; False when it was abandoned inside uninterruptible work."""
        with self._cond:
            self._stopping = True
            self._pending.clear()
            for job in self._running.values():
                job.token.cancel()
            self._cond.notify_all()
        t = self._thread
        if t is None or t is threading.current_thread():
            return True
        t.join(timeout)
        return not t.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        """After shutdown: wait for an abandoned thread (tests, interpreter exit)."""
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
            return not t.is_alive()
        return True

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def idle(self) -> bool:
        """No job waits, runs or has steps left (a warm-up's compiles, a sweep): the moment for
        work that must not share the device, such as measuring the roofs."""
        with self._cond:
            return not self._pending and not self._running

    def drain(self, max_steps: int | None = None) -> bool:
        """Synchronous mode: run queued jobs (and what they submit), at most `max_steps` jobs or
        generator steps. True when work remains (the Qt adapter drains one step per event-loop
        turn, so the GUI stays responsive between a sweep's points, as with the thread)."""
        if self._draining:
            return True  # a delivery submitted more work: the outer loop runs it
        self._draining = True
        steps = 0
        try:
            while max_steps is None or steps < max_steps:
                job = self._next_job(block=False)
                if job is None:
                    return False
                self._step(job)
                steps += 1
            with self._cond:
                return bool(self._pending) or any(j.gen is not None for j in self._running.values())
        finally:
            self._draining = False
            if max_steps is None:
                self._set_busy(False)

    # ---- internals -----------------------------------------------------------------------------
    def _handler_for(self, request) -> Handler:
        for klass in type(request).__mro__:
            h = self._handlers.get(klass)
            if h is not None:
                return h
        known = ", ".join(sorted(k.__name__ for k in self._handlers))
        raise TypeError(f"no handler for {type(request).__name__}; the scheduler handles {known}")

    def _renderer(self, key, factory):
        r = self._renderers.get(key)
        if r is None:
            r = self._renderers[key] = factory()
        return r

    def _drop_renderers(self, match) -> int:
        gone = [key for key in self._renderers if match(key[0])]
        for key in gone:
            del self._renderers[key]
        if gone:
            import gc
            gc.collect()        # device buffers are freed now, on this thread, with its context
        return len(gone)

    def renderer_count(self) -> int:
        """How many renderers the scheduler keeps (for tests and the memory check)."""
        return len(self._renderers)

    def _emit(self, event):
        try:
            self._deliver(event)
        except Exception:  # a broken receiver must not kill the worker
            traceback.print_exc()

    def _report(self, job: _Job, item):
        if self.is_current(job.key, job.generation):
            self._emit(Progress(job.key, job.generation, item))

    def _set_busy(self, busy: bool):
        if busy != self._busy:
            self._busy = busy
            self._emit(Busy(busy))

    def _next_job(self, block: bool = True) -> _Job | None:
        """Round-robin: a fresh job first, else the next step of a generator job (background
        warm-ups last)."""
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
                    # a background warm-up's next compile waits while any other job has steps
                    job = ([j for j in gens if not j.background] or gens)[0]
                    self._running.pop(job.key)   # re-append to rotate among generator jobs
                    self._running[job.key] = job
                    return job
                if not block:
                    return None
                self._set_busy(False)
                self._cond.wait()

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

    def _step(self, job: _Job):
        """Run a job, or one step of a generator job, and deliver what it gave."""
        self._set_busy(True)
        try:
            if not self.is_current(job.key, job.generation):
                job.token.cancel()                 # superseded or cancelled: do not even start
            job.token.check()
            if job.gen is None:
                out = job.handler(JobContext(self, job), job.request)
                if isinstance(out, GeneratorType):
                    job.gen = out
                    return
                value = out
            else:
                try:
                    item = next(job.gen)
                except StopIteration as stop:
                    value = stop.value
                else:
                    self._report(job, item)
                    return
            self._finish(job)
            if self.is_current(job.key, job.generation):
                self._emit(Delivered(job.key, job.generation, value))
        except Cancelled:
            self._close(job)
            self._finish(job)
            self._emit(Stopped(job.key, job.generation))
        except Exception as exc:  # a job's error must never kill the worker
            self._close(job)
            self._finish(job)
            if self.is_current(job.key, job.generation):
                msg = str(exc) or type(exc).__name__
                self._emit(Failed(job.key, job.generation, msg, traceback.format_exc()))
        except BaseException as exc:  # SystemExit, KeyboardInterrupt in a job: report, keep serving
            self._close(job)
            self._finish(job)
            self._emit(Failed(job.key, job.generation, f"{type(exc).__name__} in a job: {exc}",
                              traceback.format_exc()))

    def _loop(self):
        # beside the window's thread: numba's workqueue layer takes the GIL back at the end of
        # every parallel region, and waited up to the 5 ms switch interval for it
        # (docs/notes/performance-history.md, "Honest GPU times"); a GPU job's worker waits likewise
        from .spread import handover
        handover.shorten()
        try:
            while True:
                job = self._next_job()
                if job is None:
                    break
                self._step(job)
        finally:
            with self._cond:
                for job in list(self._running.values()):
                    self._close(job)
                self._running.clear()
            self._set_busy(False)
            handover.restore()
