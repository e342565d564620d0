"""The rng package on the CUDA backend: the xoroshiro128+ kernel against numba's own states and a
plain Python step, exact sums and histograms at sizes around block edges, statistics with fixed
seeds, the races that a real GPU shows, π, and cuRAND's Philox when nvmath-python is there.
Tiny sizes under the simulator (one Python thread per CUDA thread)."""
import math

import numba
import numpy as np
import pytest

from kernels.backend import simulator_enabled
from kernels.rng import montecarlo as M
from kernels.rng import philox as P
from kernels.rng import renderer as rr
from kernels import wide_access as V
from kernels.rng import xoroshiro as X
from kernels.rng.request import (GenerateRequest, HistogramRequest, MonteCarloRequest,
                                 ReduceRequest)

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


def _steps(s0, s1):
    """One xoroshiro128+ step of every thread at once (uint64 arrays wrap silently)."""
    out = s0 + s1
    s1 = s1 ^ s0
    s0 = ((s0 << np.uint64(55)) | (s0 >> np.uint64(9))) ^ s1 ^ (s1 << np.uint64(14))
    s1 = (s1 << np.uint64(36)) | (s1 >> np.uint64(28))
    return out, s0, s1


def _expected_xoroshiro(seed, threads, n, dtype, normal):
    """What the kernel must write: group q of 16 bytes (elements 4q..4q+3 for float32, 2q, 2q+1
    for float64) is thread q % threads's (q // threads)-th group, two draws each, from numba's
    initial states."""
    states = X.initial_states(seed, threads)
    s0, s1 = states["s0"].astype(np.uint64), states["s1"].astype(np.uint64)
    first = X.reference_stream(int(s0[0]), int(s1[0]), 4)    # the vector step is the real one
    width = 4 if dtype == "float32" else 2
    groups = -(-n // width)
    rounds = -(-groups // threads)
    out = np.empty((rounds * threads, width))
    for r in range(rounds):
        d0, s0, s1 = _steps(s0, s1)
        d1, s0, s1 = _steps(s0, s1)
        if r == 0:
            assert [int(d0[0]), int(d1[0])] == first[:2]
        if dtype == "float32":   # (u, v) pairs: the high and the low 24 bits of one draw
            pairs = [((d >> np.uint64(40)) * 2.0**-24,
                      ((d >> np.uint64(16)) & np.uint64(0xFFFFFF)) * 2.0**-24) for d in (d0, d1)]
        else:                    # one pair from two draws, 53 bits each
            pairs = [((d0 >> np.uint64(11)) * 2.0**-53, (d1 >> np.uint64(11)) * 2.0**-53)]
        cols = []
        for u, v in pairs:
            if normal:
                rad = np.sqrt(-2.0 * np.log(1.0 - u))
                u, v = rad * np.cos(2 * np.pi * v), rad * np.sin(2 * np.pi * v)
            cols += [u, v]
        out[r * threads:(r + 1) * threads] = np.stack(cols, axis=1)
    return out.reshape(-1)[:n]


# ---- generation ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dist", ["uniform", "normal"])
def test_xoroshiro_kernel_writes_numbas_streams(gpu, simulated, dtype, dist):
    width = 4 if dtype == "float32" else 2
    threads = gpu.generate(GenerateRequest("xoroshiro128p", dist, dtype, 1, SEED)).streams
    # partial last groups, fewer groups than threads, and several rounds of every thread
    sizes = [1, 2, 3, 31, 33, 100] if simulated else [1, 2, 3, 127, 129, 1025, 2**16 + 3]
    sizes += [threads * width - 1, 3 * threads * width + width + 1]
    for n in sizes:
        res = gpu.generate(GenerateRequest("xoroshiro128p", dist, dtype, n, SEED, want_values=True))
        assert res.streams == threads
        want = _expected_xoroshiro(SEED, threads, n, dtype, dist == "normal")
        if dist == "uniform":
            np.testing.assert_array_equal(res.values, want.astype(dtype))
        else:   # the device's log and sincospi may differ from the host's in the last bits
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
    # random rounding along the strategy's longest chain of additions, never more than along all
    # n of them (values ≥ 0, so Σ|x| is the sum): λ·√n·u·Σx with λ = 6, u the unit roundoff
    u = float(np.finfo(dtype).eps) / 2
    # (strategies whose chain is all n additions sit exactly on the limit: allow its last bits)
    limit = math.expm1(6 * math.sqrt(n) * u + n * u * u) * res.reference
    assert 0 < res.error_bound <= limit * (1 + 1e-9)
    assert abs(res.error) <= res.error_bound and res.within_bound and not res.stagnated, res
    if res.deterministic:
        assert gpu.reduce(ReduceRequest(strategy, n, dtype, SEED)).value == res.value


@REAL_GPU_ONLY
def test_atomic_float32_sum_stagnates_at_2_to_the_24(gpu):
    # 2^26 uniform values add up to about 2^25, but from 2^24 on float32 numbers are 2 apart and
    # every value (< 1) added to the one accumulator is rounded away
    res = gpu.reduce(ReduceRequest("atomic", 2**26, "float32", SEED))
    assert res.value == 2.0**24 and res.stagnated and res.within_bound is False, res
    assert abs(res.error) > 100 * res.error_bound and "stagnated" in res.note
    tree = gpu.reduce(ReduceRequest("two-pass", 2**26, "float32", SEED))
    assert tree.within_bound and not tree.stagnated and tree.error_bound < res.error_bound


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


def _allocations_of_a_repeat(gpu):
    """Pool allocations made by a second round of the same jobs (the first allocates)."""
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
    return gpu.pool.allocations - before


def test_repeated_jobs_allocate_nothing(gpu):
    # every device and pinned buffer of these jobs comes from the renderer's pool
    assert _allocations_of_a_repeat(gpu) == 0


def test_kernels_of_different_occupancy_share_no_buffer(gpu, monkeypatch):
    # on a GPU the generator and the Monte Carlo kernel fit different numbers of resident threads
    # (their registers differ); the simulator gives every kernel the same grid unless told
    from kernels.rng import grid
    real = grid.resident_blocks
    monkeypatch.setattr(grid, "resident_blocks", lambda dispatcher, args, tpb=None:
                        real(dispatcher, args, tpb) + (1 if dispatcher is M.gpu_kernel() else 0))
    assert _allocations_of_a_repeat(rr.Renderer(gpu.backend)) == 0


def test_warmup_compiles_the_defaults(gpu):
    assert gpu.warmup() >= 0.0


# ---- the bench's write and read ceilings --------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fill_and_read_kernels_cover_every_element(gpu, simulated, dtype):
    from numba import cuda

    from kernels.rng import ceilings as C
    from kernels.rng import grid
    width = 4 if dtype == "float32" else 2
    nb = np.dtype(dtype).type
    threads = grid.resident_blocks(C.fill_kernel(dtype), (cuda.device_array(8, dtype), 8, nb(0)))
    threads *= grid.threads_per_block()
    sizes = [1, 2, 3, 5, 33] + [threads * width + k for k in (-1, 0, 1)] + \
        [4 * threads * width + 3 * width + 1]
    for n in sizes:
        for vector in (True, False):
            buf = cuda.to_device(np.full(n + 3, -1.0, dtype))   # three past the end stay -1
            kernel = C.fill_kernel(dtype, vector)
            blocks = C.launch_blocks(kernel, (buf, n, nb(C.FILL_VALUE)), n)
            kernel[blocks, grid.threads_per_block()](buf, n, nb(C.FILL_VALUE))
            got = buf.copy_to_host()
            assert (got[:n] == C.FILL_VALUE).all() and (got[n:] == -1.0).all(), (n, vector)
        data = np.arange(1, n + 1, dtype=dtype) % 5          # small integers: any order is exact
        x = cuda.to_device(data)
        kernel = C.read_kernel(numba.from_dtype(np.dtype(dtype)), dtype)
        partials = cuda.to_device(np.zeros(4 * threads, dtype))
        blocks = C.launch_blocks(kernel, (x, n, partials), n)
        kernel[blocks, grid.threads_per_block()](x, n, partials)
        assert partials.copy_to_host().sum() == data.sum(), n
    if not simulated:
        assert not V.aligned(cuda.device_array(8, dtype)[1:])


def test_ceilings_are_measured_or_none(gpu, simulated):
    from kernels.rng import ceilings as C
    got = C.measure(gpu.backend, "float32", 4096 if simulated else 2**24, repeats=2)
    assert set(got) == {"fill-vector", "fill-scalar", "write", "read"}
    if simulated:
        assert all(v is None for v in got.values())
    else:
        assert got["write"] == max(got["fill-vector"], got["fill-scalar"]) and got["read"] > 0


def test_gpu_bench_rows_name_their_ceilings(gpu, simulated, monkeypatch):
    if not simulated:
        pytest.skip("the real GPU bench runs at full size in tools/gpu_rng.sh")
    from kernels.rng import bench as rng_bench
    monkeypatch.setattr(rng_bench, "SIM_N", 2**7)
    monkeypatch.setattr(rng_bench, "MC_SIM_N", 2**7)
    monkeypatch.setattr(rng_bench, "GENERATORS", ("xoroshiro128p",))
    monkeypatch.setattr(rng_bench, "GPU_REDUCE_STRATEGIES", ("atomic", "two-pass"))
    # the shared copy probe simulates thousands of threads: its lines are not what is checked
    monkeypatch.setattr(rng_bench, "references", lambda backend: {"d2d-copy": None})
    backend = gpu.backend
    rows = (rng_bench.bench_generate(backend, 1) + rng_bench.bench_reduce(backend, 1) +
            rng_bench.bench_histogram(backend, 1) + rng_bench.bench_monte_carlo(backend, 1))
    by = {(r["workload"], r["variant"]): r["metrics"] for r in rows}
    gen = by[("rng-generate", "xoroshiro128p/uniform/float32")]
    assert {"% of write bw", "% of d2d copy"} <= set(gen) and "fill GB/s" in gen
    two = by[("rng-reduce", "two-pass/float32")]
    assert {"% of read bw", "% of d2d copy"} <= set(two) and two["within bound"] is True
    assert "% of read bw" in by[("rng-histogram", "shared/256 bins")]
    mc = by[("rng-monte-carlo", "fused-xoroshiro128p")]
    assert mc["int ops/sample"] == 22 and "integer ALU" in mc["bound"]
    # nothing is timed under the simulator, so no percentage is made up
    assert gen["% of write bw"] is None and two["% of read bw"] is None
    assert mc["% of int throughput"] is None


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


_LOAD_TWICE = """
import sys
sys.path.insert(0, sys.argv[1])
from numba import types, from_dtype
from kernels.rng import grid, histogram, montecarlo, reduce
from kernels.rng import xoroshiro as X
st = from_dtype(X.state_dtype())[::1]
f32 = types.float32[::1]
want = [(X.generate_kernel("float32", False), (f32, types.int64, types.int64, st, st)),
        (grid._gate, (types.int64,)),
        (montecarlo.gpu_kernel(), (types.int64, st, st, types.int64[::1])),
        (reduce.exact_kernel(), (f32, types.int64, types.float64, types.int64[::1]))]
want += [(k, (f32, types.int64, types.float32, types.float32, types.int64[::1]))
         for k in histogram.gpu_kernels(128).values()]
want += [(k, (f32, types.int64, f32)) for k in reduce.gpu_kernels(types.float32).values()]
for k, sig in want:
    k.compile(sig)
print(len(want), sum(sum(k.stats.cache_hits.values()) for k, _ in want),
      sum(sum(k.stats.cache_misses.values()) for k, _ in want))
"""


def test_the_random_numbers_kernels_come_from_the_disk_at_the_next_start(gpu, simulated, tmp_path):
    """A random-numbers run waited for these to compile at every start; as twins of module-level
    code (not a factory's closures) numba's disk cache serves them all."""
    if simulated:
        pytest.skip("the simulator compiles nothing to cache")
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", _LOAD_TWICE, root], cwd=root, env=env,
                           capture_output=True, text=True, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    n = runs[0].stdout.split()[0]
    assert runs[0].stdout.split() == [n, "0", n]        # compiled and saved
    assert runs[1].stdout.split() == [n, n, "0"]        # every one loaded, nothing compiled
