"""GPU phases timed by CUPTI's activity records (NVIDIA's cupti-python), where it can be had.

Each kernel, copy and memset the GPU runs leaves a record with its own start and end on the GPU's
clock; nothing the host does between launches can enter them. A timed phase pushes an external
correlation id for its thread; CUPTI ties every API call made until the pop to that id, and the
phase's time is the length of the union of its records' intervals (the GPU's busy time for that
work). Where cupti-python is missing or CUPTI refuses (another profiler attached, an old driver),
`start()` says why and the timer falls back to events behind a gate (kernels/stream_gate.py).
"""
from __future__ import annotations

import itertools
import threading

from .spans import covered

_lock = threading.Lock()
_state = {"on": None, "why": ""}      # on: None untried, True running, False unavailable
_ids = itertools.count(1)
_intervals: dict[int, list] = {}      # CUPTI correlation id -> [(start_ns, end_ns), ...]
_external: dict[int, int] = {}        # CUPTI correlation id -> our phase id
_cupti = None
_KEEP = 200_000                       # records kept unclaimed at most (a job never finished)


def _completed(activities) -> None:
    kinds = _cupti.ActivityKind
    with _lock:
        for a in activities:
            k = a.kind
            if k == kinds.EXTERNAL_CORRELATION:
                _external[a.correlation_id] = a.external_id
            elif k in (kinds.CONCURRENT_KERNEL, kinds.MEMCPY, kinds.MEMSET):
                _intervals.setdefault(a.correlation_id, []).append((a.start, a.end))
        if len(_intervals) > _KEEP or len(_external) > _KEEP:
            _intervals.clear()
            _external.clear()


def _requested():
    return 4 * 1024 * 1024, 0


def start() -> bool:
    """Turn CUPTI's activity records on for this process, once; False (with why()) if it cannot."""
    global _cupti
    with _lock:
        if _state["on"] is not None:
            return _state["on"]
        try:
            from cupti import cupti
            _cupti = cupti
            # DRIVER too: without API records CUPTI emits no external correlation records
            # (PERFORMANCE, "Honest GPU times"); theirs are dropped in _completed
            for kind in (cupti.ActivityKind.CONCURRENT_KERNEL, cupti.ActivityKind.MEMCPY,
                         cupti.ActivityKind.MEMSET, cupti.ActivityKind.EXTERNAL_CORRELATION,
                         cupti.ActivityKind.DRIVER):
                cupti.activity_enable(kind)
            cupti.activity_register_callbacks(_requested, _completed)
        except ImportError:
            _state.update(on=False, why="cupti-python is not installed "
                          "(pip install -e '.[cupti]')")
            return False
        except Exception as exc:     # CUPTI present but refusing: a profiler attached, a driver
            _state.update(on=False, why=f"CUPTI could not start: {exc}")
            return False
        _state.update(on=True, why="")
        return True


def started():
    """True or False once start() has run, None before."""
    return _state["on"]


def why() -> str:
    return _state["why"]


def push() -> int:
    """A new phase id, tied to this thread's CUDA calls until pop()."""
    pid = next(_ids)
    _cupti.activity_push_external_correlation_id(_cupti.ExternalCorrelationKind.CUSTOM0, pid)
    return pid


def pop() -> None:
    _cupti.activity_pop_external_correlation_id(_cupti.ExternalCorrelationKind.CUSTOM0)


def busy_ms(phase_ids) -> dict:
    """{phase id: milliseconds the GPU spent on its records (overlaps counted once)}, for work
    that has finished (after a synchronisation); a phase whose records have not all come in is
    left out, and its caller keeps its event time."""
    _cupti.activity_flush_all(1)
    want = set(phase_ids)
    spans: dict[int, list] = {p: [] for p in want}
    seen: set = set()
    with _lock:
        for corr, pid in list(_external.items()):
            if pid in want:
                seen.add(pid)
                spans[pid].extend(_intervals.pop(corr, ()))
                del _external[corr]
    return {pid: covered(spans[pid]) * 1e-6 for pid in want if pid in seen}
