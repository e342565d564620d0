"""The rng package on the CUDA backend: the xoroshiro128+ kernel against numba's own states and a
plain Python step, exact sums and histograms at sizes around block edges, statistics with fixed
seeds, the races that a real GPU shows, π, and cuRAND's Philox when nvmath-python is there.
Tiny sizes under the simulator (one Python thread per CUDA thread)."""
import math

import numpy as np
import pytest

from kernels.rng import philox as P
from kernels.rng import renderer as rr
from kernels.rng import xoroshiro as X
from kernels.rng.request import (GenerateRequest, HistogramRequest, MonteCarloRequest,
                                 ReduceRequest)
from kernels.backend import simulator_enabled

SIMULATED = simulator_enabled()
pytestmark = pytest.mark.gpu

SEED = 314159
EXACT_STRATEGIES = ("atomic", "warp-shuffle", "two-pass", "numba-reduce")
REAL_GPU_ONLY = pytest.mark.skipif(SIMULATED, reason="numba's CUDA simulator runs threads one at "
                                   "a time, so a race may lose nothing there: it needs a real GPU")


@pytest.fixture(scope="module")
def gpu():
    from kernels.backend import BackendUnavailable, resolve
    try:
        return rr.Renderer(resolve("cuda"))
    except BackendUnavailable as exc:
        pytest.skip(f"no CUDA backend here: {exc}")


@pytest.fixture
def edge_sizes(simulated):
    # around the block and warp edges (blocks of 16 threads under the simulator, 256 on a GPU)
    return [1, 2, 15, 16, 17, 33, 100] if simulated else \
        [1, 2, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 2**20 + 1]


def _values(renderer, **kw):
    return renderer.generate(GenerateRequest(want_values=True, **kw)).values.copy()


def _expected_xoroshiro(seed, threads, n, dtype, normal):
    """What the kernel must write: pair p of elements (2p, 2p+1) is thread p % threads's
    (p // threads)-th draw (two draws for float64), from numba's initial states."""
    states = X.initial_states(seed, threads)
    pairs = (n + 1) // 2
    per_pair = 1 if dtype == "float32" else 2
    out = np.empty(2 * pairs)
    for t in range(min(threads, pairs)):
        mine = range(t, pairs, threads)
        draws = X.reference_stream(int(states[t]["s0"]), int(states[t]["s1"]), per_pair * len(mine))
        for j, p in enumerate(mine):
            if dtype == "float32":
                r = draws[j]
                u, v = (r >> 40) * 2.0**-24, ((r >> 16) & 0xFFFFFF) * 2.0**-24
            else:
                u, v = (draws[2 * j] >> 11) * 2.0**-53, (draws[2 * j + 1] >> 11) * 2.0**-53
            if normal:
                rad = math.sqrt(-2.0 * math.log(1.0 - u))
                u, v = rad * math.cos(2 * math.pi * v), rad * math.sin(2 * math.pi * v)
            out[2 * p], out[2 * p + 1] = u, v
    return out[:n]


# ---- generation ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dist", ["uniform", "normal"])
def test_xoroshiro_kernel_writes_numbas_streams(gpu, simulated, dtype, dist):
    sizes = [1, 31, 33, 100] if simulated else [1, 127, 129, 1025, 2**16 + 3]
    for n in sizes:
        res = gpu.generate(GenerateRequest("xoroshiro128p", dist, dtype, n, SEED, want_values=True))
        want = _expected_xoroshiro(SEED, res.streams, n, dtype, dist == "normal")
        if dist == "uniform":
            np.testing.assert_array_equal(res.values, want.astype(dtype))
        else:   # the device's log, cos and sin may differ from the host's in the last bits
            rtol = 2e-5 if dtype == "float32" else 1e-12
            np.testing.assert_allclose(res.values, want, rtol=rtol, atol=rtol)
        np.testing.assert_array_equal(res.head, res.values[:16])
        assert res.where == "device" and res.bytes_written == n * np.dtype(dtype).itemsize


@pytest.mark.parametrize("generator", ["xoroshiro128p", "numpy"])
def test_same_seed_same_numbers_on_the_gpu(gpu, generator):
    kw = dict(generator=generator, n=1000, seed=SEED)
    a = _values(gpu, **kw)
    _values(gpu, **dict(kw, seed=SEED + 1, distribution="normal"))    # something in between
    np.testing.assert_array_equal(a, _values(gpu, **kw))
    assert not np.array_equal(a, _values(gpu, **dict(kw, seed=SEED + 1)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_numbers_are_distributed_right(gpu, simulated, dtype):
    n = 4096 if simulated else 2**22
    u = _values(gpu, n=n, dtype=dtype, seed=SEED).astype(np.float64)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    assert abs(u.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / n)
    z = _values(gpu, n=n, dtype=dtype, distribution="normal", seed=SEED).astype(np.float64)
    assert np.isfinite(z).all()
    assert abs(z.mean()) < 5 / math.sqrt(n) and abs(z.var() - 1.0) < 5 * math.sqrt(2 / n)
    assert abs(np.mean(np.abs(z) > 2.0) - 0.0455) < 5 * math.sqrt(0.0455 * 0.9545 / n)


def test_numpy_then_copy_is_the_host_path(gpu, simulated):
    res = gpu.generate(GenerateRequest("numpy", "uniform", "float64", 1000, 5, want_values=True))
    np.testing.assert_array_equal(res.values, np.random.default_rng(5).random(1000))
    assert "copied to the device" in res.where
    assert res.timings.bytes["h2d"] == 8000
    assert res.timings.phases_ms["host"] > 0
    if not simulated:
        assert res.generate_ms > res.timings.detail["copy-in"] > 0


# ---- reductions ------------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_sum_of_integers_is_exact_at_block_edges(gpu, edge_sizes, strategy):
    for n in edge_sizes:
        data = (np.arange(n) % 7).astype(np.float32)   # every partial sum is a small integer
        res = gpu.reduce(ReduceRequest.from_data(data, strategy))
        exact = int((np.arange(n) % 7).sum())
        assert res.value == exact and res.error == 0.0, (strategy, n)
        assert res.reference_kind == "fsum" and res.timings.bytes["h2d"] == 4 * n


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_generated_sums_against_the_exact_sum(gpu, simulated, strategy, dtype):
    n = 1000 if simulated else 2**22 + 3
    res = gpu.reduce(ReduceRequest(strategy, n, dtype, SEED))
    values = _values(gpu, n=n, dtype=dtype, seed=SEED)
    assert res.reference_kind == "exact"
    assert res.reference == math.fsum(values.astype(np.float64))   # the device's integer pass
    assert abs(res.relative_error) < (1e-5 if dtype == "float32" else 1e-13)
    if res.deterministic:
        assert gpu.reduce(ReduceRequest(strategy, n, dtype, SEED)).value == res.value


def test_racy_strategies_run(gpu, simulated):
    n = 200 if simulated else 2**12
    res = gpu.reduce(ReduceRequest("racy", n, "float32", SEED))
    assert np.isfinite(res.value) and not res.deterministic
    hist = gpu.histogram(HistogramRequest("racy", n, 16, seed=SEED))
    assert 0 <= hist.lost <= n
    if simulated:
        assert "simulator" in res.note and "simulator" in hist.note


@REAL_GPU_ONLY
def test_racy_sum_is_wrong_on_a_real_gpu(gpu):
    res = gpu.reduce(ReduceRequest("racy", 2**24, "float32", SEED))
    # lost updates, not rounding: a float32 sum of 2^24 values is good to about 1e-6
    assert abs(res.relative_error) > 1e-3, res


@REAL_GPU_ONLY
def test_racy_histogram_loses_counts_on_a_real_gpu(gpu):
    res = gpu.histogram(HistogramRequest("racy", 2**24, 16, seed=SEED))
    assert res.lost > 0, res
    assert gpu.histogram(HistogramRequest("shared", 2**24, 16, seed=SEED)).lost == 0


# ---- histograms ------------------------------------------------------------------------------------
def test_shared_histogram_matches_numpy_at_block_edges(gpu, edge_sizes):
    from kernels.rng import histogram as H
    rng = np.random.default_rng(3)
    for n in edge_sizes:
        data = rng.normal(0.5, 0.4, n).astype(np.float32)   # some below 0, some above 1
        res = gpu.histogram(HistogramRequest.from_data(data, 0.0, 1.0, bins=10, strategy="shared"))
        lo, scale = H.scale_for(0.0, 1.0, 10, np.float32)
        want = H.numpy_histogram(data, lo, scale, 10)
        np.testing.assert_array_equal(res.counts, want[:10])
        assert (res.underflow, res.overflow) == (want[10], want[11])
        assert res.total == n and res.lost == 0


@pytest.mark.parametrize("dist", ["uniform", "normal"])
def test_generated_histogram_counts_every_value(gpu, simulated, dist):
    n = 1000 if simulated else 2**22 + 1
    res = gpu.histogram(HistogramRequest("shared", n, 256, distribution=dist, seed=SEED))
    assert res.total == n and res.lost == 0 and res.counts.shape == (256,)
    if dist == "uniform":
        assert res.underflow == res.overflow == 0


# ---- Monte Carlo -----------------------------------------------------------------------------------
def test_monte_carlo_on_the_gpu(gpu, simulated):
    n = 2000 if simulated else 2**28 + 7
    res = gpu.monte_carlo(MonteCarloRequest(n, SEED))
    assert abs(res.error) < 5 * res.standard_error
    assert gpu.monte_carlo(MonteCarloRequest(n, SEED)).inside == res.inside
    assert gpu.monte_carlo(MonteCarloRequest(n, SEED + 1)).inside != res.inside


def test_monte_carlo_follows_the_reference_stream(gpu, simulated):
    n = 100 if simulated else 10_000
    res = gpu.monte_carlo(MonteCarloRequest(n, SEED))
    threads = res.streams
    states = X.initial_states(SEED, threads)
    inside = 0
    for t in range(min(threads, n)):
        mine = len(range(t, n, threads))
        for r in X.reference_stream(int(states[t]["s0"]), int(states[t]["s1"]), mine):
            x, y = 2 * (r >> 40) + 1, 2 * ((r >> 16) & 0xFFFFFF) + 1
            inside += x * x + y * y <= 2**50
    assert res.inside == inside


# ---- timings and buffers ---------------------------------------------------------------------------
def test_timings_are_measured_or_none(gpu, simulated):
    req = ReduceRequest("two-pass", 4096, "float32", SEED)
    gpu.reduce(req)
    res = gpu.reduce(req)
    assert set(res.timings.detail) == {"reduce"} and res.timings.bytes == {"h2d": 0, "d2h": 4}
    if simulated:
        assert res.reduce_ms is None and res.gbs is None and res.timings.phases_ms["kernel"] is None
    else:
        assert res.reduce_ms > 0 and res.gbs > 0 and res.timings.phases_ms["compile"] is None


def test_repeated_jobs_allocate_nothing(gpu):
    jobs = [lambda: gpu.generate(GenerateRequest(n=3000, seed=SEED)),
            lambda: gpu.reduce(ReduceRequest("warp-shuffle", 3000, "float32", SEED)),
            lambda: gpu.reduce(ReduceRequest("two-pass", 3000, "float32", SEED)),
            lambda: gpu.histogram(HistogramRequest("shared", 3000, 64, seed=SEED)),
            lambda: gpu.monte_carlo(MonteCarloRequest(3000, SEED))]
    for job in jobs:
        job()
    before = gpu.pool.allocations
    for job in jobs:
        job()
    assert gpu.pool.allocations == before


def test_warmup_compiles_the_defaults(gpu):
    assert gpu.warmup() >= 0.0


# ---- cuRAND Philox through nvmath-python ----------------------------------------------------------
@pytest.fixture
def philox(gpu):
    why = P.problem(gpu.backend)
    if why:
        pytest.skip(f"cuRAND Philox cannot run here: {why}")
    return gpu


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_philox_numbers(philox, dtype):
    n = 2**22 + 3      # not a whole number of groups of four
    u = _values(philox, generator="philox4_32_10", n=n, dtype=dtype, seed=SEED).astype(np.float64)
    assert u.min() > 0.0 and u.max() <= 1.0          # cuRAND's uniforms are in (0, 1]
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    z = _values(philox, generator="philox4_32_10", distribution="normal", n=n, dtype=dtype,
                seed=SEED).astype(np.float64)
    assert abs(z.mean()) < 5 / math.sqrt(n) and abs(z.var() - 1.0) < 5 * math.sqrt(2 / n)
    again = _values(philox, generator="philox4_32_10", n=n, dtype=dtype, seed=SEED)
    np.testing.assert_array_equal(u, again.astype(np.float64))


def test_philox_state_is_held_in_registers(philox):
    res = philox.generate(GenerateRequest("philox4_32_10", n=1000, seed=SEED))
    assert "device memory" not in res.note, res.note
