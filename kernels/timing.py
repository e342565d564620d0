"""One Timings record per job: where the time went and how many bytes crossed the bus.

GPU phases are timed with CUDA events recorded on the job's stream; host phases with a wall clock.
Under the CUDA simulator there are no real events, so GPU phases are recorded as None: a number
that was not measured is never shown.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

PHASES = ("compile", "h2d", "kernel", "d2h", "host", "total")


@dataclass
class Timings:
    """Milliseconds per phase (None = not applicable or not measurable) and bytes each way."""
    phases_ms: dict = field(default_factory=lambda: {p: None for p in PHASES})
    bytes: dict = field(default_factory=lambda: {"h2d": 0, "d2h": 0})
    backend: str = "cpu"
    label: str = ""            # what the job was, e.g. "mandelbrot 1920×1080"
    detail: dict = field(default_factory=dict)  # sub-phases, e.g. {"colourise": 0.05}
    work: list = field(default_factory=list)    # counted work (kernels.roofs.work.Work)

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
                "work": [w.as_dict() for w in self.work]}

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


class JobTimer:
    """Collects a job's phases. Use as:

        timer = JobTimer(backend, stream)
        with timer.phase("kernel", gpu=True): launch(...)
        with timer.phase("d2h", gpu=True, nbytes=out.nbytes): out.copy_to_host(pinned, stream=stream)
        timings = timer.finish()   # synchronises the stream, resolves events

    `detail` names sub-phases (e.g. colourise) that are also summed into their main phase.
    `queued()` once the job's work is all queued lets later work follow on the same stream
    before finish(), which then waits for this job's work only (a poster's next band).
    """

    def __init__(self, backend, stream=None, label: str = ""):
        self.backend = backend
        self.stream = stream
        self.timings = Timings(backend=getattr(backend, "name", str(backend)), label=label)
        self._events: list[tuple[str, str | None, object, object]] = []
        self._t0 = time.perf_counter()
        self._end = None            # queued()'s event: what finish() waits for instead of the stream
        self._events_ok = bool(getattr(backend, "is_gpu", False)) and not getattr(backend, "simulated", False)

    @contextmanager
    def phase(self, name: str, *, gpu: bool = False, nbytes: int = 0, detail: str | None = None):
        if name in ("h2d", "d2h"):
            self.timings.bytes[name] += int(nbytes)
        if gpu and getattr(self.backend, "is_gpu", False):
            if not self._events_ok:
                yield
                if detail:
                    self.timings.detail.setdefault(detail, None)
                return
            start, end = _take_event(), _take_event()
            start.record(self.stream) if self.stream is not None else start.record()
            yield
            end.record(self.stream) if self.stream is not None else end.record()
            self._events.append((name, detail, start, end))
        else:
            t = time.perf_counter()
            yield
            ms = (time.perf_counter() - t) * 1e3
            self.timings.add(name, ms)
            if detail:
                self.timings.detail[detail] = self.timings.detail.get(detail, 0.0) + ms

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
            if self.stream is not None:
                self.stream.synchronize()
            else:
                from numba import cuda
                cuda.synchronize()
        for name, detail, start, end in self._events:
            ms = start.elapsed_time(end)
            self.timings.add(name, ms)
            if detail:
                self.timings.detail[detail] = self.timings.detail.get(detail, 0.0) + ms
            _give_events((start, end))
        self._events.clear()
        self.timings.phases_ms["total"] = (time.perf_counter() - self._t0) * 1e3
        return self.timings
