"""π from random points of the unit square: the fused GPU kernel (generate and count in one pass,
nothing written to memory but one partial count per block) and its CPU twin.

A point is one xoroshiro128+ draw: x and y are the centres of a 2^24 × 2^24 grid of cells
(bits 63..40 and 39..16), and it is inside the quarter disc when (2i+1)² + (2j+1)² ≤ 2^50, an
exact integer test. The estimate is 4·inside/N.

What bounds the fused kernel: it reads and writes nothing per point, so not memory but the
integer arithmetic of the generator and the test. `int_throughput()` estimates the ceiling from
the device: SMs × the SM clock × INT32_LANES_PER_SM (the 32-bit integer adds, logic operations,
shifts and compares one SM retires per clock on compute capability 7.0 to 9.0, Volta to Hopper:
64, from the CUDA C Programming Guide's throughput table), divided by the integer ALU operations
one point takes. That count is read off the machine code ptxas 12.9 makes of this kernel for
sm_90 (`python3 tools/rng_sass_census.py` prints it: the loop holds four points, 115
instructions, 88 of them on the integer ALU). Per point:
- xoroshiro128+'s step on 64-bit values held as 32-bit halves: the add of the output (1, its
  carry on the multiply-add unit), s1 ^= s0 (2), the rotations by 55 and 36 (2 funnel shifts
  each), the high half of the shift by 14 (1, the low half on the multiply-add unit) and the
  exclusive ors that make the new s0 (4, two of them three-input): 12;
- the point: x = 2i + 1 and y = 2j + 1 from the draw's bits (two shifts, a mask, two ORs): 5;
- the test x² + y² ≤ 2^50 on 64 bits (2 compares), 0 or 1 (a select) and the count (an add): 4;
- the loop's counter and exit test (4 per iteration of four points): 1.
That is INT_ALU_OPS_PER_POINT = 22; the squares and the carries (IMAD.WIDE, IMAD.X, IMAD.SHL and
VIADD, 6 per point) issue to the multiply-add (FP32) unit, which runs beside the ALU, so they are
not counted. 100 % means the integer ALU retires one of this kernel's operations in every lane
on every clock at the device's maximum SM clock (CLOCK_RATE); a GPU held below that clock by its
power limit reaches less. Another compiler may schedule other instructions: the count is an
estimate for this code, not a law.
"""
from __future__ import annotations

import functools

from numba import int64, njit, prange

from ..backend import numba_cuda
from ..twins import twin
from .blocksum import block_sum
from .grid import threads_per_block
from .xoroshiro import DEV, chunk_state, cpu_inside

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

CPU_CHUNK = 1 << 20          # points per independently seeded CPU chunk
INT_ALU_OPS_PER_POINT = 22   # integer ALU operations per point in the compiled loop (see above)
INSTRUCTIONS_PER_POINT = 115 / 4   # every instruction of the loop, per point
INT32_LANES_PER_SM = 64      # 32-bit integer operations per SM per clock, compute capability 7.0-9.x
# the CPU chunks draw from other splitmix64 outputs than the generator's chunks of the same seed
CPU_STREAM_OFFSET = 1 << 40


def _pi(count, states_in, states_out, partials):
    t = cuda.grid(1)
    threads = cuda.gridsize(1)
    s0 = states_in[t]["s0"]
    s1 = states_in[t]["s1"]
    mine = (count - t + threads - 1) // threads if t < count else 0
    hits = int64(0)
    for _ in range(mine):
        h, s0, s1 = _inside(s0, s1)
        hits += h
    total = _bsum(hits)
    if cuda.threadIdx.x == 0:
        partials[cuda.blockIdx.x] += total   # one writer per block, launches in order
    states_out[t]["s0"] = s0
    states_out[t]["s1"] = s1


_bsum = _inside = None       # the twin reads its own


@functools.cache
def gpu_kernel():
    """pi[blocks, tpb, stream](count, states_in, states_out, partials): every thread tests its
    share of `count` points; partials[block] += the block's hits. One thread per state. A twin
    of _pi under a name of its own (kernels/twins.py): numba's disk cache serves it."""
    tpb = threads_per_block()
    return cuda.jit(cache=True)(twin(_pi, f"monte_carlo_pi_{tpb}",
                                     _bsum=block_sum(int64, tpb), _inside=DEV["inside"]))


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


def int_throughput() -> dict | None:
    """The current GPU's integer ceiling: {"sms", "clock_ghz", "int_ops_per_s",
    "points_per_s"} (points_per_s = int_ops_per_s / INT_ALU_OPS_PER_POINT), or None where the
    device cannot be asked (the simulator) or its generation is outside the table."""
    try:
        dev = cuda.get_current_device()
        cc = tuple(dev.compute_capability)
        sms = int(dev.MULTIPROCESSOR_COUNT)
        clock_khz = int(dev.CLOCK_RATE)
    except Exception:   # the simulator's device has no attributes; a driver may refuse
        return None
    if not (7, 0) <= cc < (10, 0) or sms < 1 or clock_khz < 1:
        return None
    ops = sms * clock_khz * 1e3 * INT32_LANES_PER_SM
    return {"sms": sms, "clock_ghz": clock_khz / 1e6, "int_ops_per_s": ops,
            "points_per_s": ops / INT_ALU_OPS_PER_POINT}
