"""The xoroshiro128+ generator on the GPU (numba.cuda.random's states) and its CPU twin.

The step is numba.cuda.random's xoroshiro128p_next, done here on two uint64 values held in
registers: numba's own device functions take the state array and an index, so every call loads and
stores the state through memory, several times slower than with the state in registers (see
docs/PERFORMANCE.md). A GPU thread therefore loads its state once, strides over the output
and stores the state once; the states are numba's own (`init_xoroshiro128p_states`: one per
thread, 2^64 steps apart), one per resident thread.

From a 64-bit draw r:
- float32 uniform: two values, bits 63..40 and 39..16, each k·2^-24 with k < 2^24, so exactly
  [0, 1) (numba's float32 uniform rounds a float64 to float32 and returns 1.0 about once in 2^25
  draws); the lowest bits of xoroshiro128+ are its weak ones and are not used.
- float64 uniform: bits 63..11 → k·2^-53, one value per draw.
- normal: Box–Muller on two uniforms u, v gives two values, √(−2 ln(1−u))·cos(2πv) and ·sin(2πv)
  (1−u is in (0, 1], so the logarithm is finite); float32 from one draw, float64 from two. On the
  GPU cos(2πv) and sin(2πv) come from sincospi(2v), which needs no argument reduction; the CPU
  twin uses cos and sin of 2πv, so the two agree to rounding, not bit for bit.
Every GROUP[dtype] values (16 bytes: four float32 or two float64) take exactly two draws. The GPU
kernel writes a whole group per thread and iteration with one 16-byte store
(kernels/wide_access.py): group q of the output is thread q % threads's (q // threads)-th group,
so a warp writes 512 contiguous bytes per store instruction and issues a quarter of the stores
that one value per store needs.

The CPU twin runs the same step and the same conversions, in parallel over fixed chunks of
CPU_CHUNK elements; chunk k starts from a state made by splitmix64 from (seed, k), so the numbers
depend on the seed and N only, never on the number of CPU threads.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np
from numba import float32, float64, njit, prange, uint32, uint64

from ..backend import cuda_imported, numba_cuda, simulator_enabled
from ..twins import twin
from ..wide_access import WIDTH as GROUP
from ..wide_access import store16

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_MASK24 = np.uint64(0xFFFFFF)
_INV24 = np.float32(2.0**-24)
_INV53 = np.float64(2.0**-53)
_ONE32 = np.float32(1.0)
_ONE64 = np.float64(1.0)
_M2_32 = np.float32(-2.0)
_M2_64 = np.float64(-2.0)
_TWO_PI32 = np.float32(2.0 * math.pi)
_TWO_PI64 = np.float64(2.0 * math.pi)
_R = {k: np.uint32(k) for k in (9, 11, 14, 16, 27, 28, 30, 31, 36, 40, 55)}
_R9, _R11, _R14, _R16, _R27, _R28 = _R[9], _R[11], _R[14], _R[16], _R[27], _R[28]
_R30, _R31, _R36, _R40, _R55 = _R[30], _R[31], _R[36], _R[40], _R[55]
# the Monte Carlo test on the 2^24 × 2^24 grid of cell centres: (2i+1)² + (2j+1)² ≤ 2^50
_ONE_U = np.uint64(1)
_TWO_U = np.uint64(2)
_R2_50 = np.uint64(2**50)

CPU_CHUNK = 1 << 16          # elements per independently seeded CPU chunk (even)


# ---- the step and the conversions, as plain Python: compiled once for the GPU, once for the CPU --
def _next(s0, s1):
    """One xoroshiro128+ step: (64 random bits, new s0, new s1)."""
    out = uint64(s0 + s1)
    s1 = uint64(s1 ^ s0)
    ns0 = uint64(uint64((s0 << _R55) | (s0 >> _R9)) ^ s1 ^ uint64(s1 << _R14))
    ns1 = uint64((s1 << _R36) | (s1 >> _R28))
    return out, ns0, ns1


def _next_simulated(s0, s1):
    """_next in Python integers: under numba's simulator NumPy's uint64 scalars would warn of an
    overflow at every wrapping addition."""
    m = (1 << 64) - 1
    a, b = int(s0), int(s1)
    out = (a + b) & m
    b ^= a
    ns0 = (((a << 55) | (a >> 9)) & m) ^ b ^ ((b << 14) & m)
    ns1 = ((b << 36) | (b >> 28)) & m
    return np.uint64(out), np.uint64(ns0), np.uint64(ns1)


def _sincos_2pi_32(v):
    th = _TWO_PI32 * v
    return math.sin(th), math.cos(th)


def _sincos_2pi_64(v):
    th = _TWO_PI64 * v
    return math.sin(th), math.cos(th)


def _device_sincos_2pi():
    """sin(2πv) and cos(2πv) on the GPU as sincospi(2v): the argument needs no reduction by 2π
    (the general sin and cos carry a slow path for large arguments, and a stack array for it),
    and 2v is exact."""
    from numba.cuda import libdevice

    def s32(v):
        return libdevice.sincospif(v + v)

    def s64(v):
        return libdevice.sincospi(v + v)
    return s32, s64


def _build(jit, step=_next, sincos=(_sincos_2pi_32, _sincos_2pi_64)):
    """The generator's helpers compiled with `jit` (a CUDA device decorator or njit)."""
    nxt = jit(step)
    sincos32, sincos64 = jit(sincos[0]), jit(sincos[1])

    def uniform32(s0, s1):
        r, s0, s1 = nxt(s0, s1)
        a = float32(uint32(r >> _R40)) * _INV24
        b = float32(uint32((r >> _R16) & _MASK24)) * _INV24
        return a, b, s0, s1

    def normal32(s0, s1):
        r, s0, s1 = nxt(s0, s1)
        u = float32(uint32(r >> _R40)) * _INV24
        v = float32(uint32((r >> _R16) & _MASK24)) * _INV24
        rad = math.sqrt(_M2_32 * math.log(_ONE32 - u))
        sn, cs = sincos32(v)
        return float32(rad * cs), float32(rad * sn), s0, s1

    def uniform64(s0, s1):
        r, s0, s1 = nxt(s0, s1)
        a = float64(r >> _R11) * _INV53
        r, s0, s1 = nxt(s0, s1)
        b = float64(r >> _R11) * _INV53
        return a, b, s0, s1

    def normal64(s0, s1):
        r, s0, s1 = nxt(s0, s1)
        u = float64(r >> _R11) * _INV53
        r, s0, s1 = nxt(s0, s1)
        v = float64(r >> _R11) * _INV53
        rad = math.sqrt(_M2_64 * math.log(_ONE64 - u))
        sn, cs = sincos64(v)
        return rad * cs, rad * sn, s0, s1

    def inside(s0, s1):
        """1 when the draw's point of the unit square lies in the quarter disc, else 0."""
        r, s0, s1 = nxt(s0, s1)
        x = uint64(_TWO_U * (r >> _R40) + _ONE_U)
        y = uint64(_TWO_U * ((r >> _R16) & _MASK24) + _ONE_U)
        hit = 1 if uint64(x * x + y * y) <= _R2_50 else 0
        return hit, s0, s1

    def mix(z):
        """splitmix64's output function."""
        z = uint64(uint64(z ^ (z >> _R30)) * _MIX1)
        z = uint64(uint64(z ^ (z >> _R27)) * _MIX2)
        return uint64(z ^ (z >> _R31))

    return {"next": nxt, "uniform32": jit(uniform32), "normal32": jit(normal32),
            "uniform64": jit(uniform64), "normal64": jit(normal64), "inside": jit(inside),
            "mix": jit(mix)}


if not cuda_imported():   # stand-ins that say why, if ever called
    DEV = _build(cuda.jit(device=True))
elif simulator_enabled():
    DEV = _build(cuda.jit(device=True), _next_simulated)
else:
    DEV = _build(cuda.jit(device=True), _next, _device_sincos_2pi())
CPU = _build(njit)
_cpu_u32, _cpu_n32 = CPU["uniform32"], CPU["normal32"]
_cpu_u64, _cpu_n64 = CPU["uniform64"], CPU["normal64"]
cpu_inside, cpu_mix = CPU["inside"], CPU["mix"]
_cpu_next = CPU["next"]


def pair_name(dtype: str, normal: bool) -> str:
    return ("normal" if normal else "uniform") + ("32" if dtype == "float32" else "64")


# ---- GPU ----------------------------------------------------------------------------------------
@functools.cache
def group_function(dtype: str, normal: bool):
    """A device function `group(s0, s1) -> (values, s0, s1)`: the next GROUP[dtype] values (16
    bytes) of one thread, made from two draws."""
    pair = DEV[pair_name(dtype, normal)]
    if GROUP[dtype] == 2:      # float64: one pair is two draws
        @cuda.jit(device=True)
        def group(s0, s1):
            a, b, s0, s1 = pair(s0, s1)
            return (a, b), s0, s1
        return group

    @cuda.jit(device=True)
    def group4(s0, s1):
        a, b, s0, s1 = pair(s0, s1)
        c, d, s0, s1 = pair(s0, s1)
        return (a, b, c, d), s0, s1
    return group4


def _generate(out, start, count, states_in, states_out):
    """The generation kernel's code; compiled as a twin per (dtype, distribution) with `_group`
    and `_width` its own (generate_kernel)."""
    t = cuda.grid(1)
    threads = cuda.gridsize(1)
    s0 = states_in[t]["s0"]   # loaded once ...
    s1 = states_in[t]["s1"]
    full = count // _width
    q = t
    while q < full:
        values, s0, s1 = _group(s0, s1)
        store16(out, start + q * _width, values)
        q += threads
    rest = count - full * _width
    if q == full and rest > 0:
        values, s0, s1 = _group(s0, s1)
        e = start + full * _width
        for j in range(rest):
            out[e + j] = values[j]
    states_out[t]["s0"] = s0  # ... and stored once
    states_out[t]["s1"] = s1


_group = _width = None       # each twin of _generate reads its own


@functools.cache
def generate_kernel(dtype: str, normal: bool):
    """kernel[blocks, tpb, stream](out, start, count, states_in, states_out) fills
    out[start:start+count]; `start` is a multiple of GROUP[dtype], out's data are 16-byte aligned,
    and the grid has exactly one thread per state.

    Group q (elements start + GROUP·q ...) is written by thread q % threads with its
    (q // threads)-th two draws, in one 16-byte store; the last, partial group (when count is not
    a multiple of GROUP) by the thread whose turn it is, element by element. A twin under a name
    of its own rather than a closure: numba's disk cache serves it to the next start."""
    fn = twin(_generate, f"generate_{pair_name(dtype, normal)}",
              _group=group_function(dtype, normal), _width=GROUP[dtype])
    return cuda.jit(cache=True)(fn)


def _numba_random():
    """numba.cuda.random, imported quietly: under the simulator its module asks for object mode,
    which numba warns about at import."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from numba.cuda import random
    return random


# xoroshiro128+'s jump polynomial (Blackman and Vigna): 2^64 steps ahead
_JUMP = np.array([0xBEAC0467EBA5FACB, 0xD86B048B86AA9922], dtype=np.uint64)


@njit(cache=True)
def _jumped_states(seed, s0, s1):
    """Generator 0 seeded by splitmix64 as numba.cuda.random seeds it (s0 = s1), each next one
    the previous one jumped 2^64 steps. Here, cached: numba's own initialiser is compiled at every
    start, before a run's first numbers."""
    z = uint64(uint64(seed) + GOLDEN)
    z = uint64((z ^ (z >> _R30)) * _MIX1)
    z = uint64((z ^ (z >> _R27)) * _MIX2)
    z = uint64(z ^ (z >> _R31))
    a, b = z, z
    for i in range(s0.size):
        if i > 0:
            j0, j1 = uint64(0), uint64(0)
            for w in range(2):
                for bit in range(64):
                    if _JUMP[w] & (_ONE_U << uint64(bit)):
                        j0 ^= a
                        j1 ^= b
                    _, a, b = _cpu_next(a, b)
            a, b = j0, j1
        s0[i] = a
        s1[i] = b


def initial_states(seed: int, count: int) -> np.ndarray:
    """numba.cuda.random's initial states for `seed`, made on the host: `count` generators, each
    2^64 steps after the previous one (what `init_xoroshiro128p_states` copies to the device;
    tests/kernels/test_rng.py checks them against numba's own)."""
    states = np.empty(count, dtype=_numba_random().xoroshiro128p_dtype)
    s0, s1 = np.empty(count, np.uint64), np.empty(count, np.uint64)
    _jumped_states(np.uint64(seed), s0, s1)
    states["s0"], states["s1"] = s0, s1
    return states


def state_dtype():
    return _numba_random().xoroshiro128p_dtype


# ---- CPU twin -----------------------------------------------------------------------------------
@njit(cache=True)
def chunk_state(seed, k):
    """The starting state of CPU chunk k: splitmix64's outputs 2k+1 and 2k+2 for `seed`."""
    base = uint64(uint64(seed) + uint64(uint64(2) * uint64(k)) * GOLDEN)
    s0 = cpu_mix(uint64(base + GOLDEN))
    s1 = cpu_mix(uint64(base + GOLDEN + GOLDEN))
    if s0 == 0 and s1 == 0:
        s1 = uint64(1)
    return s0, s1


@njit(cache=True)
def _fill_u32(o, s0, s1):
    m = o.size
    i = 0
    while i + 1 < m:
        a, b, s0, s1 = _cpu_u32(s0, s1)
        o[i] = a
        o[i + 1] = b
        i += 2
    if i < m:
        a, b, s0, s1 = _cpu_u32(s0, s1)
        o[i] = a


@njit(cache=True)
def _fill_n32(o, s0, s1):
    m = o.size
    i = 0
    while i + 1 < m:
        a, b, s0, s1 = _cpu_n32(s0, s1)
        o[i] = a
        o[i + 1] = b
        i += 2
    if i < m:
        a, b, s0, s1 = _cpu_n32(s0, s1)
        o[i] = a


@njit(cache=True)
def _fill_u64(o, s0, s1):
    m = o.size
    i = 0
    while i + 1 < m:
        a, b, s0, s1 = _cpu_u64(s0, s1)
        o[i] = a
        o[i + 1] = b
        i += 2
    if i < m:
        a, b, s0, s1 = _cpu_u64(s0, s1)
        o[i] = a


@njit(cache=True)
def _fill_n64(o, s0, s1):
    m = o.size
    i = 0
    while i + 1 < m:
        a, b, s0, s1 = _cpu_n64(s0, s1)
        o[i] = a
        o[i + 1] = b
        i += 2
    if i < m:
        a, b, s0, s1 = _cpu_n64(s0, s1)
        o[i] = a


@njit(parallel=True, cache=True)
def cpu_fill(out, first_chunk, last_chunk, seed, kind):
    """Fill chunks [first_chunk, last_chunk) of `out` (kind: 0 uniform32, 1 normal32,
    2 uniform64, 3 normal64)."""
    n = out.size
    for k in prange(first_chunk, last_chunk):
        s0, s1 = chunk_state(seed, k)
        e = k * CPU_CHUNK
        o = out[e:min(e + CPU_CHUNK, n)]   # a view indexed from 0: no range fix-ups per store
        if kind == 0:
            _fill_u32(o, s0, s1)
        elif kind == 1:
            _fill_n32(o, s0, s1)
        elif kind == 2:
            _fill_u64(o, s0, s1)
        else:
            _fill_n64(o, s0, s1)


def cpu_kind(dtype: str, normal: bool) -> int:
    return (1 if normal else 0) + (0 if dtype == "float32" else 2)


def cpu_chunks(n: int) -> int:
    return (n + CPU_CHUNK - 1) // CPU_CHUNK


# ---- a slow, obvious reference (tests) ----------------------------------------------------------
def reference_stream(s0: int, s1: int, count: int) -> list[int]:
    """`count` xoroshiro128+ outputs from (s0, s1), in Python integers."""
    m = (1 << 64) - 1
    out = []
    for _ in range(count):
        out.append((s0 + s1) & m)
        s1 ^= s0
        s0 = (((s0 << 55) | (s0 >> 9)) & m) ^ s1 ^ ((s1 << 14) & m)
        s1 = ((s1 << 36) | (s1 >> 28)) & m
    return out
