"""The Qt-free scheduler: latest wins, stale results dropped, typed events, generator jobs sharing
the thread, cancellation, shutdown that never waits on uninterruptible work, synchronous mode."""
import threading
import time
from dataclasses import dataclass

import pytest

from kernels.backend import Backend
from kernels.scheduler import (Busy, CancelToken, Cancelled, Delivered, Failed, Progress,
                               Scheduler, Stopped)

CPU = Backend("cpu")


@dataclass(frozen=True)
class Call:
    """A test request: the handler calls fn(ctx)."""
    fn: object
    backend: Backend = CPU


def run_call(ctx, req):
    return req.fn(ctx)


class Events:
    def __init__(self):
        self.items = []
        self.cond = threading.Condition()

    def __call__(self, ev):
        with self.cond:
            self.items.append(ev)
            self.cond.notify_all()

    def wait_for(self, pred, timeout=5.0):
        end = time.monotonic() + timeout
        with self.cond:
            while not any(pred(e) for e in self.items):
                left = end - time.monotonic()
                assert left > 0, f"no such event in {self.items}"
                self.cond.wait(left)
        return next(e for e in self.items if pred(e))

    def of(self, kind, key=None):
        return [e for e in self.items if isinstance(e, kind) and (key is None or e.key == key)]


def make(sync=False):
    ev = Events()
    s = Scheduler(ev, synchronous=sync, handlers={Call: run_call})
    return s, ev


def blocker():
    gate, started = threading.Event(), threading.Event()

    def fn(ctx):
        started.set()
        gate.wait(10)
        return "blocker"
    return fn, gate, started


def test_latest_request_wins_and_superseded_requests_never_start():
    s, ev = make()
    ran = []
    fn, gate, started = blocker()
    s.submit("a", Call(fn))
    assert started.wait(5)
    for i in range(5):
        s.submit("b", Call(lambda ctx, i=i: ran.append(i) or i))
    gate.set()
    got = ev.wait_for(lambda e: isinstance(e, Delivered) and e.key == "b")
    assert got.result == 4 and ran == [4]
    assert s.shutdown(5)


def test_stale_result_is_dropped():
    s, ev = make()
    fn, gate, started = blocker()
    s.submit("a", Call(fn))
    assert started.wait(5)
    newer = s.submit("a", Call(lambda ctx: "newer"))
    gate.set()
    got = ev.wait_for(lambda e: isinstance(e, Delivered))
    assert got.result == "newer" and got.generation == newer
    assert s.shutdown(5)
    assert [e.result for e in ev.of(Delivered)] == ["newer"]


def test_errors_are_typed_events_and_the_worker_keeps_going():
    s, ev = make()

    def bad(ctx):
        raise ValueError("the frame is too large")
    s.submit("v", Call(bad))
    f = ev.wait_for(lambda e: isinstance(e, Failed))
    assert f.message == "the frame is too large" and "ValueError" in f.traceback
    s.submit("v", Call(lambda ctx: 42))
    assert ev.wait_for(lambda e: isinstance(e, Delivered)).result == 42
    assert s.shutdown(5)


def test_a_base_exception_in_a_job_is_reported_not_fatal():
    s, ev = make()

    def exits(ctx):
        raise SystemExit(3)
    s.submit("v", Call(exits))
    assert "SystemExit" in ev.wait_for(lambda e: isinstance(e, Failed)).message
    s.submit("v", Call(lambda ctx: "alive"))
    assert ev.wait_for(lambda e: isinstance(e, Delivered)).result == "alive"
    assert s.shutdown(5)


def test_generator_jobs_report_progress_and_share_the_thread():
    s, ev = make(sync=True)
    order = []

    def sweep(ctx):
        def gen():
            for i in range(3):
                order.append(f"sweep{i}")
                yield i
            return "swept"
        return gen()
    s.autodrain = False
    s.submit("sweep", Call(sweep))
    s.submit("view", Call(lambda ctx: order.append("view") or "frame"))
    s.drain()
    assert [e.item for e in ev.of(Progress, "sweep")] == [0, 1, 2]
    assert ev.of(Delivered, "sweep")[0].result == "swept"
    # the view's job ran between two steps of the sweep, not after all of them
    assert order.index("view") < order.index("sweep2")


def test_cancel_reaches_inside_the_job_and_delivers_nothing():
    s, ev = make()
    started = threading.Event()

    def long(ctx):
        started.set()
        for _ in range(1000):
            ctx.token.check()
            time.sleep(0.005)
        return "finished"
    gen = s.submit("long", Call(long))
    assert started.wait(5)
    s.cancel("long")
    stopped = ev.wait_for(lambda e: isinstance(e, Stopped))
    assert stopped.generation == gen and not ev.of(Delivered)
    assert s.shutdown(5)


def test_shutdown_abandons_uninterruptible_work_quickly():
    s, ev = make()
    fn, gate, started = blocker()      # like a JIT compile: it never checks its token
    s.submit("a", Call(fn))
    assert started.wait(5)
    t0 = time.perf_counter()
    assert s.shutdown(0.1) is False
    assert time.perf_counter() - t0 < 0.5
    assert s.submit("a", Call(lambda ctx: 1)) == -1     # nothing new after shutdown
    gate.set()
    assert s.join(5)
    assert not ev.of(Delivered)        # the abandoned job's result is not delivered


def test_synchronous_mode_runs_inside_submit_and_nested_submits_run_after():
    s, ev = make(sync=True)
    seen = []

    def first(ctx):
        s.submit("b", Call(lambda ctx: seen.append("b") or "b"))
        seen.append("a")
        return "a"
    s.submit("a", Call(first))
    assert seen == ["a", "b"]
    assert [e.result for e in ev.of(Delivered)] == ["a", "b"]
    assert not s.running                # no thread in synchronous mode
    assert ev.of(Busy)[-1].busy is False


def test_renderers_are_owned_per_name_and_backend():
    s, ev = make(sync=True)
    made = []

    def use(ctx):
        return ctx.renderer("r", lambda: made.append(ctx.backend) or object())
    gpu = Backend("cuda", simulated=True, device="sim")
    a1 = s.submit("k", Call(use))
    a2 = s.submit("k", Call(use))
    s.submit("k", Call(use, backend=gpu))
    results = {e.generation: e.result for e in ev.of(Delivered)}
    assert results[a1] is results[a2] and made == [CPU, gpu]


def test_unknown_request_type_is_refused_in_plain_words():
    s, _ = make(sync=True)
    with pytest.raises(TypeError, match="no handler for str"):
        s.submit("k", "not a request")


def test_cancel_token():
    t = CancelToken()
    t.check()
    t.cancel()
    assert t.cancelled
    with pytest.raises(Cancelled):
        t.check()


def test_default_handlers_cover_every_workload_request():
    from kernels.distance.request import DistanceRequest
    from kernels.mandelbrot.requests.request import MandelbrotRequest, ProgressiveRequest
    from kernels.scheduler import ReadPixel, Warmup
    from kernels.vector.jobs import SweepRequest
    from kernels.jobs import default_handlers
    s = Scheduler(synchronous=True, handlers=default_handlers())
    for t in (DistanceRequest, MandelbrotRequest, ProgressiveRequest, SweepRequest, Warmup, ReadPixel):
        assert s._handler_for(t.__new__(t)) is not None


def test_a_mandelbrot_frame_through_the_scheduler():
    from kernels.frame import Frame
    from kernels.mandelbrot.requests.request import MandelbrotRequest
    from kernels.scheduler import Compiled, Warmup
    from kernels.jobs import default_handlers
    ev = Events()
    s = Scheduler(ev, synchronous=True, handlers=default_handlers())
    s.submit("m", Warmup("mandelbrot", CPU))
    s.submit("m", MandelbrotRequest(-0.5, 0.0, 3.0, (16, 12), 50, backend=CPU))
    got = [e.result for e in ev.of(Delivered)]
    assert isinstance(got[0], Compiled) and got[0].backend == CPU
    assert isinstance(got[1], Frame) and got[1].rgba.shape == (12, 16, 4)
