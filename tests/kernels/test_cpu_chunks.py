"""cpu_chunks' span: the work a parallel loop's threads did counts, a stretch in which the OS set a
thread aside does not (issue 39: in CI a busy Python thread woken at the region's start put a
time slice into numba's loop, 7x its time)."""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest
from numba import njit, prange

from kernels.cpu_chunks import WORKERS, claim, control, enter, leave, reset, span_ms, stamped
from kernels.native_clock import _thread_cpu_ns

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_usleep = _libc.usleep
_usleep.argtypes = [ctypes.c_uint]
_usleep.restype = ctypes.c_int


@njit(parallel=True)
def _napping(pieces, spin_ns, nap_us, ctl):
    """Piece 0 sleeps nap_us (its thread off the CPU, as a thread the OS sets aside); every
    other piece spins spin_ns of its thread's CPU time (work, however the machine is loaded)."""
    reset(ctl)
    for _w in prange(ctl[WORKERS]):
        clocks = enter()
        ran = False
        c = claim(ctl)
        while c < pieces:
            ran = True
            if c == 0:
                _usleep(nap_us)
            else:
                t = _thread_cpu_ns()
                while _thread_cpu_ns() - t < spin_ns:
                    pass
            c = claim(ctl)
        leave(ctl, clocks, ran)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_thread_set_aside_is_not_counted_and_the_work_is(workers):
    ctl = control()
    ctl[WORKERS] = workers
    run = stamped(_napping)
    run(2, 1_000, 10, ctl)                     # compiled, and the threads started
    ms = run(2, 5_000_000, 60_000, ctl)        # 5 ms of work, 60 ms asleep
    assert 4.5 <= ms < 20.0, ms                # before: 60-65 ms (the sleep counted)


def test_no_piece_run_means_no_span():
    ctl = control()
    ctl[WORKERS] = 2
    stamped(_napping)(0, 0, 0, ctl)
    assert span_ms(ctl) == 0.0


def test_a_thread_that_finds_no_piece_left_does_not_stretch_the_span():
    # one piece, many threads: the latecomers claim nothing and must leave START and END alone
    ctl = control()
    ctl[WORKERS] = 8
    ms = stamped(_napping)(np.int64(2), 2_000_000, 1, ctl)
    assert 1.9 <= ms < 10.0, ms


def test_a_deep_cpu_frame_is_timed_by_its_loop_threads(cpu_backend):
    """The deep loops' rows are claimed and timed by their threads too: the kernel phase says so,
    and it is no longer than the frame."""
    from kernels.cpu_chunks import STAMPED
    from kernels.mandelbrot.benches import locations as loc
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    req = DeepRequest(loc.MINIBROT_139.center_re, loc.MINIBROT_139.center_im, "4e-20", (24, 18),
                      3000)
    got = DeepRenderer(cpu_backend).render_values(req)
    t = got.timings
    assert t.method == STAMPED
    assert 0 < t.phases_ms["kernel"] <= t.phases_ms["total"]
