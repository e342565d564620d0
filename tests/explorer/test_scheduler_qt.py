import threading

import pytest

from explorer.worker import RenderWorker


def blocker():
    """A job that holds the worker until released, so submissions pile up behind it."""
    gate, started = threading.Event(), threading.Event()

    def job(token):
        started.set()
        gate.wait(10)
        return "blocker"
    return job, gate, started


def test_latest_request_wins(qtbot, worker):
    ran = []
    job, gate, started = blocker()
    worker.submit("a", job)
    assert started.wait(5)
    for i in range(5):
        worker.submit("b", lambda token, i=i: ran.append(i) or i)
    with qtbot.waitSignal(worker.result, timeout=5000, check_params_cb=lambda k, g, v: k == "b") as sig:
        gate.set()
    assert sig.args[2] == 4
    assert ran == [4]  # the four older submissions never ran


def test_stale_result_dropped(qtbot, worker):
    results = []
    worker.result.connect(lambda k, g, v: results.append(v))
    job, gate, started = blocker()
    worker.submit("a", job)
    assert started.wait(5)
    worker.submit("a", lambda t: "newer")  # makes the running job's result stale
    gate.set()
    qtbot.waitUntil(lambda: "newer" in results, timeout=5000)
    assert "blocker" not in results


def test_error_is_reported_and_worker_keeps_going(qtbot, worker):
    def bad(token):
        raise ValueError("the frame is too large")
    with qtbot.waitSignal(worker.failed, timeout=5000) as sig:
        worker.submit("v", bad)
    assert sig.args[2] == "the frame is too large" and "ValueError" in sig.args[3]
    with qtbot.waitSignal(worker.result, timeout=5000) as sig:
        worker.submit("v", lambda t: 42)
    assert sig.args[2] == 42


def test_generator_jobs_report_progress_and_share_the_worker(qtbot, worker):
    order = []
    step, other_submitted = threading.Event(), threading.Event()

    def sweep(token):
        for i in range(3):
            token.check()
            order.append(f"s{i}")
            step.set()
            other_submitted.wait(5)  # hold the first point until the other view has asked
            yield i
        return "swept"

    progress = []
    worker.progress.connect(lambda k, g, item: progress.append(item))
    with qtbot.waitSignal(worker.result, timeout=5000, check_params_cb=lambda k, g, v: k == "sweep"):
        worker.submit("sweep", sweep)
        assert step.wait(5)
        worker.submit("view", lambda t: order.append("view"))
        other_submitted.set()
    assert progress == [0, 1, 2]
    assert order == ["s0", "view", "s1", "s2"]  # the other view ran between sweep points


def test_cancel_stops_a_generator_within_one_step(qtbot, worker):
    reached = []
    first = threading.Event()
    hold = threading.Event()

    def long_job(token):
        for i in range(1000):
            token.check()
            reached.append(i)
            first.set()
            hold.wait(5)
            yield i

    with qtbot.waitSignal(worker.cancelled, timeout=5000):
        worker.submit("long", long_job)
        assert first.wait(5)
        worker.cancel("long")
        hold.set()
    assert len(reached) <= 2


def test_shutdown_with_work_in_flight(qtbot):
    w = RenderWorker()
    job, gate, started = blocker()
    w.submit("a", job)
    assert started.wait(5)
    w.submit("a", lambda t: None)
    gate.set()
    assert w.shutdown(5000)
    assert not w.isRunning()
    assert w.submit("a", lambda t: None) == -1  # a stopped worker takes nothing new
