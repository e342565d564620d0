"""Histograms of one array into `bins` equal bins over [lo, hi): the privatised shared-memory GPU
kernel, the racy one, the CPU twin and a NumPy version.

A value x goes to bin floor((x − lo)·scale) with scale = bins / (hi − lo), computed in x's own
precision with the same two operations everywhere (no fused multiply-add is possible), so the GPU,
the CPU twin and NumPy put every value in the same bin. Values below lo are counted in an
underflow slot, values at or above hi and NaN in an overflow slot: the count array has bins + 2
slots, [bins] = underflow, [bins + 1] = overflow, and its total is N for a correct strategy.
"""
from __future__ import annotations

import functools

import numpy as np
from numba import int64, njit, prange

from ..backend import numba_cuda
from ..twins import twin

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

_ONE_U32 = np.uint32(1)
CPU_CHUNK = 1 << 18


def _bin_of(x, lo, scale, nbins):
    t = (x - lo) * scale
    if t >= 0 and t < nbins:
        return int64(t)
    if t < 0:
        return int64(nbins)
    return int64(nbins + 1)      # at or above hi, or NaN


_bin_of_dev = cuda.jit(device=True)(_bin_of)
bin_of_cpu = njit(cache=True)(_bin_of)


def _shared(x, n, lo, scale, counts):
    local = cuda.shared.array(_slots, np.uint32)
    tid = cuda.threadIdx.x
    j = tid
    while j < _slots:
        local[j] = 0
        j += cuda.blockDim.x
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i + 3 * stride < n:
        # four independent loads in flight before the first atomic
        v0 = x[i]
        v1 = x[i + stride]
        v2 = x[i + 2 * stride]
        v3 = x[i + 3 * stride]
        cuda.atomic.add(local, _bin_of_dev(v0, lo, scale, _nbins), _ONE_U32)
        cuda.atomic.add(local, _bin_of_dev(v1, lo, scale, _nbins), _ONE_U32)
        cuda.atomic.add(local, _bin_of_dev(v2, lo, scale, _nbins), _ONE_U32)
        cuda.atomic.add(local, _bin_of_dev(v3, lo, scale, _nbins), _ONE_U32)
        i += 4 * stride
    while i < n:
        cuda.atomic.add(local, _bin_of_dev(x[i], lo, scale, _nbins), _ONE_U32)
        i += stride
    cuda.syncthreads()
    j = tid
    while j < _slots:
        c = local[j]
        if c != 0:
            cuda.atomic.add(counts, j, int64(c))   # one global atomic per bin per block
        j += cuda.blockDim.x


def _racy(x, n, lo, scale, counts):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        counts[_bin_of_dev(x[i], lo, scale, _nbins)] += 1   # lost when two threads collide
        i += stride


_slots = _nbins = None       # each twin reads its own


@functools.cache
def gpu_kernels(nbins: int) -> dict:
    """shared[blocks, tpb](x, n, lo, scale, counts) and racy[...](same), counts int64[nbins + 2]
    zeroed by the caller; lo and scale have x's type. Twins of the module's code under names of
    their own (kernels/twins.py), so numba's disk cache serves them at the next start."""
    nbins = int(nbins)
    shared = twin(_shared, f"histogram_shared_{nbins}", _slots=nbins + 2, _nbins=nbins)
    racy = twin(_racy, f"histogram_racy_{nbins}", _nbins=nbins)
    return {"shared": cuda.jit(cache=True)(shared), "racy": cuda.jit(cache=True)(racy)}


@njit(parallel=True, cache=True)
def cpu_histogram(x, lo, scale, nbins, rows, counts):
    """counts[:nbins + 2] = the histogram of x; rows is (chunks, nbins + 2) int64 scratch, one
    private histogram per chunk."""
    n = x.size
    nchunks = rows.shape[0]
    slots = nbins + 2
    for c in prange(nchunks):
        row = rows[c]
        for j in range(slots):
            row[j] = 0
        start = c * CPU_CHUNK
        xs = x[start:min(start + CPU_CHUNK, n)]   # a view indexed from 0: no range fix-ups
        for i in range(xs.size):
            row[bin_of_cpu(xs[i], lo, scale, nbins)] += 1
    for j in prange(slots):
        s = 0
        for c in range(nchunks):
            s += rows[c, j]
        counts[j] = s


def cpu_rows(n: int) -> int:
    return (n + CPU_CHUNK - 1) // CPU_CHUNK


def numpy_histogram(x: np.ndarray, lo, scale, nbins: int) -> np.ndarray:
    """The same binning with NumPy array operations (x's precision)."""
    t = (x - lo) * scale
    idx = np.full(x.shape, nbins + 1, dtype=np.int64)
    inside = (t >= 0) & (t < nbins)
    idx[inside] = t[inside].astype(np.int64)
    idx[t < 0] = nbins
    return np.bincount(idx, minlength=nbins + 2)


def scale_for(lo: float, hi: float, nbins: int, dtype) -> tuple:
    """(lo, scale) in the data's precision."""
    t = np.dtype(dtype).type
    return t(lo), t(nbins / (hi - lo))
