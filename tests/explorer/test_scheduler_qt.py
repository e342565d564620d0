"""The Qt adapter over the scheduler: events reach the GUI thread as one signal, synchronous mode
runs jobs from the event loop after the submitting code has finished, close never blocks."""
import threading
import time
from dataclasses import dataclass

from PyQt6.QtCore import QThread

from kernels.backend import Backend
from kernels.scheduler import Delivered, Progress

CPU = Backend("cpu")


@dataclass(frozen=True)
class Call:
    fn: object
    backend: Backend = CPU


def run_call(ctx, req):
    return req.fn(ctx)


def test_events_arrive_on_the_gui_thread(qtbot, threaded_scheduler):
    s = threaded_scheduler
    s.register(Call, run_call)
    where = {}

    def job(ctx):
        where["job"] = threading.current_thread()
        return "done"
    s.event.connect(lambda ev: where.setdefault("event", QThread.currentThread()))
    with qtbot.waitSignal(s.event, timeout=5000, check_params_cb=lambda ev: isinstance(ev, Delivered)) as sig:
        s.submit("k", Call(job))
    assert sig.args[0].result == "done"
    assert where["job"] is not threading.main_thread()          # computed on the worker...
    assert where["event"] is QThread.currentThread()             # ...delivered on the GUI thread


def test_synchronous_mode_runs_after_the_submitting_code(qtbot, scheduler):
    scheduler.register(Call, run_call)
    order = []
    scheduler.event.connect(lambda ev: order.append(("event", type(ev).__name__)))
    scheduler.submit("k", Call(lambda ctx: order.append("job") or 1))
    order.append("after submit")
    assert order == ["after submit"]
    qtbot.waitUntil(lambda: ("event", "Delivered") in order, timeout=5000)
    assert order == ["after submit", "job", ("event", "Delivered")]
    assert not scheduler.running                                 # no thread at all


def test_progress_items_are_events_too(qtbot, scheduler):
    scheduler.register(Call, run_call)
    items = []
    scheduler.event.connect(lambda ev: items.append(ev.item) if isinstance(ev, Progress) else None)

    def job(ctx):
        yield 1
        ctx.report(2)
        yield 3
        return "end"
    with qtbot.waitSignal(scheduler.event, timeout=5000, check_params_cb=lambda ev: isinstance(ev, Delivered)):
        scheduler.submit("k", Call(job))
    assert items == [1, 2, 3]


def test_shutdown_returns_at_once_with_a_job_that_never_checks(qtbot, threaded_scheduler):
    s = threaded_scheduler
    s.register(Call, run_call)
    gate, started = threading.Event(), threading.Event()
    s.submit("a", Call(lambda ctx: started.set() or gate.wait(10)))
    assert started.wait(5)
    t0 = time.perf_counter()
    assert s.shutdown(0.1) is False
    assert time.perf_counter() - t0 < 0.5
    assert s.submit("a", Call(lambda ctx: None)) == -1
    gate.set()
