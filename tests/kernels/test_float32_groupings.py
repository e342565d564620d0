"""The app's float32 warp kernel (escape_warp.py's, branch-free blocks) on the GPU (real, or
numba's simulator with tiny sizes): the float32 CPU twin's counts at several step groupings, the
default grouping kept in numba's disk cache, and, compiled to PTX (needs NVVM), a look at the warp
that is float32 arithmetic with no 64-bit integer work."""
import re

import numpy as np
import pytest

from kernels.mandelbrot import renderer as m

pytestmark = pytest.mark.gpu

SEAHORSE = (-0.743643887037151, 0.131825904205330)
_F64_ARITHMETIC = re.compile(r"^\s*(?:@!?%p\d+\s+)?(add|sub|mul|fma|div|neg|abs|min|max|setp"
                             r"|rcp|sqrt)[a-z0-9.]*\.f64\b", re.M)


def _req(cx, cy, width, size, iters):
    return m.MandelbrotRequest(cx, cy, width, size, iters, want_values=True,
                               number_type="float32")


def _render(backend, req, kernel=None):
    r = m.Renderer(backend, number_type="float32")
    if kernel is not None:
        r.target.launch.kernel = kernel
    return r.render(req)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("steps, blocks", [(1, 1), (4, 3), (16, 2), (16, 4)])
def test_branchless_kernel_keeps_the_counts(gpu_backend, cpu_backend, simulated, steps, blocks):
    """Escapes inside a block (settled from the last accepted one), pixels that reach max_iter
    with a partial block left (max_iter not a multiple of the block) and cardioid pixels: the CPU
    twin's counts and values."""
    from kernels.mandelbrot.benches.escape_variants import warp_kernel32
    kernel = warp_kernel32(steps, blocks)
    cases = ([_req(*SEAHORSE, 0.02, (10, 6), 37), _req(-0.5, 0.0, 3.0, (12, 5), 11)]
             if simulated else
             [_req(*SEAHORSE, 0.02, (640, 480), 3001), _req(-0.5, 0.0, 3.0, (333, 201), 257)])
    for req in cases:
        g = _render(gpu_backend, req, kernel)
        c = m.Renderer(cpu_backend, number_type="float32").render(req)
        counts = m.iteration_counts(g.values, req.max_iter)
        np.testing.assert_array_equal(counts, m.iteration_counts(c.values, req.max_iter))
        np.testing.assert_allclose(g.values, c.values, rtol=0, atol=1e-9)
        # the frame holds escapes at counts that are not block boundaries, and inside pixels
        escaped = counts[counts < req.max_iter]
        assert (escaped % steps != 0).any() or steps == 1
        assert (g.values >= req.max_iter).any()


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_branchless_kernel_below_one_block(gpu_backend, cpu_backend):
    """max_iter below one block: no block ever fits, every pixel is settled in single steps."""
    from kernels.mandelbrot.benches.escape_variants import warp_kernel32
    req = _req(*SEAHORSE, 0.05, (9, 4), 5)
    g = _render(gpu_backend, req, warp_kernel32(16, 2))
    c = m.Renderer(cpu_backend, number_type="float32").render(req)
    np.testing.assert_array_equal(m.iteration_counts(g.values, 5), m.iteration_counts(c.values, 5))


def test_default_kernel_is_the_cached_one(simulated, numba_cuda):
    """The app's kernel is the module's own (cached on disk like the other kernels); another
    grouping is a copy built once a process, outside the cache."""
    from kernels.mandelbrot.benches import escape_variants as ev
    from kernels.mandelbrot.loops import escape_warp as ew32
    from kernels.mandelbrot.frames import targets_f32
    app = ew32.escape_warp_kernel32
    assert ev.warp_kernel32() is app
    assert targets_f32.WarpLaunch32(None, 16).kernel is app
    assert targets_f32.WarpLaunch32(None, 16).thresh == targets_f32.THRESH
    other = ev.warp_kernel32(8, 2)
    assert other is not app and other is ev.warp_kernel32(8, 2)
    if not simulated:
        from numba.cuda.dispatcher import CUDACache
        assert isinstance(app._cache, CUDACache)
        assert not isinstance(other._cache, CUDACache)


def test_branchless_look_is_float32_arithmetic(monkeypatch, numba_cuda):
    """The loop between two votes (the look's blocks, unrolled): nine in ten instructions are the
    float32 steps and escape tests, none 64-bit, one vote and at most two branches."""
    from kernels.backend import simulator_enabled
    if simulator_enabled():
        pytest.skip("the simulator compiles no PTX")
    import types

    from numba.cuda import dispatcher
    cuda = numba_cuda

    from kernels.mandelbrot.benches import escape_variants as ev
    from tools.ptx_loops import arithmetic_share, loops
    monkeypatch.setattr(dispatcher, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)))
    sig = ("float64[:, ::1], int32[:, ::1], uint32[::1], int64, int64, int64, float32[::1], "
           "float32[::1], int64")
    steps, blocks = 16, 4
    try:
        ptx = cuda.compile_ptx(ev.warp_kernel32(steps, blocks).py_func, sig, cc=(9, 0))[0]
    except Exception as exc:   # no NVVM: a machine without the CUDA toolkit
        pytest.skip(f"cannot compile PTX here: {type(exc).__name__}")
    found = loops(ptx)
    look = min((lo for lo in found if arithmetic_share(lo[1], "f32")[0] >= 7 * steps * blocks
                and lo[1]["vote.sync.ballot.b32"]), key=lambda lo: sum(lo[1].values()))
    arith, total = arithmetic_share(look[1], "f32")
    assert arith / total >= 0.9, look
    wide = re.compile(r"^(?:add|sub|mul|mad|setp|selp|shl|shr|and|or|xor|min|max)\.[a-z.]*[sub]64$")
    assert not [op for op in look[1] if wide.match(op)], look
    assert look[1]["vote.sync.ballot.b32"] == 1 and look[1]["bra"] <= 2, look
    # and no float64 arithmetic anywhere (test_float32_gpu.py's check)
    assert not _F64_ARITHMETIC.findall(ptx)
