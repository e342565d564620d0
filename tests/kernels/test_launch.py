import numpy as np
import pytest
from numba import cuda

from kernels.launch import PreparedKernel


@cuda.jit
def _axpb(out, x, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + b


@pytest.mark.gpu
def test_prepared_launch_matches_numba_and_follows_new_arrays(gpu_backend):
    n = 300
    rng = np.random.default_rng(3)
    x1, x2 = rng.random(n), rng.random(n)
    d_x1, d_x2 = cuda.to_device(x1), cuda.to_device(x2)
    out = cuda.to_device(np.full(n, np.nan))
    stream = cuda.stream()
    _axpb[2, 256, stream](out, d_x1, 2.0, 1.0)  # compile through numba first, as the renderers do
    stream.synchronize()
    launch = PreparedKernel(_axpb, 2, 256, stream)
    for d_x, x, a, b in ((d_x1, x1, 3.0, -1.0), (d_x1, x1, 0.5, 2.0), (d_x2, x2, 0.5, 2.0)):
        out = cuda.to_device(np.full(n, np.nan))  # a new output array: its parameters are redone
        ref = cuda.to_device(np.full(n, np.nan))
        launch(out, d_x, a, b)
        _axpb[2, 256, stream](ref, d_x, a, b)
        stream.synchronize()
        # the same compiled kernel: bit for bit what numba's own launch computes
        np.testing.assert_array_equal(out.copy_to_host(), ref.copy_to_host())
        # and the right function (the GPU may fuse a*x+b into one rounding: ulps, not 1e-15)
        np.testing.assert_allclose(out.copy_to_host(), a * x + b, rtol=1e-12, atol=1e-15)
    if not gpu_backend.simulated:
        assert launch.fast, "the prepared path fell back to numba's launch on a real GPU"


@cuda.jit
def _scale(out, x, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i]


@pytest.mark.gpu
def test_prepared_launch_compiles_on_first_use_and_keeps_a_few_arrays(gpu_backend):
    """A kernel with no overload yet is compiled by numba's own launch and prepared from the next
    call on (not given up for good); buffers used in turn (a renderer's value slots) each keep
    their converted parameters, up to a bound, so no old buffer stays allocated for ever."""
    from kernels import launch as kl
    n = 100
    xs = [cuda.to_device(np.arange(n, dtype=np.float64) + k) for k in range(kl._KEPT_ARRAYS + 2)]
    out = cuda.to_device(np.zeros(n))
    stream = cuda.stream()
    launch = PreparedKernel(_scale, 1, 128, stream)     # never launched before: not compiled
    for rounds in range(2):
        for k, d_x in enumerate(xs):
            launch(out, d_x, 2.0)
            stream.synchronize()
            np.testing.assert_array_equal(out.copy_to_host(), 2.0 * (np.arange(n) + k))
    if not gpu_backend.simulated:
        assert launch.fast, "the first, uncompiled call gave the prepared path up"
        assert len(launch._array_params[1]) == kl._KEPT_ARRAYS
        assert len(launch._array_params[0]) == 1
