"""Faults in the compute scheduler: results that arrive after a cancel, jobs that raise what is
not an Exception, and a close while a frame at the iteration limit is being computed."""
import threading
from dataclasses import dataclass

import pytest

from explorer.views.base import BaseView
from kernels.mandelbrot import jobs as mandelbrot_jobs
from kernels.mandelbrot.requests.request import MAX_ITER_LIMIT, MandelbrotRequest
from kernels.scheduler import Delivered, Failed, Warmup

MINIBROT = (-1.7549, 0.0, 0.04)


@dataclass(frozen=True)
class Stream:
    """A generator job: yields `count` items, then waits for `gate` before finishing."""
    count: int
    produced: threading.Event
    gate: threading.Event
    backend: object = None


def stream_job(ctx, req):
    for i in range(req.count):
        yield i
    req.produced.set()           # every item has been handed to the adapter's signal by now
    req.gate.wait(10)
    return "done"


@dataclass(frozen=True)
class Raise:
    exc: BaseException
    backend: object = None


def raise_job(ctx, req):
    raise req.exc


class Recorder(BaseView):
    view_id = "recorder"

    def __init__(self, scheduler, backend):
        super().__init__(scheduler, backend)
        self.progress, self.results, self.failures, self.cancels = [], [], [], 0

    def on_progress(self, item):
        self.progress.append(item)

    def on_result(self, result):
        self.results.append(result)

    def on_failed(self, message, tb):
        self.failures.append(message)

    def on_cancelled(self):
        self.cancels += 1


@pytest.fixture
def recorder(qtbot, threaded_scheduler, cpu_backend):
    threaded_scheduler.register(Stream, stream_job)
    threaded_scheduler.register(Raise, raise_job)
    v = Recorder(threaded_scheduler, cpu_backend)
    qtbot.addWidget(v)
    return v


def test_items_queued_before_a_cancel_never_reach_the_view(qtbot, recorder):
    """The worker has emitted three progress items (queued to the GUI thread, not yet handled)
    when the view cancels: none of them, and no result, may land afterwards."""
    produced, gate = threading.Event(), threading.Event()
    recorder.submit(Stream(3, produced, gate))
    assert produced.wait(30)          # the GUI thread has not run its event loop since
    recorder.cancel()
    gate.set()
    # the worker runs one job at a time and its events arrive in order: once the next job's
    # result is here, everything the cancelled job emitted has been handled (and dropped)
    with qtbot.waitSignal(recorder.scheduler.event, timeout=10000,
                          check_params_cb=lambda ev: ev.key == "probe"):
        recorder.scheduler.submit("probe", Stream(0, threading.Event(), gate))
    assert recorder.progress == [] and recorder.results == [] and not recorder.in_flight


def test_a_newer_submission_drops_the_older_ones_queued_items(qtbot, recorder):
    """Latest wins: a backend switch or a new camera resubmits under the same key, and the
    superseded job's items already in the queue are dropped."""
    produced, gate = threading.Event(), threading.Event()
    recorder.submit(Stream(4, produced, gate))
    assert produced.wait(30)
    newer_produced = threading.Event()
    recorder.submit(Stream(2, newer_produced, gate))
    gate.set()
    qtbot.waitUntil(lambda: recorder.results == ["done"], timeout=20000)
    assert recorder.progress == [0, 1]        # only the newer job's items


@pytest.mark.parametrize("exc", [SystemExit(3), KeyboardInterrupt(), GeneratorExit()])
def test_a_job_raising_a_base_exception_is_a_failure_and_the_worker_goes_on(qtbot, recorder, exc):
    with qtbot.waitSignal(recorder.scheduler.event, timeout=20000,
                          check_params_cb=lambda ev: isinstance(ev, Failed)) as sig:
        recorder.submit(Raise(exc))
    assert type(exc).__name__ in sig.args[0].message
    produced, gate = threading.Event(), threading.Event()
    gate.set()
    recorder.submit(Stream(1, produced, gate))
    qtbot.waitUntil(lambda: recorder.results == ["done"], timeout=20000)
    assert recorder.scheduler.running


def _close_during_a_deep_frame(qtbot, scheduler, backend, size):
    """Start a frame of slow pixels at the iteration limit, and once its handler runs, shut the
    scheduler down as the window's close does: the worker must end within the wait (not be
    abandoned inside a kernel for minutes)."""
    started = threading.Event()

    @dataclass(frozen=True)
    class Deep:
        request: MandelbrotRequest
        backend: object

    def deep_job(ctx, req):
        started.set()
        return mandelbrot_jobs.render(ctx, req.request)

    scheduler.register(Deep, deep_job)
    with qtbot.waitSignal(scheduler.event, timeout=120000,
                          check_params_cb=lambda ev: isinstance(ev, Delivered)):
        scheduler.submit("warm", Warmup("mandelbrot", backend))     # compiled before timing
    req = MandelbrotRequest(*MINIBROT, size, MAX_ITER_LIMIT, backend=backend)
    scheduler.submit("deep", Deep(req, backend))
    assert started.wait(30)
    assert scheduler.shutdown(timeout=5.0), "the worker was still inside the frame after 5 s"


def test_closing_during_a_cpu_frame_at_the_iteration_limit_ends_the_worker(qtbot, threaded_scheduler,
                                                                           cpu_backend):
    _close_during_a_deep_frame(qtbot, threaded_scheduler, cpu_backend, (640, 480))


@pytest.mark.gpu
def test_closing_during_a_gpu_frame_at_the_iteration_limit_ends_the_worker(qtbot, threaded_scheduler,
                                                                           gpu_backend, simulated):
    _close_during_a_deep_frame(qtbot, threaded_scheduler, gpu_backend,
                               (16, 12) if simulated else (1920, 1080))
