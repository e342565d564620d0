"""Faults: work that runs too long to wait for. A cancel (a close, a backend switch, a newer
frame) must reach inside a render at any iteration count, on the CPU and on the GPU, and the
pictures must not change because the work is cut into pieces."""
from dataclasses import replace

import numpy as np
import pytest
from faultkit import run_python

import kernels.mandelbrot.renderer as m
from kernels.cpu_chunks import FLAG, control
from kernels.mandelbrot.loops import escape as mk
from kernels.mandelbrot.requests.request import MAX_ITER_LIMIT, MandelbrotRequest
from kernels.scheduler import Cancelled, CancelToken

SEAHORSE = (-0.743643887037151, 0.131825904205330)
MINIBROT = (-1.7549, 0.0, 0.04)    # most pixels inside the set but outside the shortcut: slow


class CancelAfter:
    """A token whose check() raises Cancelled after n checks (a cancel that lands mid-frame)."""

    def __init__(self, n):
        self.n = n
        self.checks = 0

    def check(self):
        self.checks += 1
        if self.checks > self.n:
            raise Cancelled()


def test_cancel_token_calls_back_once_and_at_once_when_already_cancelled():
    token, calls = CancelToken(), []
    forget = token.on_cancel(lambda: calls.append("a"))
    token.on_cancel(lambda: calls.append("b"))
    forget()                                   # a finished render no longer listens
    token.cancel()
    token.cancel()
    assert calls == ["b"]
    token.on_cancel(lambda: calls.append("late"))
    assert calls == ["b", "late"]


def test_cpu_kernel_with_its_stop_flag_set_does_no_work_at_ten_million_iterations():
    """The flag is read inside the kernel: set before the call, a band of slow pixels at the
    iteration limit (minutes of work) comes back at once, values untouched."""
    cx, cy, width = MINIBROT
    values = np.full((6, 40), -7.0)
    stop = control()
    stop[FLAG] = 1
    xs, ys = mk.pixel_axes((0, 0, cx, cy, width / 40, 20.0, 3.0), 6, 40, "float64")
    mk.escape_rows_cpu(values, 0, 6, mk.row_stride(6), xs, ys, MAX_ITER_LIMIT, stop)
    assert (values == -7.0).all()
    stop[FLAG] = 0
    mk.escape_rows_cpu(values, 0, 6, mk.row_stride(6), xs, ys, 30, stop)
    assert (values >= 0).all()


def test_cpu_render_at_the_iteration_limit_stops_soon_after_a_cancel():
    """A real process (so a kernel that ignored the cancel cannot hang the test run): a frame of
    slow pixels at 10,000,000 iterations (tens of minutes of work) is cancelled from another
    thread shortly after it starts and must end with Cancelled well within the child's limit."""
    r = run_python(f"""
        import threading, time
        from kernels import backend
        from kernels.mandelbrot.renderer import Renderer
        from kernels.mandelbrot.requests.request import MandelbrotRequest
        from kernels.scheduler import Cancelled, CancelToken
        r = Renderer(backend.resolve("cpu"))
        r.warmup()
        token = CancelToken()
        req = MandelbrotRequest({MINIBROT[0]}, {MINIBROT[1]}, {MINIBROT[2]}, (400, 300), 10_000_000)
        threading.Timer(0.3, token.cancel).start()
        try:
            r.render(req, cancel=token)
            print("finished")
        except Cancelled:
            print("cancelled")
    """, timeout=90)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "cancelled"


def test_cpu_bands_without_a_floor_match_one_whole_frame(cpu_backend, monkeypatch):
    """Cutting the work finer (here one row per band) never changes the picture."""
    req = MandelbrotRequest(*SEAHORSE, 0.01, (23, 17), 300, want_values=True)
    whole = m.Renderer(cpu_backend).render(req).values.copy()
    monkeypatch.setattr(m, "CPU_BAND_WORK", 1)
    token = CancelToken()
    banded = m.Renderer(cpu_backend).render(req, cancel=token).values
    np.testing.assert_array_equal(banded, whole)
    with pytest.raises(Cancelled):
        m.Renderer(cpu_backend).render(replace(req, center_im=0.13), cancel=CancelAfter(2))


# ---- the GPU: launches sliced by iterations (the simulator runs them with tiny sizes) -----------
@pytest.mark.gpu
def test_gpu_iteration_slices_give_the_cpu_picture_bit_for_bit(gpu_backend, cpu_backend, monkeypatch,
                                                                simulated):
    size, iters = ((13, 9), 90) if simulated else ((301, 203), 40_000)
    req = MandelbrotRequest(*SEAHORSE, 0.004, size, iters, want_values=True)
    cpu = m.Renderer(cpu_backend).render(req).values.copy()
    plain = m.Renderer(gpu_backend).render(req).values.copy()
    # force slices of a few iterations each, several bands under the simulator
    monkeypatch.setattr(m, "GPU_BAND_WORK", size[0] * size[1] * (7 if simulated else 50))
    monkeypatch.setattr(m, "SIM_BAND_PIXELS", 3 * size[0])
    sliced_renderer = m.Renderer(gpu_backend)
    sliced = sliced_renderer.render(req, cancel=CancelToken()).values
    np.testing.assert_array_equal(m.iteration_counts(sliced, iters), m.iteration_counts(cpu, iters))
    np.testing.assert_array_equal(m.iteration_counts(plain, iters), m.iteration_counts(cpu, iters))
    if simulated:      # the simulator's arithmetic is the CPU's: the smooth values agree too
        np.testing.assert_array_equal(sliced, cpu)
    t = sliced_renderer.render(replace(req, center_re=req.center_re + 1e-5)).timings
    assert t.bytes["d2h"] >= size[0] * size[1] * 12     # the frame, the values, the counters


@pytest.mark.gpu
def test_gpu_sliced_render_stops_between_slices(gpu_backend, monkeypatch, simulated):
    size = (12, 8) if simulated else (256, 128)
    req = MandelbrotRequest(*MINIBROT, size, 5000)
    monkeypatch.setattr(m, "GPU_BAND_WORK", 50 * size[0])
    token = CancelAfter(3)
    with pytest.raises(Cancelled):
        m.Renderer(gpu_backend).render(req, cancel=token)
    assert token.checks == 4                  # three slices, then the cancel: not the whole frame


@pytest.mark.gpu
def test_gpu_render_at_the_iteration_limit_stops_soon_after_a_cancel(gpu_backend, simulated):
    """Like the CPU's: a child process renders slow pixels at 10,000,000 iterations on the GPU
    (or the simulator) and a cancel from another thread ends it with Cancelled."""
    size = (16, 12) if simulated else (1920, 1080)
    env_sim = "1" if simulated else "0"
    from faultkit import child_env
    r = run_python(f"""
        import threading
        from kernels import backend
        from kernels.mandelbrot.renderer import Renderer
        from kernels.mandelbrot.requests.request import MandelbrotRequest
        from kernels.scheduler import Cancelled, CancelToken
        r = Renderer(backend.resolve("cuda"))
        r.warmup()
        token = CancelToken()
        req = MandelbrotRequest({MINIBROT[0]}, {MINIBROT[1]}, {MINIBROT[2]}, {size}, 10_000_000)
        threading.Timer(1.0, token.cancel).start()
        try:
            r.render(req, cancel=token)
            print("finished")
        except Cancelled:
            print("cancelled")
    """, env=child_env(NUMBA_ENABLE_CUDASIM=env_sim), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "cancelled"
