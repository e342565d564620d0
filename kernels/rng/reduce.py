"""Sums of one array, each strategy its own kernel (see request.REDUCE_HELP), the CPU twins, and
the exact sum the errors are measured against.

GPU kernels take (x, n, ...) with x a device array; their grids are sized by the caller (grid.py)
and every thread strides over x. Accumulators have the data's type, so a float32 sum rounds like
float32.

The exact sum: the generated data are uniform values k·2^-b with whole k < 2^b (b = 24 for
float32, 53 for float64), so Σk, kept as two int64 sums of k's high and low bits, is exact in any
order, on the GPU and on the CPU alike; the reference is Σk · 2^-b as a Fraction. Data handed in
by a caller get math.fsum instead (correctly rounded).

How far off a sum may be (`rounding_bound`): every floating-point addition rounds, and a value's
error is carried through the additions on its way into the total. If the strategy's order of
additions takes any one value through at most h of them (`longest_chain`), the computed sum's
error is, to first order, Σ δ_k·s_k over the additions k (s_k the partial sum that addition made,
|δ_k| ≤ u, the unit roundoff: 2^-24 for float32, 2^-53 for float64), and Σ s_k² ≤ h·(Σ|x|)². When
the δ_k are independent with mean zero (what round-to-nearest gives on data like these), the
Azuma–Hoeffding inequality bounds the error by λ·√h·u·Σ|x| except with probability at most
2·exp(−λ²/2) (Higham & Mary, "A new approach to probabilistic rounding error analysis", SIAM J.
Sci. Comput. 2019, whose γ̃_h(λ) = exp(λ√h·u + h·u²/(1 − u)) − 1 is used here, λ = 6: 3·10^-8).
The worst-case bound, h·u·Σ|x|, says nothing at all for 2^28 float32 values (h·u = 16).

That assumption fails when an accumulator stagnates: once |s| is so large that the spacing of
floating-point numbers there is at least twice the largest value added, every value added is
rounded away, always in the same direction (`stagnated`). A float32 atomic sum of uniform values
stops at 2^24 = 16,777,216, and its error then lies far outside the bound, as it should.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
from numba import float64, int64, njit, prange, uint64

from ..backend import numba_cuda
from ..twins import twin
from .blocksum import block_sum, thread_sum
from .grid import threads_per_block

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

# every generated value is k / SCALE[dtype] with k a whole number below SCALE[dtype]
SCALE_BITS = {"float32": 24, "float64": 53}
SPLIT_BITS = 26                       # k = hi·2^26 + lo keeps both sums in int64 up to 2^36 values
_SPLIT = np.uint32(SPLIT_BITS)
_LOW_MASK = np.uint64((1 << SPLIT_BITS) - 1)
CPU_CHUNK = 1 << 16


# ---- GPU ----------------------------------------------------------------------------------------
# The kernels' code; compiled as twins (kernels/twins.py) with the block and thread sums of the
# data's type their own, under names of their own: numba's disk cache serves them at the next start.
def _racy(x, n, acc):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        acc[0] += x[i]          # read, add, write: another thread's write in between is lost
        i += stride


def _atomic(x, n, acc):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        cuda.atomic.add(acc, 0, x[i])
        i += stride


def _shuffle(x, n, acc):
    s = _bsum(_tsum(x, n))
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(acc, 0, s)


def _partial(x, n, partials):
    s = _bsum(_tsum(x, n))
    if cuda.threadIdx.x == 0:
        partials[cuda.blockIdx.x] = s


def _finish(partials, m, out):
    # one block: the second, tiny pass over the per-block sums
    v = _zero
    i = cuda.threadIdx.x
    while i < m:
        v += partials[i]
        i += cuda.blockDim.x
    s = _bsum(v)
    if cuda.threadIdx.x == 0:
        out[0] = s


def _exact(x, n, scale, acc):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    hi = int64(0)
    lo = int64(0)
    while i < n:
        k = uint64(float64(x[i]) * scale)
        hi += int64(k >> _SPLIT)
        lo += int64(k & _LOW_MASK)
        i += stride
    hi = _bsum(hi)
    cuda.syncthreads()   # the block sum's shared memory is used again just below
    lo = _bsum(lo)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(acc, 0, hi)
        cuda.atomic.add(acc, 1, lo)


_bsum = _tsum = _zero = None     # each twin reads its own


def _jit(fn, name, **swap):
    return cuda.jit(cache=True)(twin(fn, name, **swap))


@functools.cache
def gpu_kernels(nbtype) -> dict:
    """The reduction kernels for data of numba type `nbtype` (float32 or float64)."""
    tpb = threads_per_block()
    sums = dict(_bsum=block_sum(nbtype, tpb), _tsum=thread_sum(nbtype))
    key = f"{nbtype}_{tpb}"
    return {"racy": _jit(_racy, f"reduce_racy_{nbtype}"),
            "atomic": _jit(_atomic, f"reduce_atomic_{nbtype}"),
            "warp-shuffle": _jit(_shuffle, f"reduce_shuffle_{key}", **sums),
            "partial": _jit(_partial, f"reduce_partial_{key}", **sums),
            "finish": _jit(_finish, f"reduce_finish_{key}", _bsum=sums["_bsum"],
                           _zero=nbtype(0))}


@functools.cache
def exact_kernel():
    """exact[blocks, tpb](x, n, scale, acc): acc (int64[2]) += (Σ hi, Σ lo) of k = x·scale."""
    tpb = threads_per_block()
    return _jit(_exact, f"reduce_exact_{tpb}", _bsum=block_sum(int64, tpb))


def exact_from_parts(hi: int, lo: int, dtype: str) -> Fraction:
    return Fraction((int(hi) << SPLIT_BITS) + int(lo), 1 << SCALE_BITS[dtype])


# ---- how far off a sum may be -------------------------------------------------------------------------
ROUNDING_LAMBDA = 6.0   # the bound fails with probability at most 2·exp(−λ²/2) ≈ 3·10^-8
SINGLE_ACCUMULATOR = ("racy", "atomic")   # every value goes straight into one number


def unit_roundoff(dtype) -> float:
    return float(np.finfo(np.dtype(dtype)).eps) / 2.0


def _log2_ceil(k: int) -> int:
    return max(0, (int(k) - 1).bit_length())


def longest_chain(strategy: str, n: int, threads: int = 1, blocks: int = 1, tpb: int = 1,
                  cpu_chunk: int = CPU_CHUNK) -> int | None:
    """The most additions any one value goes through on its way into the total, for `strategy`
    summing n values (on the GPU with `blocks` blocks of `tpb` threads, `threads` in all); an
    upper bound where the order is not ours to know. None for "racy", whose error is lost
    updates, not rounding."""
    n = int(n)
    if strategy == "racy":
        return None
    if strategy in ("atomic", "numba-reduce"):
        return n      # one accumulator in any order / numba's order, not ours: the safe bound
    per_thread = -(-n // max(1, threads))
    own = -(-per_thread // 4) + 5     # four accumulators, a tail of up to three, two to combine
    tree = _log2_ceil(tpb)            # the block's shuffle (or shared-memory) tree
    if strategy == "warp-shuffle":
        return own + tree + blocks    # then one atomic add per block, in any order
    if strategy == "two-pass":
        return own + tree + -(-blocks // max(1, tpb)) + tree   # the one-block second pass
    if strategy == "cpu-numba":
        return min(n, cpu_chunk) + -(-n // cpu_chunk)         # a chunk, then the chunks in order
    if strategy == "numpy":
        return 128 + _log2_ceil(n) + 1   # pairwise: blocks of 128 (eight accumulators), halving
    raise ValueError(f"unknown strategy {strategy!r}")


def rounding_bound(chain: int | None, dtype, abs_sum: float,
                   lam: float = ROUNDING_LAMBDA) -> float | None:
    """γ̃_h(λ)·Σ|x|: what random rounding errors can add up to along chains of `chain`
    additions (see the module's docstring); None without a chain."""
    if chain is None or not math.isfinite(abs_sum):
        return None
    u = unit_roundoff(dtype)
    h = max(1, int(chain))
    return math.expm1(lam * math.sqrt(h) * u + h * u * u / (1.0 - u)) * abs_sum


def stagnated(value: float, below: float, dtype) -> bool:
    """True when an accumulator holding `value` (in `dtype`) rounds away every value of
    magnitude below `below`: the spacing of floating-point numbers there is at least twice it."""
    if not (math.isfinite(value) and below > 0):
        return False
    return float(np.spacing(np.dtype(dtype).type(abs(value)))) >= 2.0 * below


# ---- CPU twins ----------------------------------------------------------------------------------
@njit(cache=True, fastmath={"reassoc"})
def _chunk_sum(xs, zero):
    # reassociation lets LLVM keep several vector accumulators: the order is fixed by the
    # compiled code, so the result is still the same on every run. The loop runs over a view
    # from index 0 so the compiler knows every index is in range (with a start offset it
    # could not vectorise, and ran ten times slower).
    a = zero
    for i in range(xs.size):
        a += xs[i]
    return a


@njit(parallel=True, cache=True)
def cpu_sum(x, parts, zero):
    """Σx in x's precision: fixed chunks in parallel (parts holds one sum per chunk), then the
    chunk sums in order, so the answer does not depend on the number of threads."""
    n = x.size
    nchunks = (n + CPU_CHUNK - 1) // CPU_CHUNK
    for c in prange(nchunks):
        start = c * CPU_CHUNK
        parts[c] = _chunk_sum(x[start:min(start + CPU_CHUNK, n)], zero)
    total = zero
    for c in range(nchunks):
        total += parts[c]
    return total


def cpu_parts_len(n: int) -> int:
    return (n + CPU_CHUNK - 1) // CPU_CHUNK


@njit(parallel=True, cache=True)
def cpu_exact_parts(x, scale):
    """(Σ hi, Σ lo) of k = x·scale, the integer sums behind the exact reference."""
    n = x.size
    hi = 0
    lo = 0
    for i in prange(n):
        k = uint64(float64(x[i]) * scale)
        hi += int64(k >> _SPLIT)
        lo += int64(k & _LOW_MASK)
    return hi, lo


def fsum(data: np.ndarray) -> Fraction | float:
    """The correctly rounded sum of arbitrary data, as a Fraction (a float when it is not finite)."""
    try:
        total = math.fsum(np.asarray(data, dtype=np.float64))
    except (OverflowError, ValueError):  # infinities of both signs, or a sum beyond float64
        return float(np.sum(data, dtype=np.float64))
    return Fraction(total) if math.isfinite(total) else total
