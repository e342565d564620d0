from types import SimpleNamespace

import numpy as np
import pytest

from kernels.backend import numba_cuda as _numba_cuda
from kernels.launch import PreparedKernel

# where numba.cuda does not import, @cuda.jit still decorates (its GPU tests then skip)
cuda = _numba_cuda()


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


@cuda.jit
def _clear(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = 0


@pytest.mark.gpu
def test_prepared_launch_runs_each_dtype_its_own_overload(gpu_backend):
    """One launcher called with arrays of two dtypes (the renderers' zero_kernel clears a uint32
    counter and int64 totals) runs each its own overload: the first one prepared, run on the
    other's array, would clear only the first half of the int64 array's bytes."""
    stream = cuda.stream()
    poison = np.full(4, 0x40163BC5CD578DF9, dtype=np.int64)
    small, wide = cuda.to_device(np.full(3, 7, np.uint32)), cuda.to_device(poison)
    launch = PreparedKernel(_clear, 1, 32, stream)
    for rounds in range(3):     # compiled by numba, then prepared: each array in both states
        for arr, host in ((small, np.full(3, 7, np.uint32)), (wide, poison)):
            arr.copy_to_device(host, stream=stream)
            launch(arr)
            stream.synchronize()
            got = arr.copy_to_host()
            assert got.dtype == host.dtype and not got.any(), (rounds, got)
    if not gpu_backend.simulated:
        assert launch.fast
        assert len(launch._kernels) == 2, "both dtypes should have their own prepared overload"


class _FakeKernel:
    """A compiled overload as PreparedKernel sees it: its argument types, its parameter
    conversion (recorded) and the function handle it launches (its name)."""
    debug, extensions = False, ()

    def __init__(self, name, argument_types):
        self.name, self.argument_types = name, argument_types
        self._codelibrary = SimpleNamespace(get_cufunc=lambda: SimpleNamespace(kernel=name))

    def _prepare_args(self, ty, val, stream, retr, params):
        params.append((self.name, val.dtype.name if hasattr(val, "dtype") else val))


def test_prepared_launch_picks_the_overload_of_each_call_without_a_gpu(monkeypatch, numba_cuda):
    """PreparedKernel's own logic, with numba's compiled overloads and launch stood in for: each
    call launches the overload of its arguments' types with parameters that overload made, a
    kept array's type is remembered, and a scalar's type follows its class."""
    from kernels.backend import simulator_enabled
    if simulator_enabled():
        pytest.skip("the simulator replaces numba.cuda's dispatcher: no launch to stand in for")
    from numba.core.typing.typeof import Purpose, typeof
    from numba.cuda import dispatcher as nd

    def arg_type(val):
        return typeof(val, Purpose.argument)

    a32, a64 = np.zeros(2, np.uint32), np.zeros(2, np.int64)
    overloads = {(arg_type(a), arg_type(3)): _FakeKernel(f"clear_{a.dtype}", (arg_type(a),
                                                                             arg_type(3)))
                 for a in (a32, a64)}
    fake = SimpleNamespace(typeof_pyval=arg_type, overloads=overloads)
    launched = []
    monkeypatch.setattr(nd, "launch", lambda stream, config, fn, *params: launched.append(
        (fn, params)))
    launch = PreparedKernel(fake, 1, 32, None)
    assert launch.fast                  # no GPU is asked anything: launch is stood in for
    for arr in (a32, a64, a32, a64, a64, a32):
        launch(arr, 3)
        fn, params = launched[-1]
        assert fn == f"clear_{arr.dtype}" and params[0] == (fn, arr.dtype.name), launched[-1]
    assert launch.fast and len(launch._kernels) == 2
    assert len(launch._array_params[0]) == 2            # each array converted once, then kept
    from kernels import launch as kl
    with pytest.raises(kl._NotCompiled):                 # a NumPy int32 is not an int: no
        launch._launch_prepared((a32, np.int32(3)))     # overload for it, none borrowed




def test_forgotten_arrays_are_no_longer_kept_without_a_gpu(monkeypatch, numba_cuda):
    """Launchers.forget lets a renderer's replaced orbit and table go: the prepared launches kept
    their converted parameters (and so the arrays) until then; the next call converts anew."""
    from kernels.backend import simulator_enabled
    if simulator_enabled():
        pytest.skip("the simulator replaces numba.cuda's dispatcher: no launch to stand in for")
    from numba.core.typing.typeof import Purpose, typeof
    from numba.cuda import dispatcher as nd

    from kernels.launch import Launchers

    def arg_type(val):
        return typeof(val, Purpose.argument)

    old, new = np.zeros(2, np.int64), np.ones(2, np.int64)
    sig = (arg_type(old), arg_type(3))
    class FakeDispatcher:              # kept by identity, as numba's dispatchers are
        typeof_pyval = staticmethod(arg_type)
        overloads = {sig: _FakeKernel("k", sig)}
    fake = FakeDispatcher()
    monkeypatch.setattr(nd, "launch", lambda *a: None)
    launchers = Launchers(None)
    launch = launchers(fake, 1, 32)
    assert launchers(fake, 1, 32) is launch            # kept per (kernel, grid, block)
    launch(old, 3)
    launch(new, 3)
    assert set(launch._array_params[0]) == {id(old), id(new)}
    launchers.forget([old])
    assert set(launch._array_params[0]) == {id(new)}
    launch(old, 3)                                      # converted again when it comes back
    assert set(launch._array_params[0]) == {id(old), id(new)}


@pytest.mark.gpu
def test_prepared_launch_follows_every_change_of_its_scalars(gpu_backend):
    """A scalar equal to its last value reuses its conversion; any other value (a new number, the
    other zero, another class) is converted again."""
    n = 64
    x = cuda.to_device(np.ones(n))
    stream = cuda.stream()
    _axpb[1, 64, stream](cuda.to_device(np.zeros(n)), x, 1.0, 0.0)
    stream.synchronize()
    launch = PreparedKernel(_axpb, 1, 64, stream)
    out = cuda.to_device(np.zeros(n))
    for a, b in ((2.0, 1.0), (2.0, 1.0), (2.0, 5.0), (0.0, -0.0), (-0.0, -0.0), (3, 1.0),
                 (np.float64(3.5), np.float32(0.25)), (2.0, 1.0)):
        launch(out, x, a, b)
        stream.synchronize()
        got = out.copy_to_host()
        np.testing.assert_array_equal(got, np.full(n, float(a) * 1.0 + float(b)))
        # the sign of a zero result follows the zeros passed: -0.0 * 1 + -0.0 is -0.0
        assert np.signbit(got[0]) == np.signbit(float(a) * 1.0 + float(b))
