"""A movie's frames launch every kernel through prepared launches kept by their renderer
(kernels/launch.py), frame after frame: numba's own launch converts every argument in Python at
each call, holding the GIL that the other GPUs' workers of a movie wait for. Deep frames (the
counters zeroed, the pixels' first pass, the redo pass, the colouring) and float64 frames (the
escape pass, the colouring, the work count). On a real GPU, a later frame calls numba's launch path
not once."""
from decimal import Decimal

import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels import launch as launch_mod
from kernels.mandelbrot.requests.deep_request import add_decimal
from kernels.mandelbrot.loops.targets import zero_kernel
from kernels.mandelbrot.deep_frames import DeepFrameRenderer
from kernels.mandelbrot.frames.frame_work_gpu import count_kernel
from kernels.mandelbrot.renderer import Renderer
from kernels.mandelbrot.requests.request import DeepFrameRequest, MandelbrotRequest


def deep(width, size, iters=600):
    w = Decimal(width)
    return DeepFrameRequest(str(w * Decimal("0.1234567")), add_decimal(1, w * Decimal("-0.0765432")),
                            width, size, iters)


def watch_launches(monkeypatch, simulated):
    """(PreparedKernels made, their dispatchers as launched, numba's own launches on a GPU)."""
    made, launched, numba_calls = [], [], []
    real_init, real_call = launch_mod.PreparedKernel.__init__, launch_mod.PreparedKernel.__call__

    def init(self, dispatcher, *a, **kw):
        made.append(dispatcher)
        real_init(self, dispatcher, *a, **kw)

    def call(self, *args):
        launched.append(self.dispatcher)
        return real_call(self, *args)
    monkeypatch.setattr(launch_mod.PreparedKernel, "__init__", init)
    monkeypatch.setattr(launch_mod.PreparedKernel, "__call__", call)
    if not simulated:
        from numba.cuda.dispatcher import CUDADispatcher
        real_numba = CUDADispatcher.call

        def numba_call(self, *a, **kw):
            numba_calls.append(self)
            return real_numba(self, *a, **kw)
        monkeypatch.setattr(CUDADispatcher, "call", numba_call)
    return made, launched, numba_calls


@pytest.mark.gpu
def test_deep_frames_launch_through_kept_prepared_launches(gpu_backend, simulated, monkeypatch):
    size = (8, 6) if simulated else (64, 48)
    frames = DeepFrameRenderer(gpu_backend)
    first = frames.render(deep("1e-40", size)).rgba.copy()
    made, launched, numba_calls = watch_launches(monkeypatch, simulated)
    # the same place again in another palette's twin: a new frame of the same size and kind
    again = frames.render(deep("1e-40", size, iters=601)).rgba
    assert made == [], f"a later frame prepared its launches anew: {made}"
    code_first = frames.deep._loop("perturbation", (None,) * 5, (None, None), 601)[0]
    # stats, counters, nredo, and the count of pixels handed back to MPFR (gpu_untrusted.py)
    assert launched.count(zero_kernel) == 4
    assert code_first.gpu_first in launched and code_first.gpu_redo in launched
    assert len(launched) >= 7, launched                       # + stats_init and colour
    assert numba_calls == [], f"launches that took numba's own path: {numba_calls}"
    assert len(np.unique(again.reshape(-1, 4), axis=0)) > 3
    assert first.shape == again.shape


@pytest.mark.gpu
def test_float64_frames_launch_through_kept_prepared_launches(gpu_backend, simulated, monkeypatch):
    size = (8, 6) if simulated else (64, 48)
    r = Renderer(gpu_backend)
    req = MandelbrotRequest(-0.7436438870371587, 0.1318259042053119, 1e-4, size, 300)
    r.render(req)
    made, launched, numba_calls = watch_launches(monkeypatch, simulated)
    frame = r.render(MandelbrotRequest(-0.7436438870371587, 0.1318259042053119, 0.9e-4, size, 300))
    assert made == [], f"a later frame prepared its launches anew: {made}"
    assert count_kernel in launched                           # the roofline's work count
    assert len(launched) >= 5, launched                       # + escape and colour passes
    assert numba_calls == [], f"launches that took numba's own path: {numba_calls}"
    assert len(np.unique(frame.rgba.reshape(-1, 4), axis=0)) > 3


@pytest.mark.gpu
def test_a_new_table_lets_the_old_device_copies_go(gpu_backend, simulated, monkeypatch):
    """When a deep frame uploads a new orbit and table, its prepared launches stop holding the old
    device copies (kept, they would stay allocated beside the new ones)."""
    size = (8, 6) if simulated else (64, 48)
    frames = DeepFrameRenderer(gpu_backend)
    frames.render(deep("1e-40", size))
    before = {id(a) for _, arrays in frames.deep.pixels._placed.values() for a in arrays}
    forgotten = []
    real = launch_mod.Launchers.forget

    def forget(self, arrays):
        forgotten.extend(id(a) for a in arrays)
        return real(self, arrays)
    monkeypatch.setattr(launch_mod.Launchers, "forget", forget)
    frames.render(deep("1e-60", size))          # 66 bits deeper: a new table
    assert before and before <= set(forgotten)
