"""The random-number jobs' work, for the roofline: counted per value from the algorithms, timed by
each job's own sub-phase (generate, reduce, histogram, monte-carlo).

Operation counts (int32 operations: a 64-bit integer operation counts as 2):
  xoroshiro128+: one 64-bit draw per value — add, 3 xors, 2 rotations (shift, shift, or), a shift:
    11 64-bit operations = 22, and 2 for the conversion to a float: 24 per value.
  Philox4x32-10: 10 rounds of 2 32-bit multiplies (high and low halves: 4), 4 xors and 2 key
    additions for 4 values: 25 per value.
  NumPy's PCG64 (host): a 128-bit multiply-add per 64-bit draw, about 16 64-bit operations: 32.
The normal distribution's transform (logarithm, square root, sine) is left out: a lower bound.
Reductions: one addition per value; histograms: (x − lo) · scale, the bin test and the increment,
3 operations per value; Monte Carlo π: two draws (48) and x² + y² ≤ 1 per point, whose three
float operations are counted with the integer ones.
"""
from __future__ import annotations

from ..roofs.work import Work, record
from .results import GenerateResult, HistogramResult, MonteCarloResult, ReduceResult

OPS_PER_VALUE = {"xoroshiro128p": 24, "philox4_32_10": 25, "numpy": 32}
HISTOGRAM_OPS = 3
MONTE_CARLO_OPS = 2 * OPS_PER_VALUE["xoroshiro128p"] + 3


def _float_kind(dtype: str) -> str:
    return "f32" if dtype == "float32" else "f64"


def add_work(result):
    """Record the job's counted work on result.timings; returns the result."""
    req = result.request
    n = int(req.n)
    if isinstance(result, GenerateResult):
        ops = OPS_PER_VALUE.get(result.generator)
        if ops:
            record(result.timings, Work(f"generate, {result.generator}", "int32", ops * n,
                                        result.bytes_written, detail="generate",
                                        how=f"{ops} int32 ops × {n:,} values"))
    elif isinstance(result, ReduceResult):
        record(result.timings, Work(f"reduce, {result.strategy}",
                                    _float_kind(req.np_dtype.name), n, result.bytes_read,
                                    detail="reduce", how=f"1 addition × {n:,} values"))
    elif isinstance(result, HistogramResult):
        record(result.timings, Work(f"histogram, {result.strategy}",
                                    _float_kind(req.np_dtype.name), HISTOGRAM_OPS * n,
                                    result.bytes_read, detail="histogram",
                                    how=f"{HISTOGRAM_OPS} ops × {n:,} values"))
    elif isinstance(result, MonteCarloResult):
        # the points are made where they are used: only the count is written
        record(result.timings, Work("monte carlo π", "int32", MONTE_CARLO_OPS * n,
                                    8 * max(1, result.streams), detail="monte-carlo",
                                    how=f"{MONTE_CARLO_OPS} ops × {n:,} points"))
    return result
