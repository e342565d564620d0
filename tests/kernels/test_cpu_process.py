"""The CPU points' helper process (kernels/vector/cpu_process.py): the points come from another
process, a cancel reaches it within a point, a helper that dies is a plain error and the next
point starts another, and where none can start the points are measured here and the runner says
so."""
from __future__ import annotations

import os
import threading
import time

import pytest

from kernels import backend as backends
from kernels.vector import cpu_process
from kernels.vector.registry import implementations


@pytest.fixture
def be():
    return backends.resolve("cpu")


def _impl(be, name):
    return next(i for i in implementations(be) if i.name == name)


def test_a_cpu_point_is_measured_in_the_helper_process(be):
    runner = cpu_process.point_runner(be, repeats=3)
    point = runner.measure("add", _impl(be, "cpu-numba"), "kernel", 1 << 14)
    helper = cpu_process.helper()
    assert helper is not None and helper.proc.pid != os.getpid() and helper.proc.is_alive()
    assert point.measured and point.kernel_ms > 0 and point.repeats == 3
    assert point.timings.backend == be.name
    assert "stamped" in point.timings.method
    numpy = runner.measure("add", _impl(be, "numpy"), "kernel", 1 << 14)
    assert numpy.measured and numpy.timings.method == "thread CPU time"
    assert cpu_process.helper() is helper           # one helper serves every point
    runner.release()


def test_a_cancel_reaches_the_helper_within_a_point(be):
    runner = cpu_process.point_runner(be, repeats=10_000, budget_s=60.0)
    impl = _impl(be, "numpy")
    runner.measure("add", impl, "kernel", 1 << 20, repeats=3)      # started and warm
    flag = threading.Event()
    threading.Timer(0.3, flag.set).start()
    t0 = time.perf_counter()
    point = runner.measure("add", impl, "kernel", 1 << 20, cancel=flag.is_set)
    took = time.perf_counter() - t0
    assert took < 5.0, took                  # 10,000 runs would take ~2 s at least; cut short
    assert 0 < point.repeats < 10_000
    # the next point is not cancelled by the last one's flag
    assert runner.measure("add", impl, "kernel", 1 << 12, repeats=5).repeats == 5


def test_a_helper_that_dies_is_a_plain_error_and_the_next_point_starts_another(be):
    runner = cpu_process.point_runner(be, repeats=2)
    impl = _impl(be, "numpy")
    runner.measure("add", impl, "kernel", 1 << 12)
    first = cpu_process.helper()
    first.proc.kill()
    first.proc.join(5)
    with pytest.raises(RuntimeError, match="CPU measuring process ended"):
        first.ask(("measure", "add", "numpy", "kernel", 1 << 12, 2, 1.0))
    point = runner.measure("add", impl, "kernel", 1 << 12)
    assert point.measured and cpu_process.helper() is not first


def test_sizes_that_do_not_fit_are_skipped_here_with_the_reason(be, monkeypatch):
    from kernels.vector import memory
    monkeypatch.setattr(memory, "host_free_bytes", lambda: 200_000)
    point = cpu_process.point_runner(be).measure("add", _impl(be, "numpy"), "kernel", 1 << 20)
    assert point.skipped and "host memory" in point.skipped


def test_where_no_helper_can_start_the_points_are_measured_here_and_said_so(be, monkeypatch):
    def refuse():
        raise OSError("no processes here")
    monkeypatch.setattr(cpu_process, "_helper", None)
    monkeypatch.setattr(cpu_process, "_start_error", None)
    monkeypatch.setattr(cpu_process, "_Helper", refuse)
    runner = cpu_process.point_runner(be, repeats=2)
    point = runner.measure("add", _impl(be, "numpy"), "kernel", 1 << 12)
    assert point.measured
    assert runner.note == "CPU points measured in this process: OSError: no processes here"
