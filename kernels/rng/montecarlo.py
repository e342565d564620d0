"""π from random points of the unit square: the fused GPU kernel (generate and count in one pass,
nothing written to memory but one partial count per block) and its CPU twin.

A point is one xoroshiro128+ draw: x and y are the centres of a 2^24 × 2^24 grid of cells
(bits 63..40 and 39..16), and it is inside the quarter disc when (2i+1)² + (2j+1)² ≤ 2^50, an
exact integer test. The estimate is 4·inside/N.
"""
from __future__ import annotations

import functools

from numba import cuda, int64, njit, prange

from .blocksum import block_sum
from .grid import threads_per_block
from .xoroshiro import DEV, chunk_state, cpu_inside

CPU_CHUNK = 1 << 20          # points per independently seeded CPU chunk
# the CPU chunks draw from other splitmix64 outputs than the generator's chunks of the same seed
CPU_STREAM_OFFSET = 1 << 40


@functools.cache
def gpu_kernel():
    """pi[blocks, tpb, stream](count, states_in, states_out, partials): every thread tests its
    share of `count` points; partials[block] += the block's hits. One thread per state."""
    bsum = block_sum(int64, threads_per_block())
    inside = DEV["inside"]

    @cuda.jit
    def pi(count, states_in, states_out, partials):
        t = cuda.grid(1)
        threads = cuda.gridsize(1)
        s0 = states_in[t]["s0"]
        s1 = states_in[t]["s1"]
        mine = (count - t + threads - 1) // threads if t < count else 0
        hits = int64(0)
        for _ in range(mine):
            h, s0, s1 = inside(s0, s1)
            hits += h
        total = bsum(hits)
        if cuda.threadIdx.x == 0:
            partials[cuda.blockIdx.x] += total   # one writer per block, launches in order
        states_out[t]["s0"] = s0
        states_out[t]["s1"] = s1

    return pi


@njit(parallel=True, cache=True)
def cpu_pi(hits, first_chunk, n, seed):
    """hits[j] = points inside among CPU chunk first_chunk + j (of an N-point run)."""
    for j in prange(hits.size):
        k = first_chunk + j
        s0, s1 = chunk_state(seed, k + CPU_STREAM_OFFSET)
        m = min(CPU_CHUNK, n - k * CPU_CHUNK)
        h = 0
        for _ in range(m):
            hit, s0, s1 = cpu_inside(s0, s1)
            h += hit
        hits[j] = h


def cpu_chunks(n: int) -> int:
    return (n + CPU_CHUNK - 1) // CPU_CHUNK
