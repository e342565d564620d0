"""The CPU's roofs, over the threads numba uses: a STREAM-like copy and triad for the bandwidth,
and chains.py's multiply-add chains for the arithmetic peaks.

Bandwidth counts bytes read plus written (copy: 2 arrays, triad: 3), the best of the two kernels
and of `repeats` runs each. The chain kernels run one prange slot per thread, each slot
CPU_CHAINS scalar chains (numba's scalar code: SIMD code could go further, see the note).
"""
from __future__ import annotations

import time

import numpy as np
from numba import get_num_threads, njit, prange

from . import chains
from .model import KINDS, PEAK_FIELDS

TRIAD_SCALAR = 3.0
# a parallel launch wakes the threads first: with fewer steps than this, a loaded machine's
# wake-up could pass for the work
MIN_STEPS = 1 << 16


@njit(parallel=True, cache=True)
def _copy(dst, src):
    for i in prange(src.size):
        dst[i] = src[i]


@njit(parallel=True, cache=True)
def _triad(a, b, c, s):
    for i in prange(a.size):
        a[i] = b[i] + s * c[i]


def _once_ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3


def _best_ms(fn, repeats: int) -> float:
    fn()                                    # compile, first touch
    return min(_once_ms(fn) for _ in range(max(1, repeats)))


def stream_bandwidth(nbytes: int, repeats: int) -> tuple[float, dict]:
    """Bytes per second of the faster of copy (2 arrays) and triad (3 arrays) of nbytes each."""
    n = max(1024, nbytes // 8)
    rng = np.random.default_rng(7)
    b, c = rng.random(n), rng.random(n)
    a = np.ones(n)
    copy_ms = _best_ms(lambda: _copy(a, b), repeats)
    triad_ms = _best_ms(lambda: _triad(a, b, c, TRIAD_SCALAR), repeats)
    rates = {"copy": 2 * 8 * n / (copy_ms * 1e-3), "triad": 3 * 8 * n / (triad_ms * 1e-3)}
    return max(rates.values()), {"bytes": 8 * n, "B/s": rates, "ms": {"copy": copy_ms,
                                                                       "triad": triad_ms}}


def chain_rate(kind: str, target_ms: float = 20.0, repeats: int = 3, slots: int | None = None
               ) -> tuple[float, dict]:
    """(operations per second, details) of the CPU chain kernel of `kind` over every thread."""
    slots = slots or get_num_threads()
    k = chains.kernel(kind, gpu=False)
    x, y = chains.constants(kind)
    out = np.zeros(slots, dtype=chains.KIND_DTYPES[kind])
    k(out, 1, x, y)                         # compile
    n, best = chains.calibrate(lambda m: _once_ms(lambda: k(out, m, x, y)), target_ms,
                               repeats=repeats, min_n=MIN_STEPS)
    ops = chains.ops(slots, n, gpu=False)
    return ops / (best * 1e-3), {"threads": slots, "n_iter": n, "chains": chains.CPU_CHAINS,
                                 "ms": best, "ops": ops}


def measure(nbytes: int = 64 * 2**20, target_ms: float = 20.0, repeats: int = 3) -> dict:
    """Fields for Roofs measured on the CPU."""
    bw, copy = stream_bandwidth(nbytes, repeats)
    out = {"bandwidth_Bps": bw, "details": {"stream": copy, "threads": get_num_threads()}}
    for kind in KINDS:
        out[PEAK_FIELDS[kind]], out["details"][kind] = chain_rate(kind, target_ms, repeats)
    out["note"] = ""
    return out
