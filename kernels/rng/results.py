"""What the random-number jobs return: one frozen, typed result per kind of job, each with its
Timings (phases "compile", "h2d", "kernel", "d2h", "host", "total"; sub-phases in
`timings.detail` such as "generate", "reduce", "reference", "histogram", "monte-carlo").

Rates are computed from the measured time of the job's own work (the detail phase named in each
result), never from the total, and are None where that time was not measured (under numba's CUDA
simulator GPU phases are not timed).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..timing import Timings


def rate(amount: float, ms) -> float | None:
    """amount per second, or None when the time was not measured."""
    return None if not ms else amount / (ms * 1e-3)


@dataclass(frozen=True)
class GenerateResult:
    request: Any
    generator: str               # as run
    where: str                   # "device", "host", or "host, then copied to the device"
    head: np.ndarray             # the first min(n, HEAD) values, on the host (the result's own)
    values: np.ndarray | None    # every value on the host when the request asked for them: a
                                 # reused ring of two buffers, so copy them to keep them past the
                                 # renderer's next two generate jobs
    generate_ms: float | None    # the generation itself (plus the copy in, for host generators)
    bytes_written: int
    timings: Timings
    streams: int = 1             # independent generator streams: GPU threads, or CPU chunks
    note: str = ""

    @property
    def samples_per_s(self) -> float | None:
        return rate(self.request.n, self.generate_ms)

    @property
    def gbs(self) -> float | None:
        r = rate(self.bytes_written, self.generate_ms)
        return None if r is None else r / 1e9


@dataclass(frozen=True)
class ReduceResult:
    request: Any
    strategy: str                # as run
    value: float                 # the strategy's sum, in the data's precision
    reference: float             # the exact sum rounded once to float64 (or math.fsum of data)
    reference_kind: str          # "exact" or "fsum"
    error: float                 # value - reference, computed exactly then rounded
    reduce_ms: float | None      # the reduction kernel(s) alone
    bytes_read: int
    deterministic: bool          # the same answer on every run of this strategy (no atomics)
    timings: Timings
    note: str = ""
    error_bound: float | None = None   # what random rounding can add up to in this strategy's
                                       # order of additions (reduce.rounding_bound); None for racy
    stagnated: bool = False      # the one accumulator grew so large that the values added were
                                 # rounded away: the error is then far beyond error_bound

    @property
    def relative_error(self) -> float | None:
        return None if self.reference == 0 else abs(self.error) / abs(self.reference)

    @property
    def within_bound(self) -> bool | None:
        """|error| ≤ error_bound; None when there is no bound (racy)."""
        return None if self.error_bound is None else abs(self.error) <= self.error_bound

    @property
    def gbs(self) -> float | None:
        r = rate(self.bytes_read, self.reduce_ms)
        return None if r is None else r / 1e9


@dataclass(frozen=True)
class HistogramResult:
    request: Any
    strategy: str
    counts: np.ndarray           # (bins,) int64
    underflow: int               # values below lo
    overflow: int                # values at or above hi, and NaN
    edges: tuple                 # (lo, hi)
    histogram_ms: float | None
    bytes_read: int
    timings: Timings
    note: str = ""

    @property
    def total(self) -> int:
        return int(self.counts.sum()) + self.underflow + self.overflow

    @property
    def lost(self) -> int:
        """Values that were never counted: 0 for a correct strategy."""
        return int(self.request.n) - self.total

    @property
    def gbs(self) -> float | None:
        r = rate(self.bytes_read, self.histogram_ms)
        return None if r is None else r / 1e9


@dataclass(frozen=True)
class MonteCarloResult:
    request: Any
    inside: int                  # points with x² + y² ≤ 1
    estimate: float              # 4 · inside / n
    monte_carlo_ms: float | None
    timings: Timings
    streams: int = 1             # independent generator streams: GPU threads, or CPU chunks
    note: str = ""

    @property
    def error(self) -> float:
        return self.estimate - float(np.pi)

    @property
    def standard_error(self) -> float:
        """One standard deviation of the estimate: 4·√(p(1−p)/n) with p = π/4."""
        p = np.pi / 4.0
        return float(4.0 * np.sqrt(p * (1.0 - p) / self.request.n))

    @property
    def samples_per_s(self) -> float | None:
        return rate(self.request.n, self.monte_carlo_ms)
