"""Bench workloads of the rng package (`main.py --bench --only rng`): generation, the reductions,
the histogram and the fused Monte Carlo, each against ceilings measured in the same run.

Sizes: 2^28 values on the GPU (float32: 1 GiB), 2^26 on the CPU (256 MiB, beyond its caches),
2^10 under the simulator. The host generators (NumPy on one core) run at HOST_N on a GPU backend,
where they would otherwise take seconds a run.

Ceilings, each a metric of its own:
- `% of d2d copy` (GPU) / `% of CPU copy` (CPU): kernels.transfer.measure, once per process and
  backend; a copy counts the bytes it reads plus those it writes, as BabelStream does.
- `% of write bw` (generation): the faster of two fill kernels (a constant written with 16-byte
  and with one-element stores, ceilings.py) of the same dtype and size, in the same run.
- `% of read bw` (sums, histograms): the faster of a read-only kernel (16-byte loads, one sum
  per block, ceilings.py) of the same dtype and size and the fastest correct sum of the run.
- `% of int throughput` (Monte Carlo): points/s × integer ALU operations per point against SMs ×
  clock × 64 (montecarlo.int_throughput, whose docstring counts the operations).
Targets the lead checks on the GPU: sums ≥ 95 % of the d2d copy, generation into memory ≥ 90 %
of the write bandwidth, the histogram ≥ 85 % of the read bandwidth; on the CPU the sum within
80 % of the CPU copy.
"""
from __future__ import annotations

import math
import statistics

from ..bench import Workload, result, time_runs
from . import ceilings
from . import montecarlo as M
from .renderer import Renderer, available
from .request import (CPU_HISTOGRAM_STRATEGIES, CPU_REDUCE_STRATEGIES, DISTRIBUTIONS, DTYPES,
                      GENERATORS, GPU_HISTOGRAM_STRATEGIES, GPU_REDUCE_STRATEGIES, GenerateRequest,
                      HistogramRequest, MonteCarloRequest, ReduceRequest)

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
_best_sum: dict = {}    # (backend, dtype, n) -> the fastest correct sum's GB/s in this process
_fills: dict = {}       # (backend, dtype, n) -> ceilings.measure(...)


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


def _fill_and_read(backend, dtype: str, n: int) -> dict:
    """The fill and read kernels' GB/s for n values of dtype (GPU only; {} on the CPU)."""
    if not backend.is_gpu:
        return {}
    key = _key(backend) + (dtype, n)
    if key not in _fills:
        try:
            # the simulator times nothing: one run shows the kernels work
            _fills[key] = ceilings.measure(backend, dtype, n, repeats=1 if backend.simulated else 10)
        except Exception as exc:   # a ceiling that cannot be measured leaves its metric empty
            _fills[key] = {"error": f"{type(exc).__name__}: {exc}"}
    return _fills[key]


def write_bw(backend, dtype: str, n: int) -> float | None:
    return _fill_and_read(backend, dtype, n).get("write")


def read_bw(backend, dtype: str, n: int) -> float | None:
    """The read ceiling: the read kernel or the fastest correct sum of the run, the faster (GPU
    only: on the CPU the ceiling is the CPU copy)."""
    if not backend.is_gpu:
        return None
    kernel = _fill_and_read(backend, dtype, n).get("read")
    best = _best_sum.get(_key(backend) + (dtype, n))
    good = [v for v in (kernel, best) if v]
    return max(good) if good else None


def _fill_metric(backend, dtype: str, n: int) -> str:
    got = _fill_and_read(backend, dtype, n)
    if "error" in got:
        return got["error"]
    return ", ".join(f"{k}={v:.1f}" for k, v in got.items() if v is not None)


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
                on_device = backend.is_gpu and not host_path
                rows.append(result(wl, backend, variant, _size(n), runs, compile_ms, metrics={
                    "generate ms": ms, "Gsample/s": n / (ms * 1e-3) / 1e9 if ms else None,
                    "GB/s": gbs, label: _pct(gbs, ceiling),
                    "% of write bw": _pct(gbs, write_bw(backend, dtype, n)) if on_device else None,
                    "streams": res.streams,
                    "note": "NumPy on the host, then copied to the device" if host_path else ""}))
    if rows:
        rows[0]["metrics"]["refs GB/s"] = _refs_metric(backend)
        if backend.is_gpu:
            n = _n(backend)
            rows[0]["metrics"]["fill GB/s"] = "; ".join(
                f"{dtype}: {_fill_metric(backend, dtype, n)}" for dtype in DTYPES)
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
        if gbs and res.within_bound:    # a wrong sum is no ceiling
            key = _key(backend) + (dtype, size)
            _best_sum[key] = max(_best_sum.get(key, 0.0), gbs)
        rows.append(result(wl, backend, variant, _size(size), runs, compile_ms, metrics={
            "reduce ms": ms, "GB/s": gbs, label: _pct(gbs, ceiling),
            "% of read bw": (dtype, size),   # filled in below, once every sum is known
            "value": res.value, "exact": res.reference, "error": res.error,
            "rel error": res.relative_error, "error bound": res.error_bound,
            "within bound": res.within_bound, "stagnated": res.stagnated,
            "deterministic": res.deterministic}))
    for row in rows:
        m = row["metrics"]
        if "% of read bw" in m:
            m["% of read bw"] = _pct(m["GB/s"], read_bw(backend, *m["% of read bw"]))
    if rows:
        rows[0]["metrics"]["refs GB/s"] = _refs_metric(backend)
        if backend.is_gpu:
            rows[0]["metrics"]["read GB/s"] = "; ".join(
                f"{dtype} 2^{size.bit_length() - 1}: {_fill_metric(backend, dtype, size)}, "
                f"best sum={_best_sum.get(_key(backend) + (dtype, size)) or 0:.1f}"
                for dtype, size in sorted({(d, z) for _, d, z in cases}))
    return rows


def bench_histogram(backend, repeats: int = 10) -> list[dict]:
    wl = "rng-histogram"
    renderer = _renderer(backend)
    label, ceiling = _ceiling(backend)
    n = _n(backend)
    read = read_bw(backend, "float32", n)
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
            "% of read bw": _pct(gbs, read), "lost": res.lost}))
    if rows and backend.is_gpu:
        rows[0]["metrics"]["read GB/s"] = f"{_fill_metric(backend, 'float32', n)}, " \
            f"best sum={_best_sum.get(_key(backend) + ('float32', n)) or 0:.1f}"
    return rows


def bench_monte_carlo(backend, repeats: int = 10) -> list[dict]:
    wl = "rng-monte-carlo"
    renderer = _renderer(backend)
    n = _n(backend, "MC_")
    req = MonteCarloRequest(n, SEED)
    runs, compile_ms, res = _timed(lambda: renderer.monte_carlo(req), backend,
                                   min(repeats, 5) if not backend.is_gpu else repeats)
    ms = _median_detail(runs, "monte-carlo")
    per_s = n / (ms * 1e-3) if ms else None
    metrics = {"monte-carlo ms": ms, "Gsample/s": per_s / 1e9 if per_s else None,
               "estimate": res.estimate, "error": res.error,
               "error / sigma": res.error / res.standard_error if res.standard_error else None,
               "digits": -math.log10(abs(res.error)) if res.error else None}
    if backend.is_gpu:
        peak = M.int_throughput()
        metrics.update({
            "% of int throughput": _pct(per_s, peak and peak["points_per_s"]),
            "int ops/sample": M.INT_ALU_OPS_PER_POINT,
            "int Gop/s": per_s * M.INT_ALU_OPS_PER_POINT / 1e9 if per_s else None,
            "int peak Gop/s": peak["int_ops_per_s"] / 1e9 if peak else None,
            "bound": "integer ALU: xoroshiro128+'s 64-bit step on 32-bit halves and the exact "
                     "integer test, nothing read or written per point" +
                     (f" ({peak['sms']} SMs x {peak['clock_ghz']:.3f} GHz x "
                      f"{M.INT32_LANES_PER_SM} int32 lanes)" if peak else "")})
    return [result(wl, backend, "fused-xoroshiro128p" if backend.is_gpu else "cpu-twin", _size(n),
                   runs, compile_ms, metrics=metrics)]


def workloads() -> list[Workload]:
    return [
        Workload("rng-generate", "uniform and normal float32/float64 random numbers into memory, "
                 "per generator (samples/s, % of the write and of the copy bandwidth)",
                 bench_generate),
        Workload("rng-reduce", "sum of 2^28 float32 (2^26 on the CPU) per strategy, with its "
                 "rounding error against the exact sum and its bound (GB/s read, % of the read "
                 "and of the copy bandwidth)", bench_reduce),
        Workload("rng-histogram", f"histogram of 2^28 float32 into {BINS} bins (GB/s read, % of "
                 "the read and of the copy bandwidth)", bench_histogram),
        Workload("rng-monte-carlo", "π from 2^32 random points (2^26 on the CPU), generated and "
                 "counted in one kernel (samples/s, % of the integer throughput)",
                 bench_monte_carlo),
    ]
