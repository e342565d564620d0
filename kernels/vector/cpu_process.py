"""CPU points measured in a helper process, so that no other Python thread of the caller (a
repainting window) can enter their time.

Beside a busy thread of the same process, each call of a CPU op begins after a wait for the GIL
of up to a switch interval (5 ms), and in that wait its arrays age out of the caches: the op's own
clock then times real work on cold data, several times slower at sizes that fit the last-level
cache, as it is alone after a sleep of that length before each call, and not beside a busy
*process* (docs/PERFORMANCE.md, "Honest CPU times"). Here the runs of a point follow each other in
a process of their own, as in the headless bench: the window's threads share the cores with it
(real contention still shows) but never its GIL.

One helper serves every runner of the parent process, one request at a time; it starts on the
first CPU point (the kernels loaded from numba's cache) and ends with the parent. Where it cannot
start, the points are measured in this process, and `note` says so.
"""
from __future__ import annotations

import multiprocessing as mp
import threading

from .memory import fit_problem
from .ops import ImplUnavailable
from .results import SweepPoint

_POLL_S = 0.05


def _serve(conn, cancel) -> None:
    """The helper's loop: ("measure", op, impl, mode, n, repeats, budget_s) -> ("ok", point);
    ("release",) drops the buffers; ("stop",) or a closed pipe ends it."""
    from .. import backend as backends
    from .registry import implementations
    from .runner import PointRunner
    be = backends.resolve("cpu")
    impls = {i.name: i for i in implementations(be)}
    runner = PointRunner(be)
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "stop":
            return
        if msg[0] == "release":
            runner.release()
            conn.send(("ok", None))
            continue
        _, op, name, mode, n, repeats, budget_s = msg
        try:
            impl = impls.get(name)
            if impl is None or not impl.available:
                raise ImplUnavailable(impl.reason if impl is not None else f"no {name} here")
            runner.repeats, runner.budget_s = repeats, budget_s
            point = runner.measure(op, impl, mode, n, cancel=cancel.is_set)
            conn.send(("ok", point))
        except ImplUnavailable as exc:
            conn.send(("unavailable", str(exc)))
        except Exception as exc:  # the parent raises it as the point's failure
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class _Helper:
    """The helper process and its pipe."""

    def __init__(self):
        ctx = mp.get_context("spawn")    # no fork of a process that holds Qt, CUDA or threads
        self.conn, child = ctx.Pipe()
        self.cancel = ctx.Event()
        self.proc = ctx.Process(target=_serve, args=(child, self.cancel), daemon=True,
                                name="gpu-explorer CPU points")
        self.proc.start()
        child.close()
        self.lock = threading.Lock()

    def ask(self, msg, cancel=None):
        with self.lock:
            try:
                self.conn.send(msg)
                while not self.conn.poll(_POLL_S):
                    if not self.proc.is_alive():
                        raise EOFError
                    if cancel is not None and cancel():
                        self.cancel.set()
                kind, value = self.conn.recv()
            except (EOFError, OSError):
                self.proc.join(1.0)
                raise RuntimeError(f"the CPU measuring process ended (exit code "
                                   f"{self.proc.exitcode})") from None
            self.cancel.clear()
        if kind == "unavailable":
            raise ImplUnavailable(value)
        if kind == "error":
            raise RuntimeError(value)
        return value

    def stop(self):
        try:
            with self.lock:
                self.conn.send(("stop",))
        except (OSError, ValueError):
            pass
        self.proc.join(2.0)
        if self.proc.is_alive():
            self.proc.kill()


_helper: _Helper | None = None
_start_error: str | None = None
_guard = threading.Lock()


def helper() -> _Helper | None:
    """The running helper, started on first use; None where it cannot start (`start_error`)."""
    global _helper, _start_error
    with _guard:
        if _helper is not None and not _helper.proc.is_alive():
            _helper = None
        if _helper is None and _start_error is None:
            try:
                _helper = _Helper()
            except Exception as exc:  # measured in this process instead, and said so
                _start_error = f"{type(exc).__name__}: {exc}"
        return _helper


def start_error() -> str | None:
    return _start_error


def stop() -> None:
    """End the helper (tests; at exit the daemon process ends with its parent)."""
    global _helper
    with _guard:
        if _helper is not None:
            _helper.stop()
            _helper = None


class ProcessPointRunner:
    """PointRunner's measure/release, the CPU implementations' points run in the helper process
    and the GPU's here (a GPU point's time is the device's own already: kernels/timing.py)."""

    def __init__(self, backend, repeats: int = 5, budget_s: float = 0.5):
        self.backend = backend
        self.repeats = max(1, int(repeats))
        self.budget_s = budget_s
        self._local = None
        self.note = None        # why the CPU points are measured in this process, if they are

    @property
    def local(self):
        from .runner import PointRunner
        if self._local is None:
            self._local = PointRunner(self.backend, self.repeats, self.budget_s)
        return self._local

    def measure(self, op_name: str, impl, mode: str, n: int, cancel=None,
                repeats: int | None = None) -> SweepPoint:
        if not impl.in_helper:
            return self.local.measure(op_name, impl, mode, n, cancel, repeats)
        # what fits is decided here, where the window reads it, as PointRunner.data decides it
        problem = fit_problem(n, False, mode == "pinned")
        if problem:
            return SweepPoint(op_name, impl.name, mode, int(n), skipped=problem)
        h = helper()
        if h is None:
            self.note = f"CPU points measured in this process: {start_error()}"
            return self.local.measure(op_name, impl, mode, n, cancel, repeats)
        from .runner import cancelled
        want = max(1, int(repeats)) if repeats else self.repeats
        point = h.ask(("measure", op_name, impl.name, mode, int(n), want, self.budget_s),
                      cancel=(lambda: cancelled(cancel)) if cancel is not None else None)
        if point.timings is not None:     # the helper's backend is "cpu": label it as ours
            point.timings.backend = getattr(self.backend, "name", str(self.backend))
        return point

    def start_helper(self) -> None:
        """Start the helper process now (it answers once it has loaded its kernels)."""
        helper()

    def release(self):
        if self._local is not None:
            self._local.release()
        h = _helper
        if h is not None and h.proc.is_alive():
            h.ask(("release",))


def point_runner(backend, repeats: int = 5, budget_s: float = 0.5) -> ProcessPointRunner:
    """The runner for a sweep or a bench on `backend`."""
    return ProcessPointRunner(backend, repeats, budget_s)
