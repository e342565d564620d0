"""The vector ops as numba CUDA kernels: @cuda.jit (one element per thread, grid-stride, and four
elements per thread) and @vectorize(target='cuda') ufuncs. Imported only when a GPU implementation
first runs.

The @cuda.jit kernels are declared without signatures, so nothing compiles at import; the
ufuncs are built on first use because @vectorize with signatures compiles at decoration.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, vectorize

from ..backend import first_line
from .ops import SCALAR, SEED_FIVE, SEED_TEN, SEED_TWO, THREADS_PER_BLOCK, ImplUnavailable


# one element per thread: the simplest mapping
@cuda.jit(cache=True)
def k_copy(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i]


@cuda.jit(cache=True)
def k_scale(a, out, s):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = s * a[i]


@cuda.jit(cache=True)
def k_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit(cache=True)
def k_triad(b, c, out, s):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = b[i] + s * c[i]


@cuda.jit(cache=True)
def k_saxpy(x, y, s):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = s * x[i] + y[i]


@cuda.jit(cache=True)
def k_seed(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = (a[i] * SEED_TEN + SEED_TWO) * ((b[i] + SEED_TWO) * SEED_TEN - SEED_FIVE) * SEED_FIVE


# grid-stride loops over a fixed grid sized to the device: measured against the above
@cuda.jit(cache=True)
def g_copy(a, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a[i]


@cuda.jit(cache=True)
def g_scale(a, out, s):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = s * a[i]


@cuda.jit(cache=True)
def g_add(a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a[i] + b[i]


@cuda.jit(cache=True)
def g_triad(b, c, out, s):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = b[i] + s * c[i]


@cuda.jit(cache=True)
def g_saxpy(x, y, s):
    for i in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        y[i] = s * x[i] + y[i]


@cuda.jit(cache=True)
def g_seed(a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = (a[i] * SEED_TEN + SEED_TWO) * ((b[i] + SEED_TWO) * SEED_TEN - SEED_FIVE) * SEED_FIVE


# four elements per thread (instruction-level parallelism): thread i handles i, i+q, i+2q, i+3q
# with q = ceil(n/4), so each of the four accesses is still coalesced across a warp. Every load is
# issued before any store: numba knows nothing of aliasing, so it keeps that order, and the four
# loads are in flight together. A one-element-per-thread kernel keeps only 4 bytes per thread in
# flight, too few to saturate HBM3 (the transfer probe's 4-load copy is the ceiling it misses).
# Out-of-range lanes load element i again (always valid, no branch around the load) and skip
# their store.
@cuda.jit(device=True)
def _lane(j, n, i):
    return j if j < n else i


@cuda.jit(cache=True)
def q_copy(a, out, q):
    i = cuda.grid(1)
    if i < q:
        n = out.size
        j1, j2, j3 = i + q, i + 2 * q, i + 3 * q
        a0, a1, a2, a3 = a[i], a[_lane(j1, n, i)], a[_lane(j2, n, i)], a[_lane(j3, n, i)]
        out[i] = a0
        if j1 < n:
            out[j1] = a1
        if j2 < n:
            out[j2] = a2
        if j3 < n:
            out[j3] = a3


@cuda.jit(cache=True)
def q_scale(a, out, s, q):
    i = cuda.grid(1)
    if i < q:
        n = out.size
        j1, j2, j3 = i + q, i + 2 * q, i + 3 * q
        a0, a1, a2, a3 = a[i], a[_lane(j1, n, i)], a[_lane(j2, n, i)], a[_lane(j3, n, i)]
        out[i] = s * a0
        if j1 < n:
            out[j1] = s * a1
        if j2 < n:
            out[j2] = s * a2
        if j3 < n:
            out[j3] = s * a3


@cuda.jit(cache=True)
def q_add(a, b, out, q):
    i = cuda.grid(1)
    if i < q:
        n = out.size
        j1, j2, j3 = i + q, i + 2 * q, i + 3 * q
        k1, k2, k3 = _lane(j1, n, i), _lane(j2, n, i), _lane(j3, n, i)
        a0, a1, a2, a3 = a[i], a[k1], a[k2], a[k3]
        b0, b1, b2, b3 = b[i], b[k1], b[k2], b[k3]
        out[i] = a0 + b0
        if j1 < n:
            out[j1] = a1 + b1
        if j2 < n:
            out[j2] = a2 + b2
        if j3 < n:
            out[j3] = a3 + b3


@cuda.jit(cache=True)
def q_triad(b, c, out, s, q):
    i = cuda.grid(1)
    if i < q:
        n = out.size
        j1, j2, j3 = i + q, i + 2 * q, i + 3 * q
        k1, k2, k3 = _lane(j1, n, i), _lane(j2, n, i), _lane(j3, n, i)
        b0, b1, b2, b3 = b[i], b[k1], b[k2], b[k3]
        c0, c1, c2, c3 = c[i], c[k1], c[k2], c[k3]
        out[i] = b0 + s * c0
        if j1 < n:
            out[j1] = b1 + s * c1
        if j2 < n:
            out[j2] = b2 + s * c2
        if j3 < n:
            out[j3] = b3 + s * c3


@cuda.jit(cache=True)
def q_saxpy(x, y, s, q):
    i = cuda.grid(1)
    if i < q:
        n = y.size
        j1, j2, j3 = i + q, i + 2 * q, i + 3 * q
        k1, k2, k3 = _lane(j1, n, i), _lane(j2, n, i), _lane(j3, n, i)
        x0, x1, x2, x3 = x[i], x[k1], x[k2], x[k3]
        y0, y1, y2, y3 = y[i], y[k1], y[k2], y[k3]
        y[i] = s * x0 + y0
        if j1 < n:
            y[j1] = s * x1 + y1
        if j2 < n:
            y[j2] = s * x2 + y2
        if j3 < n:
            y[j3] = s * x3 + y3


@cuda.jit(device=True)
def _seed(a, b):
    return (a * SEED_TEN + SEED_TWO) * ((b + SEED_TWO) * SEED_TEN - SEED_FIVE) * SEED_FIVE


@cuda.jit(cache=True)
def q_seed(a, b, out, q):
    i = cuda.grid(1)
    if i < q:
        n = out.size
        j1, j2, j3 = i + q, i + 2 * q, i + 3 * q
        k1, k2, k3 = _lane(j1, n, i), _lane(j2, n, i), _lane(j3, n, i)
        a0, a1, a2, a3 = a[i], a[k1], a[k2], a[k3]
        b0, b1, b2, b3 = b[i], b[k1], b[k2], b[k3]
        out[i] = _seed(a0, b0)
        if j1 < n:
            out[j1] = _seed(a1, b1)
        if j2 < n:
            out[j2] = _seed(a2, b2)
        if j3 < n:
            out[j3] = _seed(a3, b3)


KERNELS = {
    "per-thread": {"copy": k_copy, "scale": k_scale, "add": k_add, "triad": k_triad,
                   "saxpy": k_saxpy, "seed-expr": k_seed},
    "stride": {"copy": g_copy, "scale": g_scale, "add": g_add, "triad": g_triad,
               "saxpy": g_saxpy, "seed-expr": g_seed},
    "ilp4": {"copy": q_copy, "scale": q_scale, "add": q_add, "triad": q_triad,
             "saxpy": q_saxpy, "seed-expr": q_seed},
}
ILP = 4
_SCALAR_ARG = {"scale", "triad", "saxpy"}
_stride_blocks: int | None = None


def stride_blocks() -> int:
    """Enough blocks to keep every SM busy (8 resident blocks of 256 threads each)."""
    global _stride_blocks
    if _stride_blocks is None:
        try:
            sms = int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
        except Exception:
            sms = 1
        _stride_blocks = max(1, sms * 8)
    return _stride_blocks


def run_jit(variant: str, op_name: str, ins, out, s, stream=None):
    n = out.size
    if n == 0:
        return  # a launch with no blocks is an error, and there is nothing to do
    blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    if variant == "stride":
        blocks = min(blocks, stride_blocks())
    args = tuple(ins) if op_name == "saxpy" else (*ins, out)
    if op_name in _SCALAR_ARG:
        args = (*args, np.float32(s))
    if variant == "ilp4":
        q = (n + ILP - 1) // ILP
        blocks = (q + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
        args = (*args, np.int64(q))
    KERNELS[variant][op_name][blocks, THREADS_PER_BLOCK, stream or 0](*args)


# ---- @vectorize(target='cuda') -----------------------------------------------------------------
def _v_copy(a):
    return a


def _v_scale(a):
    return SCALAR * a


def _v_add(a, b):
    return a + b


def _v_triad(b, c):
    return b + SCALAR * c


def _v_saxpy(x, y):
    return SCALAR * x + y


def _v_seed(a, b):
    return (a * SEED_TEN + SEED_TWO) * ((b + SEED_TWO) * SEED_TEN - SEED_FIVE) * SEED_FIVE


_UFUNCS: dict | None = None


def ufuncs() -> dict:
    global _UFUNCS
    if _UFUNCS is None:
        one, two = ["float32(float32)"], ["float32(float32, float32)"]
        try:
            _UFUNCS = {"copy": vectorize(one, target="cuda")(_v_copy),
                       "scale": vectorize(one, target="cuda")(_v_scale),
                       "add": vectorize(two, target="cuda")(_v_add),
                       "triad": vectorize(two, target="cuda")(_v_triad),
                       "saxpy": vectorize(two, target="cuda")(_v_saxpy),
                       "seed-expr": vectorize(two, target="cuda")(_v_seed)}
        except Exception as exc:
            raise ImplUnavailable("numba could not build @vectorize(target='cuda') ufuncs: "
                                  f"{first_line(exc)}") from exc
    return _UFUNCS


def run_ufunc(op_name: str, ins, out, s, stream=None):
    if np.float32(s) != SCALAR:
        raise ValueError(f"the @vectorize ufuncs fold in s = {SCALAR}; got s = {s}")
    if out.size == 0:
        return
    ufuncs()[op_name](*ins, out=out, stream=stream or 0)
