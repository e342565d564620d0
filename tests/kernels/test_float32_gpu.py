"""The float32 kernels on the GPU (real, or numba's simulator with tiny sizes): the same counts as
the float32 CPU twin in one launch and in iteration slices, and, compiled to PTX (needs NVVM: on a
GPU machine, or with a CUDA toolkit's libnvvm here), no float64 arithmetic in the warp kernel."""
import re
import types
from dataclasses import replace

import numpy as np
import pytest

from kernels.backend import simulator_enabled

from ptx_compile import compile_ptx as _ptx  # tests/kernels/ptx_compile.py
from kernels.mandelbrot import renderer as m

pytestmark = pytest.mark.gpu

SEAHORSE = (-0.743643887037151, 0.131825904205330)


def _req(cx, cy, width, size, iters, **kw):
    return m.MandelbrotRequest(cx, cy, width, size, iters, want_values=True,
                               number_type="float32", **kw)


def _same(g, c, max_iter):
    np.testing.assert_array_equal(m.iteration_counts(g.values, max_iter),
                                  m.iteration_counts(c.values, max_iter))
    np.testing.assert_allclose(g.values, c.values, rtol=0, atol=1e-9)


def test_float32_gpu_matches_cpu_twin(gpu_backend, cpu_backend, simulated):
    gpu = m.Renderer(gpu_backend, number_type="float32")
    cpu = m.Renderer(cpu_backend, number_type="float32")
    cases = ([_req(-0.5, 0.0, 3.0, (16, 12), 40), _req(*SEAHORSE, 0.01, (12, 9), 50)]
             if simulated else
             [_req(-0.5, 0.0, 3.0, (64, 48), 256), _req(*SEAHORSE, 0.01, (127, 65), 2000),
              _req(*SEAHORSE, 0.01, (1920, 1080), 2000)])
    for req in cases:
        g, c = gpu.render(req), cpu.render(req)
        _same(g, c, req.max_iter)
        assert g.meta["number_type"] == "float32"
        assert g.timings.bytes["h2d"] == 4 * (req.size[0] + req.size[1])   # the two axes


def test_float32_gpu_sliced_matches_cpu_twin(gpu_backend, cpu_backend, monkeypatch, simulated):
    req = _req(*SEAHORSE, 0.01, (8, 5) if simulated else (200, 150), 40 if simulated else 800)
    w, _ = req.size
    monkeypatch.setattr(m, "GPU_BAND_WORK", w * req.max_iter - 1 if simulated else 1)
    monkeypatch.setattr(m, "GPU_MIN_BAND_PIXELS", 1)
    sliced = m.Renderer(gpu_backend, number_type="float32").render(req)
    _same(sliced, m.Renderer(cpu_backend, number_type="float32").render(req), req.max_iter)


def test_float32_and_float64_gpu_frames_differ_only_in_arithmetic(gpu_backend, simulated):
    size = (16, 12) if simulated else (320, 240)
    req = _req(-0.5, 0.0, 3.0, size, 40)
    f32 = m.Renderer(gpu_backend, number_type="float32").render(req)
    f64 = m.Renderer(gpu_backend).render(replace(req, number_type="float64"))
    same = m.iteration_counts(f32.values, 40) == m.iteration_counts(f64.values, 40)
    assert same.mean() > 0.98


_F64_ARITHMETIC = re.compile(r"^\s*(?:@!?%p\d+\s+)?(add|sub|mul|fma|div|neg|abs|min|max|setp"
                             r"|rcp|sqrt)[a-z0-9.]*\.f64\b", re.M)


def test_float32_warp_kernel_has_no_float64_arithmetic(monkeypatch, numba_cuda):
    if simulator_enabled():
        pytest.skip("the simulator compiles no PTX")
    cuda = numba_cuda
    from numba.cuda import dispatcher

    from kernels.mandelbrot.loops import escape_warp as ew32
    # device functions ask the current device for its compute capability: none is needed here
    monkeypatch.setattr(dispatcher, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)))
    sig = ("float64[:, ::1], int32[:, ::1], uint32[::1], int64, int64, int64, float32[::1], "
           "float32[::1], int64")
    try:
        ptx, _ = cuda.compile_ptx(ew32.escape_warp_kernel32.py_func, sig, cc=(9, 0))
    except Exception as exc:   # no NVVM: a machine without the CUDA toolkit
        pytest.skip(f"cannot compile PTX here: {type(exc).__name__}")
    assert re.search(r"\bmul\.rn\.f32\b", ptx) and re.search(r"\badd\.rn\.f32\b", ptx)
    assert not _F64_ARITHMETIC.findall(ptx)
    # the float64 warp kernel does its arithmetic in float64, so the check can see it
    from kernels.mandelbrot.loops import escape_warp as ew
    sig64 = ("float64[:, ::1], int32[:, ::1], uint32[::1], int32[::1], int32[::1], int64, int64, "
             "int64, int64, int64, float64, float64, float64, float64, float64, int64")
    ptx64, _ = cuda.compile_ptx(ew.escape_warp_kernel.py_func, sig64, cc=(9, 0))
    assert _F64_ARITHMETIC.findall(ptx64)


def test_float32_step_loop_is_float32_arithmetic(monkeypatch, numba_cuda):
    """At the default grouping, the loop that iterates between two looks at the warp (the look's
    blocks of steps): nearly all float32 arithmetic, no 64-bit integer work (two instructions an
    operation)."""
    from kernels.mandelbrot.loops import escape_warp as ew32
    from tools.ptx_loops import arithmetic_share, loops
    sig = ("float64[:, ::1], int32[:, ::1], uint32[::1], int64, int64, int64, float32[::1], "
           "float32[::1], int64")
    found = loops(_ptx(monkeypatch, numba_cuda, ew32.escape_warp_kernel32.py_func, sig))
    # the smallest loop that looks at the warp and holds a block's 7 operations a step
    loop = min((lo for lo in found if arithmetic_share(lo[1], "f32")[0] >= 7 * int(ew32._BLOCK)
                and lo[1]["vote.sync.ballot.b32"]), key=lambda lo: sum(lo[1].values()))
    arith, total = arithmetic_share(loop[1], "f32")
    # nine in ten at least (the kernel before branch-free blocks: three in four)
    assert arith / total >= 0.9, loop
    wide = re.compile(r"^(?:add|sub|mul|mad|setp|selp|shl|shr|and|or|xor|min|max)\.[a-z.]*[sub]64$")
    assert not [op for op in loop[1] if wide.match(op)], loop
