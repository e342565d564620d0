"""Bench workloads of the rng package (`main.py --bench --only rng`): generation, the reductions,
the histogram and the fused Monte Carlo, each against a ceiling measured in the same run.

Sizes: 2^28 values on the GPU (float32: 1 GiB), 2^26 on the CPU (256 MiB, beyond its caches),
2^10 under the simulator. The host generators (NumPy on one core) run at HOST_N on a GPU backend,
where they would otherwise take seconds a run.

Ceilings (kernels.transfer.measure, once per process and backend): on the GPU the device-to-device
copy, counting bytes read plus written, as BabelStream does; a generator writes, a sum or a
histogram reads, and each is given as a percentage of that copy rate. On the CPU the CPU copy.
Targets the lead checks on the GPU: sums ≥ 95 % of the copy, generation into memory ≥ 90 %, the
histogram ≥ 85 % of the read rate (the fastest sum of the run); on the CPU the sum within 80 % of
the copy.
"""
from __future__ import annotations

import math
import statistics

from ..bench import Workload, result, time_runs
from .renderer import Renderer, available
from .request import (CPU_HISTOGRAM_STRATEGIES, CPU_REDUCE_STRATEGIES, DISTRIBUTIONS, DTYPES,
                      GENERATORS, GPU_HISTOGRAM_STRATEGIES, GPU_REDUCE_STRATEGIES,
                      GenerateRequest, HistogramRequest, MonteCarloRequest, ReduceRequest)

GPU_N = 2**28
CPU_N = 2**26
SIM_N = 2**10
HOST_N = 2**24
MC_GPU_N = 2**32
MC_CPU_N = 2**26
MC_SIM_N = 2**10
BINS = 256
SEED = 2024
REF_BYTES = 256 * 2**20
SIM_REF_BYTES = 2**16

_refs: dict = {}
_renderers: dict = {}
_best_read: dict = {}   # backend -> the fastest sum's GB/s in this process (the read ceiling)


def _key(backend) -> tuple:
    return (backend.name, backend.simulated)


def references(backend) -> dict:
    key = _key(backend)
    if key not in _refs:
        from ..transfer import measure
        _refs[key] = measure(backend, SIM_REF_BYTES if backend.simulated else REF_BYTES, repeats=5)
    return _refs[key]


def _renderer(backend) -> Renderer:
    key = _key(backend)
    if key not in _renderers:
        _renderers[key] = Renderer(backend)
    return _renderers[key]


def _n(backend, which: str = "") -> int:
    """The size of a workload (module constants, read when it runs)."""
    g = globals()
    if backend.simulated:
        return g[f"{which}SIM_N"]
    return g[f"{which}GPU_N"] if backend.is_gpu else g[f"{which}CPU_N"]


def _size(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:,}"


def _pct(value, ref):
    return 100.0 * value / ref if value and ref else None


def _ceiling(backend) -> tuple[str, float | None]:
    refs = references(backend)
    if backend.is_gpu:
        return "% of d2d copy", refs.get("d2d-copy")
    return "% of CPU copy", refs.get("cpu-copy")


def _median_detail(runs, name: str):
    vals = [t.detail.get(name) for t in runs if t.detail.get(name) is not None]
    return statistics.median(vals) if vals else None


def _skipped(workload: str, backend, variant: str, size: str, why: str) -> dict:
    return result(workload, backend, variant, size, [], metrics={"skipped": why})


def _refs_metric(backend) -> str:
    return ", ".join(f"{k}={v:.1f}" for k, v in references(backend).items() if v is not None)


def _timed(fn, backend, repeats: int):
    """(runs, compile ms, last result); GPU jobs are short, so they get more runs."""
    last = {}

    def once():
        last["r"] = fn()
        return last["r"].timings
    reps = max(repeats, 20) if backend.is_gpu and not backend.simulated else repeats
    runs, compile_ms = time_runs(once, repeats=reps, warmup=2)
    return runs, compile_ms, last["r"]


# ---- workloads ------------------------------------------------------------------------------------
def bench_generate(backend, repeats: int = 10) -> list[dict]:
    wl = "rng-generate"
    renderer = _renderer(backend)
    label, ceiling = _ceiling(backend)
    reasons = available(backend, "generate")
    rows = []
    for generator in GENERATORS:
        host_path = generator == "numpy" and backend.is_gpu and not backend.simulated
        n = HOST_N if host_path else _n(backend)
        for dist in DISTRIBUTIONS:
            for dtype in DTYPES:
                variant = f"{generator}/{dist}/{dtype}"
                if reasons[generator]:
                    rows.append(_skipped(wl, backend, variant, _size(n), reasons[generator]))
                    continue
                req = GenerateRequest(generator, dist, dtype, n, SEED)
                try:
                    runs, compile_ms, res = _timed(lambda: renderer.generate(req), backend, repeats)
                except Exception as exc:   # recorded, so one failure does not lose the run
                    rows.append(_skipped(wl, backend, variant, _size(n), f"error: {exc}"))
                    continue
                ms = _median_detail(runs, "generate")
                if generator == "numpy" and backend.is_gpu:
                    copy = _median_detail(runs, "copy-in")
                    ms = None if ms is None or copy is None else ms + copy
                gbs = n * req.np_dtype.itemsize / (ms * 1e-3) / 1e9 if ms else None
                rows.append(result(wl, backend, variant, _size(n), runs, compile_ms, metrics={
                    "generate ms": ms, "Gsample/s": n / (ms * 1e-3) / 1e9 if ms else None,
                    "GB/s": gbs, label: _pct(gbs, ceiling), "streams": res.streams,
                    "note": "NumPy on the host, then copied to the device" if host_path else ""}))
    if rows:
        rows[0]["metrics"]["refs GB/s"] = _refs_metric(backend)
    return rows


def bench_reduce(backend, repeats: int = 10) -> list[dict]:
    wl = "rng-reduce"
    renderer = _renderer(backend)
    label, ceiling = _ceiling(backend)
    n = _n(backend)
    strategies = GPU_REDUCE_STRATEGIES if backend.is_gpu else CPU_REDUCE_STRATEGIES
    cases = [(s, "float32", n) for s in strategies]
    # float64 at the same bytes, to show the rounding error shrink
    cases += [(s, "float64", n // 2) for s in ("two-pass",) if backend.is_gpu] + \
             [(s, "float64", n // 2) for s in ("cpu-numba",) if not backend.is_gpu]
    rows = []
    for strategy, dtype, size in cases:
        variant = f"{strategy}/{dtype}"
        req = ReduceRequest(strategy, size, dtype, SEED)
        try:
            runs, compile_ms, res = _timed(lambda: renderer.reduce(req), backend, repeats)
        except Exception as exc:
            rows.append(_skipped(wl, backend, variant, _size(size), f"error: {exc}"))
            continue
        ms = _median_detail(runs, "reduce")
        gbs = res.bytes_read / (ms * 1e-3) / 1e9 if ms else None
        if gbs and strategy not in ("racy", "atomic"):
            _best_read[_key(backend)] = max(_best_read.get(_key(backend), 0.0), gbs)
        rows.append(result(wl, backend, variant, _size(size), runs, compile_ms, metrics={
            "reduce ms": ms, "GB/s": gbs, label: _pct(gbs, ceiling), "value": res.value,
            "exact": res.reference, "error": res.error, "rel error": res.relative_error,
            "deterministic": res.deterministic}))
    if rows:
        rows[0]["metrics"]["refs GB/s"] = _refs_metric(backend)
    return rows


def bench_histogram(backend, repeats: int = 10) -> list[dict]:
    wl = "rng-histogram"
    renderer = _renderer(backend)
    label, ceiling = _ceiling(backend)
    n = _n(backend)
    if _key(backend) not in _best_read:     # the read ceiling: the default sum of the same data
        default_sum = ReduceRequest("auto", n, "float32", SEED)
        runs, _, res = _timed(lambda: renderer.reduce(default_sum), backend, repeats)
        ms = _median_detail(runs, "reduce")
        if ms:
            _best_read[_key(backend)] = res.bytes_read / (ms * 1e-3) / 1e9
    read = _best_read.get(_key(backend))
    strategies = GPU_HISTOGRAM_STRATEGIES if backend.is_gpu else CPU_HISTOGRAM_STRATEGIES
    rows = []
    for strategy in strategies:
        variant = f"{strategy}/{BINS} bins"
        req = HistogramRequest(strategy, n, BINS, "float32", "uniform", SEED)
        try:
            runs, compile_ms, res = _timed(lambda: renderer.histogram(req), backend, repeats)
        except Exception as exc:
            rows.append(_skipped(wl, backend, variant, _size(n), f"error: {exc}"))
            continue
        ms = _median_detail(runs, "histogram")
        gbs = res.bytes_read / (ms * 1e-3) / 1e9 if ms else None
        rows.append(result(wl, backend, variant, _size(n), runs, compile_ms, metrics={
            "histogram ms": ms, "GB/s": gbs, label: _pct(gbs, ceiling),
            "% of read (best sum)": _pct(gbs, read), "lost": res.lost}))
    return rows


def bench_monte_carlo(backend, repeats: int = 10) -> list[dict]:
    wl = "rng-monte-carlo"
    renderer = _renderer(backend)
    n = _n(backend, "MC_")
    req = MonteCarloRequest(n, SEED)
    runs, compile_ms, res = _timed(lambda: renderer.monte_carlo(req), backend,
                                   min(repeats, 5) if not backend.is_gpu else repeats)
    ms = _median_detail(runs, "monte-carlo")
    return [result(wl, backend, "fused-xoroshiro128p" if backend.is_gpu else "cpu-twin", _size(n),
                   runs, compile_ms, metrics={
                       "monte-carlo ms": ms, "Gsample/s": n / (ms * 1e-3) / 1e9 if ms else None,
                       "estimate": res.estimate, "error": res.error,
                       "error / sigma": res.error / res.standard_error if res.standard_error else None,
                       "digits": -math.log10(abs(res.error)) if res.error else None})]


def workloads() -> list[Workload]:
    return [
        Workload("rng-generate", "uniform and normal float32/float64 random numbers into memory, "
                 "per generator (samples/s, % of the copy bandwidth)", bench_generate),
        Workload("rng-reduce", "sum of 2^28 float32 (2^26 on the CPU) per strategy, with its "
                 "rounding error against the exact sum (GB/s read, % of the copy bandwidth)",
                 bench_reduce),
        Workload("rng-histogram", f"histogram of 2^28 float32 into {BINS} bins (GB/s read, % of "
                 "the copy and of the fastest sum)", bench_histogram),
        Workload("rng-monte-carlo", "π from 2^32 random points (2^26 on the CPU), generated and "
                 "counted in one kernel (samples/s)", bench_monte_carlo),
    ]
