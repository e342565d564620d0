"""A GPU phase's time is the GPU's own: host pauses while a phase is queued (a sleep, another
Python thread holding the GIL) stay out of it (kernels/stream_gate.py, JobTimer)."""
import contextlib
import threading
import time

import numpy as np
import pytest
from numba import njit

from kernels import timing
from kernels.timing import JobTimer
from kernels.vector.registry import implementations
from kernels.vector.runner import PointRunner

PAUSE_S = 0.02


def _real(gpu_backend):
    if gpu_backend.simulated:
        pytest.skip("the simulator times nothing: the gate is for real events")


def _kernel():
    from numba import cuda

    @cuda.jit
    def add_one(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1.0
    return cuda, add_one


def test_cpu_phases_say_wall_clock(cpu_backend):
    t = JobTimer(cpu_backend, None, "cpu job")
    with t.phase("kernel"):
        sum(range(1000))
    got = t.finish()
    assert got.method == timing.WALL
    assert got.as_dict()["method"] == timing.WALL
    assert got.get("kernel") is not None


def test_set_method_returns_what_it_replaced():
    before = timing.set_method("events")
    try:
        assert timing.method_setting() == "events"
        assert timing.set_method("gate") == "events"
        assert timing.method_setting() == "gate"
        with pytest.raises(ValueError, match="auto, cupti, gate, events"):
            timing.set_method("guess")
    finally:
        timing.set_method(before)


@pytest.mark.gpu
def test_simulator_says_not_timed(gpu_backend):
    if not gpu_backend.simulated:
        pytest.skip("the simulator's case")
    t = JobTimer(gpu_backend, None, "sim job")
    with t.phase("kernel", gpu=True):
        pass
    got = t.finish()
    assert got.get("kernel") is None and got.method == timing.UNTIMED


@pytest.mark.gpu
def test_a_pause_while_queueing_stays_out_of_the_kernel_time(gpu_backend):
    _real(gpu_backend)
    cuda, add_one = _kernel()
    x = cuda.to_device(np.zeros(1 << 16))
    stream = cuda.stream()
    add_one[256, 256, stream](x)       # compiled outside the timed phases
    stream.synchronize()
    from kernels import cupti_records
    settings = [("gate", timing.GATED), ("events", timing.EVENTS)]
    if cupti_records.start():
        settings.append(("cupti", timing.CUPTI))
    for setting, method in settings:
        before = timing.set_method(setting)
        try:
            t = JobTimer(gpu_backend, stream, f"pause {setting}")
            with t.phase("kernel", gpu=True):
                time.sleep(PAUSE_S)    # the GIL lost between the start event and the launch
                add_one[256, 256, stream](x)
            got = t.finish()
        finally:
            timing.set_method(before)
        assert got.method == method
        if setting != "events":
            assert got.get("kernel") < 0.25 * PAUSE_S * 1e3, got.phases_ms
        else:                          # what events alone measure: the pause
            assert got.get("kernel") > 0.9 * PAUSE_S * 1e3, got.phases_ms
    assert np.all(x.copy_to_host() == 1.0 + len(settings))   # every launch ran once


@pytest.fixture
def gated():
    before = timing.set_method("gate")
    yield
    timing.set_method(before)


@pytest.mark.gpu
def test_wait_midway_keeps_the_host_time_after_it_out(gpu_backend, gated):
    _real(gpu_backend)
    cuda, add_one = _kernel()
    x = cuda.to_device(np.zeros(1 << 16))
    stream = cuda.stream()
    add_one[256, 256, stream](x)
    stream.synchronize()
    t = JobTimer(gpu_backend, stream, "two launches, a wait between")
    with t.phase("kernel", gpu=True):
        add_one[256, 256, stream](x)
        t.wait()                        # a progress check between bands
        time.sleep(PAUSE_S)
        add_one[256, 256, stream](x)
    got = t.finish()
    assert got.method == timing.GATED
    assert got.get("kernel") < 0.25 * PAUSE_S * 1e3, got.phases_ms
    assert x.copy_to_host()[0] == 3.0


@pytest.mark.gpu
def test_a_body_that_waits_on_its_stream_is_released_and_named(gpu_backend, gated):
    _real(gpu_backend)
    from kernels.stream_gate import TIMEOUT_NS
    cuda, add_one = _kernel()
    x = cuda.to_device(np.zeros(1 << 10))
    stream = cuda.stream()
    add_one[4, 256, stream](x)          # loaded outside (a load inside would open the gate)
    stream.synchronize()
    t = JobTimer(gpu_backend, stream, "waits inside")
    t0 = time.perf_counter()
    with t.phase("kernel", gpu=True):
        add_one[4, 256, stream](x)
        stream.synchronize()            # what a pageable copy does: would wait for the gate
    got = t.finish()
    assert time.perf_counter() - t0 < 3 * TIMEOUT_NS * 1e-9   # released by the timeout
    assert got.method == timing.GAVE_UP
    assert x.copy_to_host()[0] == 2.0


@pytest.mark.gpu
def test_a_kernels_first_launch_behind_the_gate_does_not_wait_for_its_timeout(gpu_backend, gated):
    """Loading a kernel's module waits for the gate's spinning kernel; the gates are opened before
    the load, and that phase says its span is a plain one."""
    _real(gpu_backend)
    from kernels.stream_gate import TIMEOUT_NS
    cuda, add_one = _kernel()
    import pickle
    # compiled and loaded here; pickled and rebuilt as numba's disk cache does, it is compiled
    # code whose module loads at its first launch
    kernel = pickle.loads(pickle.dumps(add_one.compile("void(float64[::1])")))
    x = cuda.to_device(np.zeros(1 << 10))
    stream = cuda.stream()
    spans = []
    for label in ("first launch", "second launch"):
        t = JobTimer(gpu_backend, stream, label)
        t0 = time.perf_counter()
        with t.phase("kernel", gpu=True):
            kernel.launch((x,), (4,), (256,), stream)
        got = t.finish()
        spans.append((time.perf_counter() - t0, got.method))
    assert spans[0][0] < 0.3 * TIMEOUT_NS * 1e-9, spans
    assert spans[0][1] == timing.EVENTS and spans[1][1] == timing.GATED, spans
    assert x.copy_to_host()[0] == 2.0


def test_module_loading_is_eager_unless_the_user_chose(tmp_path):
    import os
    import subprocess
    import sys
    code = "import kernels, os; print(os.environ['CUDA_MODULE_LOADING'])"
    env = {k: v for k, v in os.environ.items() if k != "CUDA_MODULE_LOADING"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run = dict(cwd=root, capture_output=True, text=True, check=True)
    assert subprocess.run([sys.executable, "-c", code], env=env, **run).stdout.strip() == "EAGER"
    env["CUDA_MODULE_LOADING"] = "LAZY"
    assert subprocess.run([sys.executable, "-c", code], env=env, **run).stdout.strip() == "LAZY"


def _busy(stop):
    n = 0
    while not stop.is_set():            # plain Python, as a repainting GUI thread runs
        for i in range(2000):
            n += i
    return n


@pytest.mark.gpu
def test_a_busy_thread_does_not_enter_vector_kernel_times(gpu_backend):
    """The issue's case: `add` through PointRunner alone, then beside a thread running Python."""
    _real(gpu_backend)
    impl = next(i for i in implementations(gpu_backend) if i.name == "cuda-jit")
    runner = PointRunner(gpu_backend, repeats=7, budget_s=5.0)
    n = 1 << 22
    alone = runner.measure("add", impl, "kernel", n).kernel_ms
    stop = threading.Event()
    worker = threading.Thread(target=_busy, args=(stop,))
    worker.start()
    try:
        busy = runner.measure("add", impl, "kernel", n).kernel_ms
    finally:
        stop.set()
        worker.join()
    assert alone and busy
    assert busy < 1.5 * alone + 0.01, (alone, busy)


@pytest.fixture
def long_switch_interval():
    """A busy thread keeps the GIL 100 ms at a time: a kernel that lets go of it waits that long
    before its caller's Python runs again."""
    import sys
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.1)
    stop = threading.Event()
    worker = threading.Thread(target=_busy, args=(stop,))
    yield worker
    stop.set()
    if worker.is_alive():
        worker.join()
    sys.setswitchinterval(before)


@njit(nogil=True, cache=True)
def _passes(a, k):
    # a few milliseconds: long enough that the busy thread, even on a loaded machine, is running
    # when this lets go of the GIL, and takes it
    for j in range(k):
        for i in range(a.size):
            a[i] = a[i] * 0.5 + j


def test_a_cpu_kernel_timed_by_its_own_clock_leaves_the_wait_for_the_gil_out(
        cpu_backend, long_switch_interval):
    """A kernel that lets go of the GIL waits for it on return (up to the busy thread's 100 ms
    here): a wall clock around the call counts that wait, the clock inside the kernel does not."""
    a = np.ones(1 << 16)
    warm = JobTimer(cpu_backend, None, "native")
    warm.native("kernel", _passes, a, 500)          # compiled before the busy thread starts
    warm.finish()
    long_switch_interval.start()
    got, walls = [], []
    for _ in range(5):
        t = JobTimer(cpu_backend, None, "native")
        t0 = time.perf_counter()
        t.native("kernel", _passes, a, 500)
        walls.append((time.perf_counter() - t0) * 1e3)
        got.append(t.finish())
    assert all(x.method.startswith("native clock") for x in got)
    native = [x.get("kernel") for x in got]
    # the wait a wall clock counts (on a loaded machine not every call meets the busy thread)
    assert max(w - n for w, n in zip(walls, native)) > 50, (native, walls)
    assert max(native) < 50, (native, walls)


def test_numpy_ops_are_timed_by_their_threads_cpu_time(cpu_backend, long_switch_interval):
    impl = next(i for i in implementations(cpu_backend) if i.name == "numpy")
    runner = PointRunner(cpu_backend, repeats=3, budget_s=5.0)
    runner.measure("add", impl, "kernel", 4096)
    long_switch_interval.start()
    point = runner.measure("add", impl, "kernel", 4096, repeats=3)
    assert point.timings.method.startswith("thread CPU time")
    assert point.kernel_ms < 25, point.kernel_ms   # a wall clock reads ~100 ms each


@pytest.mark.gpu
def test_pageable_copies_are_issued_with_their_events_from_compiled_code(gpu_backend):
    _real(gpu_backend)
    from numba import cuda

    from kernels.native_copy import NATIVE_COPY
    stream = cuda.stream()
    host = np.random.default_rng(1).random(1 << 18)
    back = np.zeros_like(host)
    dev = cuda.device_array_like(host, stream=stream)
    before = timing.set_method("gate")
    try:
        t = JobTimer(gpu_backend, stream, "pageable round trip")
        t.copies("h2d", [(dev, host)], to_device=True)
        t.copies("d2h", [(dev, back)], to_device=False)
        got = t.finish()
    finally:
        timing.set_method(before)
    np.testing.assert_array_equal(back, host)
    assert got.method == NATIVE_COPY
    assert got.bytes == {"h2d": host.nbytes, "d2h": host.nbytes}
    assert got.get("h2d") > 0 and got.get("d2h") > 0


def test_spans_that_overlap_are_counted_once():
    from kernels.spans import covered
    assert covered([(5, 6), (0, 2), (1, 3), (2.5, 2.75)]) == 4
    assert covered([]) == 0


class _Calls:
    """Fakes that write down, in order, what the timer did to the stream, its events and gate."""

    def __init__(self):
        self.log = []
        calls = self

        class Event:
            def record(self, stream=None):
                calls.log.append("record")

            def synchronize(self):
                calls.log.append("wait event")

            def elapsed_time(self, other):
                return 1.0

        class Stream:
            def synchronize(self):
                calls.log.append("wait stream")

        class Gate:
            opened_early = 0

            def close(self, stream):
                calls.log.append("close gate")

            def open(self):
                calls.log.append("open gate")

            def given_up(self):
                return 0

        self.Event, self.stream, self.gate = Event, Stream(), Gate()


def test_a_gated_phase_is_queued_behind_its_gate_and_a_wait_opens_it_first(monkeypatch,
                                                                             numba_cuda):
    """The order the method rests on (the real GPU's tests time it): gate closed, start event,
    the body's work, end event, then the gate opened; a wait midway closes the span and opens
    the gate before it waits, and starts a new span behind a new gate."""
    from kernels import stream_gate
    from kernels.backend import Backend
    c = _Calls()
    monkeypatch.setattr(timing, "_take_event", c.Event)
    monkeypatch.setattr(timing, "_method", "gate")
    monkeypatch.setattr(stream_gate, "gate_for_thread", lambda: c.gate)
    monkeypatch.setattr(numba_cuda, "defer_cleanup", contextlib.nullcontext)   # no context here
    t = JobTimer(Backend("cuda", simulated=False, device="test"), c.stream, "ordered")
    with t.phase("kernel", gpu=True):
        c.log.append("launch")
        t.wait()
        c.log.append("launch")
    got = t.finish()
    assert c.log == ["close gate", "record", "launch",
                     "record", "open gate", "wait stream", "close gate", "record",
                     "launch", "record", "open gate", "wait stream"]
    assert got.get("kernel") == 2.0 and got.method == timing.GATED
