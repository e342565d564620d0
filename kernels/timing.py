"""One Timings record per job: where the time went and how many bytes crossed the bus.

GPU phases are the GPU's own time for their work, taken so that no host pause (a GIL switch, a
repaint, a compile on another thread) can enter it: CUPTI's activity records where cupti-python
starts (cupti_records.py), else CUDA events with each phase queued behind a gate (stream_gate.py)
that the host opens only once the phase's start event, work and end event are all queued; pageable
copies with their events issued from compiled code (native_copy.py). Host phases are timed with a
wall clock, numba CPU kernels by a clock inside them (native_clock.py). Under the CUDA simulator
there are no real events, so GPU phases are recorded as None: a number not measured is never shown.
"""
from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from .host_costs import HOST_COSTS, cost_sums as _cost_sums, note_host_cost

PHASES = ("compile", "h2d", "kernel", "d2h", "host", "total")

# how a job's GPU phases were timed, as the timing panel and the bench say it
CUPTI = "CUPTI activity records"
GATED = "CUDA events behind a gate"
EVENTS = "CUDA events"
GAVE_UP = "CUDA events (gate timed out)"
WALL = "wall clock"
UNTIMED = "not timed (simulator)"

METHODS = ("auto", "cupti", "gate", "events")
# GPU_EXPLORER_TIMING: auto (CUPTI where cupti-python runs, else the gate), cupti, gate, or events
# (bare events, as before the gate: for A/B runs)
_method = os.environ.get("GPU_EXPLORER_TIMING", "auto")
_method = _method if _method in METHODS else "auto"
# (label, phase) whose body waited on its own stream: gating them would stall until the timeout
_ungated: set = set()
_slow: dict = {}
_native_failed: list = []       # why copies from compiled code could not run here, once seen


def set_method(method: str) -> str:
    """How later GPU phases are timed (benches compare them in one process); returns the
    previous setting."""
    global _method
    if method not in METHODS:
        raise ValueError(f"timing method {method!r}; choose one of {', '.join(METHODS)}")
    before, _method = _method, method
    return before


def method_setting() -> str:
    return _method


def use_cupti() -> bool:
    """Whether GPU phases are timed by CUPTI's records now (starting CUPTI on the first ask)."""
    if _method not in ("auto", "cupti"):
        return False
    from . import cupti_records
    on = cupti_records.started()
    if on is None:                  # the first GPU phase of the process: start CUPTI, or learn why not
        t = time.perf_counter()
        on = cupti_records.start()
        note_host_cost("timing setup", (time.perf_counter() - t) * 1e3)
    return on


def gpu_method_note(backend=None) -> str:
    """What times `backend`'s phases in this process (default: a GPU's), and why not CUPTI where
    it does not (for the panel and the benches)."""
    if backend is not None and not getattr(backend, "is_gpu", False):
        return WALL
    if backend is not None and getattr(backend, "simulated", False):
        return UNTIMED
    if _method == "events":
        return EVENTS + " (chosen: GPU_EXPLORER_TIMING=events)"
    if _method == "gate":
        return GATED
    from . import cupti_records
    if cupti_records.start():
        return CUPTI
    return f"{GATED} ({cupti_records.why()})"


@dataclass
class Timings:
    """Milliseconds per phase (None = not applicable or not measurable) and bytes each way."""
    phases_ms: dict = field(default_factory=lambda: {p: None for p in PHASES})
    bytes: dict = field(default_factory=lambda: {"h2d": 0, "d2h": 0})
    backend: str = "cpu"
    label: str = ""            # what the job was, e.g. "mandelbrot 1920×1080"
    detail: dict = field(default_factory=dict)  # sub-phases, e.g. {"colourise": 0.05}
    work: list = field(default_factory=list)    # counted work (kernels.roofs.work.Work)
    method: str = WALL                           # how the GPU phases were timed (GATED, ...)

    def get(self, phase: str):
        return self.phases_ms.get(phase)

    def add(self, phase: str, ms):
        if phase not in self.phases_ms:
            raise KeyError(f"unknown phase {phase!r}; phases are {PHASES}")
        if ms is None:
            return
        cur = self.phases_ms[phase]
        self.phases_ms[phase] = ms if cur is None else cur + ms

    def as_dict(self) -> dict:
        return {"phases_ms": dict(self.phases_ms), "bytes": dict(self.bytes),
                "backend": self.backend, "label": self.label, "detail": dict(self.detail),
                "work": [w.as_dict() for w in self.work], "method": self.method}

    def bandwidth_gbs(self, direction: str):
        """GB/s of a copy phase, or None when it moved nothing or was not timed."""
        ms = self.phases_ms.get(direction)
        nbytes = self.bytes.get(direction, 0)
        if not ms or not nbytes:
            return None
        return nbytes / (ms * 1e-3) / 1e9


_events = threading.local()


def _take_event():
    """A timing event from this thread's free list: creating and destroying two events per phase
    costs more host time than a small frame's whole GPU work."""
    free = getattr(_events, "free", None)
    if free:
        return free.pop()
    from numba import cuda
    return cuda.event(timing=True)


def _give_events(evts):
    if not hasattr(_events, "free"):
        _events.free = []
    _events.free.extend(evts)


def spare_events(n: int) -> None:
    """At least `n` timing events on this thread's free list: a warm-up, which times nothing,
    leaves as many as its spans would have, so a first frame takes its own from the list too."""
    _give_events([_take_event() for _ in range(n)])


class JobTimer:
    """Collects a job's phases. Use as:

        timer = JobTimer(backend, stream)
        with timer.phase("kernel", gpu=True): launch(...)
        with timer.phase("d2h", gpu=True, nbytes=out.nbytes): out.copy_to_host(pinned, stream=stream)
        timings = timer.finish()   # synchronises the stream, resolves events

    A GPU phase's body only queues work; where it must wait for the GPU midway (a progress or
    cancel check between bands), it calls `timer.wait()` instead of synchronising the stream, so
    the host's time between the wait and the next launch stays out of the span. A body that waits
    on its own stream anyway (a copy to or from pageable memory) says `gate=False`.
    `detail` names sub-phases (e.g. colourise) that are also summed into their main phase.
    `queued()` once the job's work is all queued lets later work follow on the same stream
    before finish(), which then waits for this job's work only (a poster's next band).
    """

    def __init__(self, backend, stream=None, label: str = ""):
        self.backend = backend
        self.stream = stream
        gpu = bool(getattr(backend, "is_gpu", False))
        self.timings = Timings(backend=getattr(backend, "name", str(backend)), label=label)
        # (phase, detail, start event, end event, CUPTI phase id or None)
        self._events: list[tuple[str, str | None, object, object, int | None]] = []
        self._t0 = time.perf_counter()
        self._end = None            # queued()'s event: what finish() waits for instead of the stream
        self._events_ok = gpu and not getattr(backend, "simulated", False)
        self._open = None           # the gated phase being queued: [name, detail, start, gate]
        self._gate = None           # this thread's gate, once a phase used it
        self._given_up = 0          # the gate's count of timed-out holds when first used
        self._methods: set = set()
        self._costs0 = _cost_sums()
        if gpu and not self._events_ok:
            self.timings.method = UNTIMED

    def _close_gate(self):
        from .stream_gate import gate_for_thread
        if self._gate is None:
            self._gate = gate_for_thread()      # the first on a thread notes its setup's cost
            self._given_up = self._gate.given_up()
        self._gate.close(self.stream)
        return self._gate

    @contextmanager
    def phase(self, name: str, *, gpu: bool = False, nbytes: int = 0, detail: str | None = None,
              gate: bool = True):
        if name in ("h2d", "d2h"):
            self.timings.bytes[name] += int(nbytes)
        if gpu and getattr(self.backend, "is_gpu", False):
            if not self._events_ok:
                yield
                if detail:
                    self.timings.detail.setdefault(detail, None)
                return
            if use_cupti():
                from . import cupti_records
                start = _take_event()
                self._record(start)
                self._methods.add(CUPTI)
                pid = cupti_records.push()
                try:
                    yield
                finally:
                    cupti_records.pop()
                    self._end_span(name, detail, start, pid)
                return
            key = (self.timings.label, name)
            gated = _method != "events" and gate and key not in _ungated and self._open is None
            g = self._close_gate() if gated else None
            start = _take_event()
            self._record(start)
            self._methods.add(GATED if gated else EVENTS)
            if not gated:
                try:
                    yield
                finally:
                    self._end_span(name, detail, start)
                return
            self._open = [name, detail, start, g]
            t = time.perf_counter()
            early = g.opened_early
            from numba import cuda
            try:
                with cuda.defer_cleanup():  # freeing device memory would wait for the gate
                    yield
            finally:
                name, detail, start, g = self._open
                self._open = None
                self._end_span(name, detail, start)
                g.open()
                if g.opened_early > early:      # a module load opened it: a plain event span
                    self._methods.add(EVENTS)
            from .stream_gate import TIMEOUT_NS
            if time.perf_counter() - t > 0.9 * TIMEOUT_NS * 1e-9:
                # the body waited on its own stream (or compiled): thrice, and it is never gated
                # again (a compile happens once or twice, a wait every time)
                _slow[key] = _slow.get(key, 0) + 1
                if _slow[key] >= 3:
                    _ungated.add(key)
        else:
            t = time.perf_counter()
            yield
            ms = (time.perf_counter() - t) * 1e3
            self.timings.add(name, ms)
            if detail:
                self.timings.detail[detail] = self.timings.detail.get(detail, 0.0) + ms

    def _record(self, event):
        event.record(self.stream) if self.stream is not None else event.record()

    def _end_span(self, name, detail, start, pid=None):
        """Record the span's end event and keep the span (with its CUPTI phase id, if any)."""
        end = _take_event()
        self._record(end)
        self._events.append((name, detail, start, end, pid))

    def wait(self) -> None:
        """Wait for the work queued so far (a progress or cancel check midway through a phase),
        keeping the time until the phase's next launch out of its span: the span so far is
        closed and the gate opened, and after the wait a new span starts behind a new gate."""
        if self._open is None:
            self._sync()
            return
        name, detail, start, g = self._open
        self._end_span(name, detail, start)
        g.open()
        self._sync()
        self._close_gate()
        start = _take_event()
        self._record(start)
        self._open = [name, detail, start, g]

    def _sync(self):
        if self.stream is not None:
            self.stream.synchronize()
        elif getattr(self.backend, "is_gpu", False):
            from numba import cuda
            cuda.synchronize()

    def copies(self, name: str, pairs, *, to_device: bool) -> None:
        """A phase of copies between device arrays and pageable host arrays ((device, host)
        pairs): on a GPU issued with its events from compiled code (native_copy.py), so no wait
        for the GIL enters it; elsewhere, or if that fails, an ordinary ungated phase."""
        nbytes = sum(int(d.nbytes) for d, _ in pairs)
        if self._events_ok and not use_cupti() and _method != "events" and not _native_failed:
            from . import native_copy
            start, end = _take_event(), _take_event()
            try:
                native_copy.copies(start, end, self.stream, pairs, to_device)
            except Exception as exc:   # a driver or numba without these symbols: the plain way
                _native_failed.append(repr(exc))
                _give_events((start, end))
            else:
                self.timings.bytes[name] += nbytes
                self._events.append((name, None, start, end, None))
                self._methods.add(native_copy.NATIVE_COPY)
                return
        with self.phase(name, gpu=True, nbytes=nbytes, gate=False):
            for dev, host in pairs:
                if to_device:
                    dev.copy_to_device(host, stream=self.stream)
                else:
                    dev.copy_to_host(host, stream=self.stream)

    def native(self, name: str, kernel, *args, detail: str | None = None,
               stamped: bool = False) -> None:
        """Run a numba CPU kernel timed by the clock inside compiled code (native_clock): the
        wait for the GIL after it, which a busy window thread makes up to 5 ms, stays out.
        `stamped`: a parallel kernel whose last argument is a control block it stamps
        (cpu_chunks), timed from its first piece's start to its last piece's end (a parallel
        region takes the GIL back inside, after them)."""
        from numba.core.registry import CPUDispatcher
        if not isinstance(kernel, CPUDispatcher):   # a Python function (a test's stand-in)
            with self.phase(name, detail=detail):
                kernel(*args)
            return
        if stamped:
            from .cpu_chunks import STAMPED as method
            from .cpu_chunks import stamped as wrap      # a plain closure: nothing to keep
        else:
            from .native_clock import NATIVE as method
            from .native_clock import timed_cached as wrap
        ms = wrap(kernel)(*args)
        self.add_host_ms(name, ms, detail)
        if not getattr(self.backend, "is_gpu", False):
            self.timings.method = method

    def add_host_ms(self, name: str, ms: float, detail: str | None = None):
        self.timings.add(name, ms)
        if detail:
            self.timings.detail[detail] = self.timings.detail.get(detail, 0.0) + ms

    def queued(self) -> None:
        """Mark the end of this job's work on its stream (a real GPU's; elsewhere finish()
        synchronises the stream as before)."""
        if self._events_ok and self.stream is not None and self._end is None:
            self._end = _take_event()
            self._end.record(self.stream)

    def finish(self) -> Timings:
        if self._end is not None:
            self._end.synchronize()
            _give_events((self._end,))
            self._end = None
        elif getattr(self.backend, "is_gpu", False):
            self._sync()
        pids = [e[4] for e in self._events if e[4] is not None]
        busy = {}
        if pids:
            from . import cupti_records
            busy = cupti_records.busy_ms(pids)
            if len(busy) < len(pids):
                self._methods.add(EVENTS)   # records missing: those phases keep their events
        for name, detail, start, end, pid in self._events:
            ms = busy[pid] if pid in busy else start.elapsed_time(end)
            self.timings.add(name, ms)
            if detail:
                self.timings.detail[detail] = self.timings.detail.get(detail, 0.0) + ms
            _give_events((start, end))
        self._events.clear()
        if self._methods:
            gave_up = self._gate is not None and self._gate.given_up() > self._given_up
            if gave_up:
                self.timings.method = GAVE_UP
            elif EVENTS in self._methods or len(self._methods) == 1:
                self.timings.method = EVENTS if EVENTS in self._methods else \
                    next(iter(self._methods))
            else:
                self.timings.method = " + ".join(sorted(self._methods))
        self.timings.phases_ms["total"] = (time.perf_counter() - self._t0) * 1e3
        for name, ms in _cost_sums().items():
            spent = ms - self._costs0.get(name, 0.0)
            if spent > 0:
                self.timings.detail[name] = self.timings.detail.get(name, 0.0) + spent
        return self.timings
