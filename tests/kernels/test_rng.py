"""The rng package on the CPU: request validation, what can run where, the xoroshiro128+ step
against a plain Python one, the CPU twins' numbers (seeded, deterministic, distributed as they
should be), exact sums, histograms and π. The GPU paths are in test_rng_gpu.py."""
import math

import numba
import numpy as np
import pytest

from kernels import buffers
from kernels.backend import Backend
from kernels.rng import bench as rng_bench
from kernels.rng import histogram as H
from kernels.rng import monte_carlo_job
from kernels.rng import montecarlo as M
from kernels.rng import reduce as R
from kernels.rng import renderer as rr
from kernels.rng import workspace as rng_workspace
from kernels.rng import xoroshiro as X
from kernels.rng.request import (GenerateRequest, HistogramRequest, MonteCarloRequest,
                                 ReduceRequest, StrategyUnavailable)

SEED = 20240611


@pytest.fixture(scope="module")
def cpu():
    return rr.Renderer(Backend("cpu"))


def _values(renderer, **kw):
    return renderer.generate(GenerateRequest(want_values=True, **kw)).values


# ---- validation: plain words, before anything is allocated -------------------------------------
@pytest.mark.parametrize("n, words", [(0, "at least 1"), (-5, "at least 1"),
                                      (2.5, "whole number"), (True, "whole number"),
                                      ("10", "whole number"), (2**45, "too large")])
def test_bad_n_is_refused_in_plain_words(n, words):
    for req in (GenerateRequest(n=n), ReduceRequest(n=n), HistogramRequest(n=n),
                MonteCarloRequest(n=n)):
        with pytest.raises(ValueError, match=words):
            req.validate()


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(ValueError, match="xoroshiro128p, philox4_32_10, numpy"):
        GenerateRequest(generator="mersenne").validate()
    with pytest.raises(ValueError, match="uniform, normal"):
        GenerateRequest(distribution="cauchy").validate()
    with pytest.raises(ValueError, match="float32, float64"):
        GenerateRequest(dtype="int8").validate()
    with pytest.raises(ValueError, match="racy, atomic, warp-shuffle, two-pass"):
        ReduceRequest(strategy="magic").validate()
    with pytest.raises(ValueError, match="shared, racy, cpu-numba, numpy"):
        HistogramRequest(strategy="magic").validate()


@pytest.mark.parametrize("req, words", [
    (GenerateRequest(seed=-1), "seed"), (GenerateRequest(seed=2**64), "seed"),
    (HistogramRequest(bins=0), "bins"), (HistogramRequest(bins=10**6), "bins"),
    (HistogramRequest(lo=1.0, hi=1.0), "lo < hi"), (HistogramRequest(lo=float("nan")), "lo < hi"),
    (ReduceRequest(n=3, data=np.zeros(4, np.float32)), "length"),
    (ReduceRequest(n=4, dtype="float64", data=np.zeros(4, np.float32)), "dtype"),
    (ReduceRequest(n=4, data=np.zeros(4, np.int32)), "float32 or float64"),
    (ReduceRequest(n=4, data=np.zeros((2, 2), np.float32)), "one-dimensional")])
def test_other_bad_fields(req, words):
    with pytest.raises(ValueError, match=words):
        req.validate()


def test_numpy_dtypes_are_accepted():
    GenerateRequest(dtype=np.float64).validate()
    assert GenerateRequest(dtype=np.dtype("float32")).np_dtype == np.float32


def test_too_large_for_memory_is_refused_before_any_allocation(monkeypatch, cpu):
    monkeypatch.setattr(buffers, "host_available_bytes", lambda: 2**20)
    before = cpu.pool.allocations
    with pytest.raises(ValueError, match=r"needs 4\.0 MiB of host memory but only 1\.0 MiB"):
        cpu.generate(GenerateRequest(n=2**20))
    with pytest.raises(ValueError, match="host memory"):
        cpu.reduce(ReduceRequest(n=2**20))
    assert cpu.pool.allocations == before


def test_too_large_for_the_gpu_is_refused(monkeypatch):
    gpu = Backend("cuda", device="a test GPU")
    monkeypatch.setattr(buffers, "device_free_bytes", lambda: (2**30, 2**31))
    with pytest.raises(ValueError, match=r"needs 4\.0 GiB of GPU memory but only 1\.0 GiB"):
        GenerateRequest(n=2**30, backend=gpu).validate()
    with pytest.raises(ValueError, match="GPU memory"):
        HistogramRequest(n=2**30).validate(gpu)
    GenerateRequest(n=2**20).validate(gpu)   # fits


# ---- what can run where ----------------------------------------------------------------------------
def test_available_lists_everything_with_reasons():
    cpu, gpu = Backend("cpu"), Backend("cuda", simulated=True, device="sim")
    on_cpu = rr.available(cpu, "reduce")
    assert on_cpu["cpu-numba"] == on_cpu["numpy"] == ""
    assert "cuda backend" in on_cpu["warp-shuffle"] and "cuda backend" in on_cpu["racy"]
    on_gpu = rr.available(gpu, "histogram")
    assert on_gpu["shared"] == "" and "cpu backend" in on_gpu["numpy"]
    gens = rr.available(cpu, "generate")
    assert list(gens) == ["xoroshiro128p", "philox4_32_10", "numpy"]
    assert gens["xoroshiro128p"] == "" and "GPU" in gens["philox4_32_10"]
    assert "simulator" in rr.available(gpu, "generate")["philox4_32_10"]
    everything = rr.available(cpu)
    assert "reduce/two-pass" in everything and "monte-carlo/fused-xoroshiro128p" in everything
    with pytest.raises(ValueError, match="generate, reduce, histogram, monte-carlo"):
        rr.available(cpu, "sort")


def test_a_strategy_of_another_backend_says_what_to_pick(cpu):
    with pytest.raises(StrategyUnavailable, match="cpu backend choose one of: cpu-numba, numpy"):
        cpu.reduce(ReduceRequest(strategy="two-pass", n=10))
    with pytest.raises(StrategyUnavailable, match="xoroshiro128p, numpy"):
        cpu.generate(GenerateRequest(generator="philox4_32_10", n=10))


def test_missing_nvmath_is_a_reason_not_a_crash(monkeypatch):
    from kernels.rng import philox
    monkeypatch.setitem(philox._failures, "import", "nvmath-python is not installed (nvmath)")
    real_gpu = Backend("cuda", device="a test GPU")
    assert "not installed" in rr.available(real_gpu, "generate")["philox4_32_10"]


# ---- the generator ---------------------------------------------------------------------------------
def test_the_compiled_step_is_xoroshiro128_plus():
    s0, s1 = np.uint64(0x0123456789ABCDEF), np.uint64(0xFEDCBA9876543210)
    expected = X.reference_stream(int(s0), int(s1), 5)
    step = X.CPU["next"]
    for want in expected:
        got, s0, s1 = step(s0, s1)
        assert int(got) == want
    # the simulator's Python-integer step is the same function
    a, b = 0x0123456789ABCDEF, 0xFEDCBA9876543210
    for want in expected:
        got, a, b = X._next_simulated(a, b)
        assert int(got) == want


def test_cpu_twin_chunks_follow_the_reference_stream(cpu):
    n = X.CPU_CHUNK + 7
    v32 = _values(cpu, n=n, seed=SEED)
    v64 = _values(cpu, n=n, seed=SEED, dtype="float64")
    for chunk, first in ((0, 0), (1, X.CPU_CHUNK)):
        s0, s1 = X.chunk_state(np.uint64(SEED), chunk)
        draws = X.reference_stream(int(s0), int(s1), 6)
        want32 = [w for r in draws[:3] for w in ((r >> 40) * 2.0**-24, ((r >> 16) & 0xFFFFFF) * 2.0**-24)]
        np.testing.assert_array_equal(v32[first:first + 6], np.array(want32, np.float32))
        want64 = [(r >> 11) * 2.0**-53 for r in draws]
        np.testing.assert_array_equal(v64[first:first + 6], np.array(want64))


@pytest.mark.parametrize("dist", ["uniform", "normal"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_same_seed_same_numbers_for_any_thread_count(cpu, dist, dtype):
    kw = dict(n=3 * X.CPU_CHUNK + 5, distribution=dist, dtype=dtype, seed=SEED)
    a = _values(cpu, **kw).copy()
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        b = _values(cpu, **kw).copy()
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.dtype(dtype)
    assert not np.array_equal(a, _values(cpu, **dict(kw, seed=SEED + 1)))


def _normal_cdf(x):
    return 0.5 * (1.0 + np.vectorize(math.erf)(np.asarray(x) / math.sqrt(2.0)))


@pytest.mark.parametrize("generator", ["xoroshiro128p", "numpy"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_numbers_look_uniform(cpu, generator, dtype):
    n = 2**20
    v = _values(cpu, generator=generator, n=n, dtype=dtype, seed=SEED).astype(np.float64)
    assert v.min() >= 0.0 and v.max() < 1.0
    sd_mean = math.sqrt(1 / 12 / n)
    assert abs(v.mean() - 0.5) < 5 * sd_mean
    assert abs(v.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / n)    # Var(U²)-based bound
    counts = np.bincount((v * 256).astype(int), minlength=256)
    chi2 = ((counts - n / 256) ** 2 / (n / 256)).sum()
    assert abs(chi2 - 255) < 6 * math.sqrt(2 * 255)
    lag1 = np.corrcoef(v[:-1], v[1:])[0, 1]
    assert abs(lag1) < 5 / math.sqrt(n)


@pytest.mark.parametrize("generator", ["xoroshiro128p", "numpy"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_numbers_look_normal(cpu, generator, dtype):
    n = 2**20
    v = _values(cpu, generator=generator, distribution="normal", n=n, dtype=dtype,
                seed=SEED).astype(np.float64)
    assert np.isfinite(v).all()
    assert abs(v.mean()) < 5 / math.sqrt(n)
    assert abs(v.var() - 1.0) < 5 * math.sqrt(2 / n)
    edges = np.linspace(-4, 4, 41)
    observed = np.histogram(v, bins=edges)[0]
    expected = n * np.diff(_normal_cdf(edges))
    chi2 = ((observed - expected) ** 2 / expected).sum()
    assert chi2 < 39 + 6 * math.sqrt(2 * 39)
    # Box–Muller's two values of a pair are independent
    assert abs(np.corrcoef(v[0::2], v[1::2])[0, 1]) < 5 / math.sqrt(n / 2)


def test_generate_result_and_timings(cpu):
    res = cpu.generate(GenerateRequest(n=1000, seed=SEED))
    assert res.values is None and res.head.shape == (16,) and res.where == "host"
    assert res.bytes_written == 4000 and res.streams == 1
    assert res.generate_ms > 0 and res.samples_per_s > 0 and res.gbs > 0
    assert res.timings.detail["generate"] == res.generate_ms
    np.testing.assert_array_equal(res.head, _values(cpu, n=1000, seed=SEED)[:16])
    assert cpu.generate(GenerateRequest(n=3, seed=SEED)).head.shape == (3,)


def test_numpy_generator_is_numpys_own(cpu):
    v = _values(cpu, generator="numpy", n=100, seed=7)
    np.testing.assert_array_equal(v, np.random.default_rng(7).random(100, dtype=np.float32))


# ---- reductions ------------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["cpu-numba", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_of_a_known_integer_sequence_is_exact(cpu, strategy, dtype):
    n = 3 * 2**16 + 11
    data = (np.arange(n) % 7).astype(dtype)           # every partial sum is a small integer
    res = cpu.reduce(ReduceRequest.from_data(data, strategy))
    exact = sum(i % 7 for i in range(n))
    assert res.value == exact and res.reference == exact and res.error == 0.0
    assert res.reference_kind == "fsum" and res.bytes_read == n * np.dtype(dtype).itemsize


def test_the_exact_reference_of_generated_data_is_exact(cpu):
    n = 2**18 + 3
    for dtype in ("float32", "float64"):
        res = cpu.reduce(ReduceRequest("numpy", n, dtype, SEED))
        values = _values(cpu, n=n, dtype=dtype, seed=SEED)
        assert res.reference_kind == "exact"
        assert res.reference == math.fsum(values.astype(np.float64))
        assert res.error == pytest.approx(float(res.value) - math.fsum(values.astype(np.float64)),
                                          abs=1e-9)


def test_float32_sums_report_their_rounding_error(cpu):
    n = 2**22
    r32 = cpu.reduce(ReduceRequest("cpu-numba", n, "float32", SEED))
    r64 = cpu.reduce(ReduceRequest("cpu-numba", n, "float64", SEED))
    assert r32.error != 0.0 and abs(r32.relative_error) < 1e-5
    assert abs(r64.relative_error) < 1e-13 and abs(r64.error) < abs(r32.error)
    assert r32.deterministic and r32.reduce_ms > 0 and r32.gbs > 0


def test_cpu_sums_stay_within_their_rounding_bound(cpu):
    n = 2**20 + 5
    for strategy in ("cpu-numba", "numpy"):
        res = cpu.reduce(ReduceRequest(strategy, n, "float32", SEED))
        # the chain of a chunked or pairwise sum is far shorter than n, so is its bound
        whole = R.rounding_bound(n, "float32", res.reference)
        assert 0 < res.error_bound < whole / 4, strategy
        assert abs(res.error) <= res.error_bound and res.within_bound and not res.stagnated
    data = np.array([3.0, -1.0, 0.5], np.float64)
    res = cpu.reduce(ReduceRequest.from_data(data, "numpy"))
    assert res.error == 0.0 and res.error_bound == R.rounding_bound(R.longest_chain("numpy", 3),
                                                                     "float64", 4.5)


def test_longest_chains_follow_the_order_of_additions():
    tpb, blocks = 256, 100
    threads = tpb * blocks
    n = 40 * threads + 1
    own = 11 + 5      # 41 values a thread: ceil(41/4) in one accumulator, + 3 tail + 2 to combine
    assert R.longest_chain("atomic", n) == R.longest_chain("numba-reduce", n) == n
    assert R.longest_chain("warp-shuffle", n, threads, blocks, tpb) == own + 8 + blocks
    assert R.longest_chain("two-pass", n, threads, blocks, tpb) == own + 8 + 1 + 8
    assert R.longest_chain("cpu-numba", 10**6) == R.CPU_CHUNK + 16
    assert R.longest_chain("cpu-numba", 7) == 7 + 1
    assert R.longest_chain("racy", n) is None and R.rounding_bound(None, "float32", 1.0) is None
    with pytest.raises(ValueError, match="unknown strategy"):
        R.longest_chain("magic", n)


def test_rounding_bound_grows_with_the_square_root_of_the_chain():
    u = 2.0**-24
    assert R.rounding_bound(1, "float32", 1.0) == pytest.approx(6 * u, rel=1e-6)
    assert R.rounding_bound(4**10, "float32", 1.0) == pytest.approx(6 * 2**10 * u, rel=1e-3)
    assert R.rounding_bound(4**10, "float64", 1.0) == pytest.approx(6 * 2**10 * 2.0**-53)
    assert R.rounding_bound(100, "float32", 3.0) == pytest.approx(3 * R.rounding_bound(100, "float32", 1.0))


def test_stagnation_is_where_the_spacing_reaches_twice_the_values():
    # float32 numbers from 2^24 on are 2 apart: adding anything below 1 changes nothing
    assert R.stagnated(2.0**24, 1.0, "float32") and R.stagnated(3e7, 1.0, "float32")
    assert not R.stagnated(2.0**24 - 1, 1.0, "float32")        # 1 apart: values ≥ 0.5 count
    assert not R.stagnated(2.0**24, 1.0, "float64") and R.stagnated(2.0**53, 1.0, "float64")
    assert not R.stagnated(float("inf"), 1.0, "float32") and not R.stagnated(5.0, 0.0, "float32")
    total = np.float32(2.0**24)
    assert total + np.float32(0.99) == total                   # what "stagnated" means


def test_cpu_sum_is_deterministic_for_any_thread_count(cpu):
    req = ReduceRequest("cpu-numba", 2**20 + 1, "float32", SEED)
    a = cpu.reduce(req).value
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert cpu.reduce(req).value == a
    finally:
        numba.set_num_threads(threads)


def test_reduction_data_and_reference_are_made_once(cpu):
    req = ReduceRequest("numpy", 5000, "float32", SEED + 9)
    first = cpu.reduce(req)
    assert {"generate", "reference", "reduce"} <= set(first.timings.detail)
    second = cpu.reduce(ReduceRequest("cpu-numba", 5000, "float32", SEED + 9))
    # same data, same exact sum (a first allocation of its own may be noted beside it)
    assert set(second.timings.detail) - {"allocate"} == {"reduce"}
    assert second.reference == first.reference
    allocations = cpu.pool.allocations
    cpu.reduce(ReduceRequest("cpu-numba", 5000, "float32", SEED + 9))
    cpu.histogram(HistogramRequest("cpu-numba", 5000, seed=SEED + 9))
    cpu.histogram(HistogramRequest("cpu-numba", 5000, seed=SEED + 9))
    assert cpu.pool.allocations == allocations + 2        # the histogram's scratch, once


# ---- histograms ------------------------------------------------------------------------------------
def test_histogram_bins_edges_and_outliers(cpu):
    data = np.array([0.0, 0.25, 0.5, 0.999, 1.0, -0.1, np.nan, 0.3, 0.74], np.float32)
    for strategy in ("cpu-numba", "numpy"):
        res = cpu.histogram(HistogramRequest.from_data(data, 0.0, 1.0, bins=4, strategy=strategy))
        assert res.counts.tolist() == [1, 2, 2, 1]
        assert (res.underflow, res.overflow) == (1, 2)
        assert res.total == data.size and res.lost == 0 and res.edges == (0.0, 1.0)


@pytest.mark.parametrize("dist", ["uniform", "normal"])
def test_cpu_twin_and_numpy_agree_and_count_everything(cpu, dist):
    n = 3 * H.CPU_CHUNK + 17
    a = cpu.histogram(HistogramRequest("cpu-numba", n, 100, distribution=dist, seed=SEED))
    b = cpu.histogram(HistogramRequest("numpy", n, 100, distribution=dist, seed=SEED))
    np.testing.assert_array_equal(a.counts, b.counts)
    assert (a.underflow, a.overflow) == (b.underflow, b.overflow)
    assert a.total == b.total == n and a.lost == 0


def test_uniform_histogram_is_flat(cpu):
    n, bins = 2**20, 256
    res = cpu.histogram(HistogramRequest("cpu-numba", n, bins, seed=SEED))
    chi2 = ((res.counts - n / bins) ** 2 / (n / bins)).sum()
    assert abs(chi2 - (bins - 1)) < 6 * math.sqrt(2 * (bins - 1))
    assert res.underflow == res.overflow == 0


# ---- Monte Carlo -----------------------------------------------------------------------------------
def test_monte_carlo_cpu_twin_follows_the_reference_stream(cpu):
    n = 1000
    res = cpu.monte_carlo(MonteCarloRequest(n, SEED))
    s0, s1 = X.chunk_state(np.uint64(SEED), M.CPU_STREAM_OFFSET)
    inside = 0
    for r in X.reference_stream(int(s0), int(s1), n):
        x, y = 2 * (r >> 40) + 1, 2 * ((r >> 16) & 0xFFFFFF) + 1
        inside += x * x + y * y <= 2**50
    assert res.inside == inside and res.estimate == 4 * inside / n


def test_monte_carlo_estimates_pi(cpu):
    res = cpu.monte_carlo(MonteCarloRequest(2**22 + 5, SEED))
    assert abs(res.error) < 5 * res.standard_error
    assert res.samples_per_s > 0 and res.monte_carlo_ms > 0
    assert cpu.monte_carlo(MonteCarloRequest(2**22 + 5, SEED)).inside == res.inside
    assert cpu.monte_carlo(MonteCarloRequest(2**22 + 5, SEED + 1)).inside != res.inside


# ---- cancellation --------------------------------------------------------------------------------
class _CancelAfter:
    def __init__(self, calls):
        self.left, self.calls = calls, 0

    def check(self):
        self.calls += 1
        if self.calls > self.left:
            raise RuntimeError("cancelled")


def test_cancel_is_checked_between_chunks(cpu, monkeypatch):
    monkeypatch.setattr(rng_workspace, "CPU_BATCH_CHUNKS", 1)
    monkeypatch.setattr(monte_carlo_job, "MC_CPU_BATCH", 1)
    token = _CancelAfter(2)
    with pytest.raises(RuntimeError, match="cancelled"):
        cpu.generate(GenerateRequest(n=5 * X.CPU_CHUNK, seed=SEED), cancel=token)
    assert token.calls == 3          # before the work, then between the chunks
    token = _CancelAfter(2)
    with pytest.raises(RuntimeError, match="cancelled"):
        cpu.monte_carlo(MonteCarloRequest(5 * M.CPU_CHUNK, SEED), cancel=token)
    with pytest.raises(RuntimeError, match="cancelled"):
        cpu.reduce(ReduceRequest(n=10), cancel=_CancelAfter(0))


# ---- the bench and the scheduler find the package -------------------------------------------------
def test_bench_workloads_are_named_for_only_rng():
    from kernels import bench
    names = [w.name for w in bench.all_workloads() if w.name.startswith("rng")]
    assert names == ["rng-generate", "rng-reduce", "rng-histogram", "rng-monte-carlo"]


def test_cpu_bench_rows(monkeypatch):
    monkeypatch.setattr(rng_bench, "CPU_N", 2**12)
    monkeypatch.setattr(rng_bench, "MC_CPU_N", 2**12)
    monkeypatch.setattr(rng_bench, "REF_BYTES", 2**20)
    backend = Backend("cpu")
    rows = rng_bench.bench_reduce(backend, repeats=1) + rng_bench.bench_histogram(backend, repeats=1)
    by = {r["variant"]: r["metrics"] for r in rows}
    assert by["cpu-numba/float32"]["GB/s"] > 0 and by["cpu-numba/float32"]["% of CPU copy"] > 0
    assert by["cpu-numba/float32"]["within bound"] is True
    assert by["cpu-numba/float32"]["% of read bw"] is None     # no read kernel on the CPU
    assert by["cpu-numba/256 bins"]["lost"] == 0
    assert "refs GB/s" in rows[0]["metrics"]


def test_scheduler_runs_rng_requests():
    from kernels.jobs import default_handlers
    from kernels.scheduler import Delivered, Scheduler
    got = []
    sched = Scheduler(got.append, synchronous=True, handlers=default_handlers())
    sched.submit("rng", MonteCarloRequest(1000, SEED, backend=Backend("cpu")))
    results = [e.result for e in got if isinstance(e, Delivered)]
    assert len(results) == 1 and results[0].request.n == 1000


def test_warmup_compiles_the_first_result_unless_told_more(cpu, monkeypatch):
    """A run's first result is the generation: its kernels alone are warmed by default; the other
    parts are warmed when named, and a name that is none is refused."""
    ran = []
    for name in ("generate", "reduce", "histogram", "monte_carlo"):
        real = getattr(cpu, name)
        monkeypatch.setattr(cpu, name, lambda req, cancel=None, real=real, name=name:
                            (ran.append(name), real(req, cancel))[1])
    assert cpu.warmup() >= 0.0 and ran == ["generate"]
    ran.clear()
    cpu.warmup(parts=("histogram", "monte-carlo"))
    assert ran == ["histogram", "monte_carlo"]
    with pytest.raises(ValueError, match="unknown warm-up part"):
        cpu.warmup(parts=("everything",))


@pytest.mark.parametrize("seed,count", [(0, 1), (12345, 7), (2**64 - 1, 300)])
def test_initial_states_are_numba_cuda_randoms_own(seed, count, numba_cuda):
    """The GPU generators' starting states, made by our cached initialiser, equal numba.cuda.random's
    (splitmix64, then a 2^64-step jump per generator) state for state."""
    import warnings

    from kernels.rng import xoroshiro as X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from numba.cuda import random
    want = np.empty(count, dtype=random.xoroshiro128p_dtype)
    random.init_xoroshiro128p_states_cpu(want, np.uint64(seed), 0)
    got = X.initial_states(seed, count)
    assert got.dtype == want.dtype and np.array_equal(got, want)
