"""The sum of one value per thread over a block, as a device function (the total lands in thread
0), and the grid-stride per-thread sum the reductions share.

On a real GPU a block sum is two rounds of warp shuffles: each warp folds its 32 values with
`shfl_down_sync`, lane 0 of each warp leaves its sum in shared memory, and warp 0 folds those.
numba's CUDA simulator has no warp shuffles, so there the same function is a shared-memory tree
over the block (the simulator's blocks are tiny and a power of two): the code around it, which is
what the tests check, is the same.
"""
from __future__ import annotations

import functools


from ..backend import numba_cuda, simulator_enabled
from .grid import WARP

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

FULL_MASK = 0xFFFFFFFF


@functools.cache
def block_sum(nbtype, tpb: int):
    """A device function `bsum(v) -> total` (valid in thread 0) for blocks of `tpb` threads
    holding values of numba type `nbtype` (float32, float64 or int64)."""
    if simulator_enabled():
        return _tree_sum(nbtype, tpb)
    return _shuffle_sum(nbtype, tpb)


def _shuffle_sum(nbtype, tpb: int):
    if tpb % WARP:
        raise ValueError(f"blocks of {tpb} threads are not whole warps")
    nwarps = tpb // WARP
    zero = nbtype(0)

    @cuda.jit(device=True)
    def warp_sum(v):
        v += cuda.shfl_down_sync(FULL_MASK, v, 16)
        v += cuda.shfl_down_sync(FULL_MASK, v, 8)
        v += cuda.shfl_down_sync(FULL_MASK, v, 4)
        v += cuda.shfl_down_sync(FULL_MASK, v, 2)
        v += cuda.shfl_down_sync(FULL_MASK, v, 1)
        return v

    @cuda.jit(device=True)
    def bsum(v):
        warp_sums = cuda.shared.array(nwarps, nbtype)
        tid = cuda.threadIdx.x
        lane = tid % WARP
        warp = tid // WARP
        v = warp_sum(v)
        if lane == 0:
            warp_sums[warp] = v
        cuda.syncthreads()
        total = zero
        if warp == 0:
            total = warp_sums[lane] if lane < nwarps else zero
            total = warp_sum(total)
        return total

    return bsum


def _tree_sum(nbtype, tpb: int):
    if tpb & (tpb - 1):
        raise ValueError(f"the simulator's block sum needs a power-of-two block, not {tpb}")

    @cuda.jit(device=True)
    def bsum(v):
        sh = cuda.shared.array(tpb, nbtype)
        tid = cuda.threadIdx.x
        sh[tid] = v
        cuda.syncthreads()
        s = tpb // 2
        while s > 0:
            if tid < s:
                sh[tid] += sh[tid + s]
            cuda.syncthreads()
            s //= 2
        return sh[0]

    return bsum


@functools.cache
def thread_sum(nbtype):
    """A device function `tsum(x, n) -> this thread's grid-stride sum of x[:n]`, with four
    independent loads (and accumulators) in flight per thread."""
    zero = nbtype(0)

    @cuda.jit(device=True)
    def tsum(x, n):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        a0 = zero
        a1 = zero
        a2 = zero
        a3 = zero
        while i + 3 * stride < n:
            a0 += x[i]
            a1 += x[i + stride]
            a2 += x[i + 2 * stride]
            a3 += x[i + 3 * stride]
            i += 4 * stride
        while i < n:
            a0 += x[i]
            i += stride
        return (a0 + a1) + (a2 + a3)

    return tsum
