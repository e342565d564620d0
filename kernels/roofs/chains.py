"""The arithmetic microbenchmark: independent multiply-add chains, for the GPU and the CPU.

Every GPU thread or CPU slot (one per numba thread) runs its chains a ← a·x + y for n_iter steps
and stores their sum, so nothing is left for the compiler to drop. Floats use a fused multiply-add
(cuda.fma on the GPU; fastmath contraction on the CPU), int32 an integer multiply-add; each step
counts 2 operations, as the vendors' peak figures do. Independent chains hide the latency of one
multiply-add behind the others; x < 1 and y > 0 keep floats near 1 (no overflow, no denormals),
and int32 wraps by design.

The GPU kernels are written out chain by chain from one template: a thread keeps named scalars in
registers. A CPU slot keeps its CPU_CHAINS chains in a small array whose step loop LLVM turns into
SIMD multiply-adds (AVX2: 8 float32 lanes), the code numba's own vectorised kernels run.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..backend import numba_cuda

cuda = numba_cuda()

GPU_CHAINS = 8
# chain steps written out in one loop trip: float32 FMAs issue one a cycle, so the loop's counter,
# compare and branch must be few beside them or they take the FMAs' issue slots
GPU_UNROLL = 16
CPU_CHAINS = 64
KIND_DTYPES = {"f32": np.float32, "f64": np.float64, "int32": np.int32}
# the chains' constants: x < 1 pulls floats toward y/(1-x) = 1; the int32 pair is an LCG's
CONSTANTS = {"f32": (0.999, 0.001), "f64": (0.999, 0.001), "int32": (1664525, 1013904223)}


def constants(kind: str):
    dt = KIND_DTYPES[kind]
    x, y = CONSTANTS[kind]
    return dt(x), dt(y)


def _gpu_source(kind: str, chains: int) -> str:
    """The GPU kernel's Python source: `kernel(out, n_iter, x, y)`, one thread per out[i], each
    of the n_iter loop trips GPU_UNROLL steps of every chain."""
    if kind == "int32":
        step = "a{j} = cast(a{j} * x + y)"          # int32 × int32 is int64 in numba: cut back
    else:
        step = "a{j} = cuda.fma(a{j}, x, y)"
    start = "a{j} = cast((i * %d + {j}) %% 1024)" % chains
    if kind != "int32":
        start += " * cast(0.0009765625)"            # floats start in [0, 1)
    lines = ["def kernel(out, n_iter, x, y):", "    i = cuda.grid(1)", "    if i < out.shape[0]:"]
    ind = " " * 8
    lines += [ind + start.format(j=j) for j in range(chains)]
    lines += [ind + "for _ in range(trips(n_iter)):"]     # an int32 counter: one instruction
    lines += [ind + "    " + step.format(j=j) for _ in range(GPU_UNROLL) for j in range(chains)]
    lines += [ind + "out[i] = " + " + ".join(f"a{j}" for j in range(chains))]
    return "\n".join(lines) + "\n"


def _build_gpu(kind: str):
    namespace = {"cuda": cuda, "cast": KIND_DTYPES[kind], "trips": np.int32}
    exec(compile(_gpu_source(kind, GPU_CHAINS), f"<roofs {kind} chains>", "exec"), namespace)
    return cuda.jit(namespace["kernel"])


def _chain_body(i, n_iter, x, y, like, scale):
    """One CPU slot's chains; `like` gives the number type, `scale` the start values' step."""
    a = np.empty(CPU_CHAINS, like.dtype)
    for j in range(CPU_CHAINS):
        a[j] = ((i * CPU_CHAINS + j) % 1024) * scale
    for _ in range(n_iter):
        for j in range(CPU_CHAINS):
            a[j] = a[j] * x + y
    total = a[0]
    for j in range(1, CPU_CHAINS):
        total += a[j]
    return total


_float_slot = njit(fastmath=True, cache=True)(_chain_body)
_int_slot = njit(cache=True)(_chain_body)


@njit(parallel=True, fastmath=True, cache=True)
def _cpu_float_chains(out, n_iter, x, y):
    for i in prange(out.shape[0]):
        out[i] = _float_slot(i, n_iter, x, y, out[:1], 0.0009765625)


@njit(parallel=True, cache=True)
def _cpu_int_chains(out, n_iter, x, y):
    for i in prange(out.shape[0]):
        out[i] = _int_slot(i, n_iter, x, y, out[:1], 1)


_compiled: dict = {}


def kernel(kind: str, gpu: bool):
    """The chain kernel of `kind` for the GPU (built once per process) or the CPU:
    kernel(out, n_iter, x, y) (on the GPU launched with one thread per element of out)."""
    if not gpu:
        return _cpu_int_chains if kind == "int32" else _cpu_float_chains
    if kind not in _compiled:
        _compiled[kind] = _build_gpu(kind)
    return _compiled[kind]


def chains(gpu: bool) -> int:
    return GPU_CHAINS if gpu else CPU_CHAINS


def steps(n_iter: int, gpu: bool) -> int:
    """Chain steps of n_iter loop trips (the GPU kernels write GPU_UNROLL steps in one trip)."""
    return int(n_iter) * (GPU_UNROLL if gpu else 1)


def ops(threads: int, n_iter: int, gpu: bool) -> int:
    """Operations one launch counts: 2 per multiply-add."""
    return 2 * int(threads) * steps(n_iter, gpu) * chains(gpu)


def expected(kind: str, i: int, n_iter: int, gpu: bool):
    """What thread i stores after n_iter loop trips, computed step by step in NumPy (int32
    exactly; floats without the FMA's single rounding, so close but not equal)."""
    dt = KIND_DTYPES[kind]
    x, y = constants(kind)
    n = chains(gpu)
    with np.errstate(over="ignore"):
        a = np.array([(i * n + j) % 1024 for j in range(n)], dtype=np.int64).astype(dt)
        if kind != "int32":
            a = a * dt(0.0009765625)
        for _ in range(steps(n_iter, gpu)):
            a = (a * x + y).astype(dt)
        return a.sum(dtype=dt)


def calibrate(time_ms, target_ms: float, start: int = 64, limit: int = 1 << 30,
              repeats: int = 3, min_n: int = 0) -> tuple[int, float]:
    """(n_iter, best ms): the chain length whose launch lasts at least `target_ms` (and has at
    least `min_n` steps, so a launch slowed by its own start-up never passes for a long one), and
    the fastest of `repeats` launches of it. `time_ms(n)` times one launch of n steps. Each length
    is judged by the faster of two launches, so one launch slowed by another process does not end
    the search early."""
    n = int(start)
    ms = min(time_ms(n), time_ms(n))
    while (ms < target_ms or n < min_n) and n < limit:
        grow = min(16.0, max(2.0, target_ms / max(ms, 1e-3)))
        n = min(limit, int(n * grow))
        ms = min(time_ms(n), time_ms(n))
    best = min([ms] + [time_ms(n) for _ in range(max(0, repeats - 1))])
    return n, best
