"""The arithmetic microbenchmark: independent multiply-add chains, for the GPU and the CPU.

Every thread (a CUDA thread, or a slot of a numba prange loop) runs `CHAINS` chains
a ← a·x + y for n_iter steps and stores their sum, so nothing is left for the compiler to drop.
Floats use a fused multiply-add (cuda.fma on the GPU; fastmath contraction on the CPU), int32
an integer multiply-add; each step counts 2 operations, as the vendors' peak figures do.
Independent chains hide the latency of one multiply-add behind the others; x < 1 and y > 0 keep
floats near 1 (no overflow, no denormals), and int32 wraps by design.

The kernels are written out chain by chain from one template: numba keeps named scalars in
registers, where an array of chains would go through memory at every step.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..backend import numba_cuda

cuda = numba_cuda()

GPU_CHAINS = 8
CPU_CHAINS = 16
KIND_DTYPES = {"f32": np.float32, "f64": np.float64, "int32": np.int32}
# the chains' constants: x < 1 pulls floats toward y/(1-x) = 1; the int32 pair is an LCG's
CONSTANTS = {"f32": (0.999, 0.001), "f64": (0.999, 0.001), "int32": (1664525, 1013904223)}


def constants(kind: str):
    dt = KIND_DTYPES[kind]
    x, y = CONSTANTS[kind]
    return dt(x), dt(y)


def _source(kind: str, chains: int, gpu: bool) -> str:
    """The kernel's Python source: `kernel(out, n_iter, x, y)`."""
    if kind == "int32":
        step = "a{j} = cast(a{j} * x + y)"          # int32 × int32 is int64 in numba: cut back
    elif gpu:
        step = "a{j} = cuda.fma(a{j}, x, y)"
    else:
        step = "a{j} = a{j} * x + y"                # contracted to an FMA under fastmath
    start = "a{j} = cast((i * %d + {j}) %% 1024)" % chains
    if kind != "int32":
        start += " * cast(0.0009765625)"            # floats start in [0, 1)
    head = ["def kernel(out, n_iter, x, y):"]
    if gpu:
        head += ["    i = cuda.grid(1)", "    if i < out.shape[0]:"]
    else:
        head += ["    for i in prange(out.shape[0]):"]
    ind = " " * 8
    body = [ind + start.format(j=j) for j in range(chains)]
    body += [ind + "for _ in range(n_iter):"]
    body += [ind + "    " + step.format(j=j) for j in range(chains)]
    body += [ind + "out[i] = " + " + ".join(f"a{j}" for j in range(chains))]
    return "\n".join(head + body) + "\n"


def _build(kind: str, chains: int, gpu: bool):
    namespace = {"cuda": cuda, "prange": prange, "cast": KIND_DTYPES[kind]}
    exec(compile(_source(kind, chains, gpu), f"<roofs {kind} chains>", "exec"), namespace)
    fn = namespace["kernel"]
    if gpu:
        return cuda.jit(fn)
    return njit(parallel=True, fastmath=(kind != "int32"))(fn)


_compiled: dict = {}


def kernel(kind: str, gpu: bool):
    """The compiled chain kernel of `kind` for the GPU or the CPU (built once per process)."""
    key = (kind, gpu)
    if key not in _compiled:
        _compiled[key] = _build(kind, GPU_CHAINS if gpu else CPU_CHAINS, gpu)
    return _compiled[key]


def chains(gpu: bool) -> int:
    return GPU_CHAINS if gpu else CPU_CHAINS


def ops(threads: int, n_iter: int, gpu: bool) -> int:
    """Operations one launch counts: 2 per multiply-add."""
    return 2 * int(threads) * int(n_iter) * chains(gpu)


def expected(kind: str, i: int, n_iter: int, gpu: bool):
    """What thread i stores, computed step by step in NumPy (int32 exactly; floats without the
    FMA's single rounding, so close but not equal)."""
    dt = KIND_DTYPES[kind]
    x, y = constants(kind)
    n = chains(gpu)
    with np.errstate(over="ignore"):
        a = np.array([(i * n + j) % 1024 for j in range(n)], dtype=np.int64).astype(dt)
        if kind != "int32":
            a = a * dt(0.0009765625)
        for _ in range(n_iter):
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
