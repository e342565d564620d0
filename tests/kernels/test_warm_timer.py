"""The warm-up's timer (warm.WarmUpTimer) times nothing, but sets up what a frame's JobTimer would
otherwise set up inside the first frame: CUPTI or the thread's gate as the timing method says, the
timing events on the thread's free list, and the CPU kernels' clock wrappers."""
import numpy as np
import pytest
from numba import njit

from kernels import cupti_records, native_clock, stream_gate, timing
from kernels.backend import Backend
from kernels.host_costs import cost_sums
from kernels.mandelbrot.frames.warm import WarmUpTimer

REAL_GPU = Backend("cuda", simulated=False, device="test")


class _Fakes:
    def __init__(self, monkeypatch, method, cupti=None):
        self.log, self.taken, self.given = [], 0, []
        fakes = self

        class Gate:
            def close(self, stream):
                fakes.log.append(("close gate", stream))

            def open(self):
                fakes.log.append("open gate")

        class Stream:
            def synchronize(self):
                fakes.log.append("wait stream")

        def take():
            self.taken += 1
            return object()

        self.stream = Stream()
        monkeypatch.setattr(timing, "_method", method)
        monkeypatch.setattr(timing, "_take_event", take)
        monkeypatch.setattr(timing, "_give_events", self.given.extend)
        monkeypatch.setattr(stream_gate, "gate_for_thread",
                            lambda: self.log.append("gate made") or Gate())
        monkeypatch.setattr(cupti_records, "started", lambda: cupti)
        monkeypatch.setattr(cupti_records, "push", lambda: self.log.append("push") or 7)
        monkeypatch.setattr(cupti_records, "pop", lambda: self.log.append("pop"))
        monkeypatch.setattr(cupti_records, "busy_ms",
                            lambda pids: self.log.append(("claim", list(pids))) or {})

    def run(self):
        """A warm-up's calls: two GPU phases, the second waiting midway, and a host phase."""
        t = WarmUpTimer(REAL_GPU, self.stream)
        with t.phase("h2d", gpu=True, nbytes=8):
            self.log.append("copy")
        with t.phase("kernel", gpu=True):
            self.log.append("launch")
            t.timings.bytes["d2h"] += 8
            t.wait()
        with t.phase("host"):
            pass
        t.add_host_ms("compile", 1.0)
        assert t.finish() is None
        return t


def test_the_gate_is_made_and_prepared_on_the_stream_once(monkeypatch):
    f = _Fakes(monkeypatch, "gate")
    f.run()
    assert f.log == ["gate made", ("close gate", f.stream), "open gate", "copy", "launch",
                     "wait stream", "wait stream"]
    # two spans, the wait starting a third: the events a JobTimer would have left behind
    assert f.taken == 6 and len(f.given) == 6


def test_bare_events_make_no_gate(monkeypatch):
    f = _Fakes(monkeypatch, "events")
    f.run()
    assert "gate made" not in f.log
    assert f.taken == 4 and len(f.given) == 4       # an ungated span goes on through a wait


@pytest.mark.parametrize("method", ["auto", "cupti"])
def test_cupti_where_it_runs_claims_the_warm_ups_records(monkeypatch, method):
    f = _Fakes(monkeypatch, method, cupti=True)
    f.run()
    assert "gate made" not in f.log
    assert f.log.count("push") == f.log.count("pop") == 2
    assert f.log[-1] == ("claim", [7, 7])
    assert f.taken == 4


def test_cupti_started_here_is_noted_as_timing_setup(monkeypatch):
    f = _Fakes(monkeypatch, "auto", cupti=None)
    monkeypatch.setattr(cupti_records, "start", lambda: False)  # refused: the gate instead
    before = cost_sums().get("timing setup", 0.0)
    f.run()
    assert cost_sums().get("timing setup", 0.0) > before
    assert f.log[0] == "gate made"


def test_the_simulator_and_the_cpu_set_nothing_up(monkeypatch):
    f = _Fakes(monkeypatch, "gate")
    for backend in (Backend("cuda", simulated=True, device="sim"), Backend("cpu")):
        t = WarmUpTimer(backend, f.stream if backend.is_gpu else None)
        with t.phase("kernel", gpu=True):
            pass
        t.finish()
    assert f.log == ["wait stream"] and f.taken == 0


def test_cpu_kernels_run_in_the_clock_wrapper_a_frame_times_them_with(cpu_backend):
    @njit
    def double(a):
        a[0] *= 2.0

    a = np.ones(1)
    t = WarmUpTimer(cpu_backend)
    t.native("kernel", double, a)
    t.native("kernel", lambda x: x.__setitem__(0, 5.0), a)     # a Python stand-in: just called
    assert double in native_clock._wrapped
    assert a[0] == 5.0
    del native_clock._wrapped[double]


def test_a_renderers_warm_up_makes_no_job_timer(cpu_backend, monkeypatch):
    from kernels.mandelbrot.renderer import Renderer
    made = []
    monkeypatch.setattr(timing.JobTimer, "__init__",
                        lambda self, *a, **k: made.append(a) or None)
    assert Renderer(cpu_backend).warmup(("sqrt",)) >= 0
    assert made == []
