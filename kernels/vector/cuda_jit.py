"""The vector ops as numba CUDA kernels: @cuda.jit (one element per thread, grid-stride, and four
elements per thread) and @vectorize(target='cuda') ufuncs. Imported only when a GPU implementation
first runs.

Each elementwise op is one element function, a device function `(a, b, s) -> value`; three
factories turn it into a kernel of each family (per-thread, stride, ilp4). A kernel is built on
first use of its (family, op) and compiles on its first launch, as the hand-written kernels it
replaces did (about 0.2 s each, 0.3 s for ilp4, NVVM to PTX on a 2-core host); `cache=True` keeps
the compiled code on disk across runs: numba-cuda keys a closure's cache entry on what it captured
(here the element function and `inplace`), so the six kernels of a family share an index file but
not an entry. dot, a reduction, has kernels of its own (dot_blocks, dot_final), in the stride
family. The ufuncs are built on first use because @vectorize with signatures compiles at
decoration.
"""
from __future__ import annotations

import numpy as np
from numba import float64, vectorize

from ..backend import first_line, numba_cuda
from .ops import (
    OPS,
    SCALAR,
    SEED_FIVE,
    SEED_TEN,
    SEED_TWO,
    THREADS_PER_BLOCK,
    ImplUnavailable,
)

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()


# ---- one element of each op: (a, b, s) -> value --------------------------------------------------
# Every kernel takes two input arrays and a scalar: a one-input op gets its input twice and ignores
# `b`, an op without a scalar ignores `s`. NVVM inlines these small functions, the unused loads
# become dead code and are dropped: compiled for sm_90, each factory-built kernel has the same
# loads, stores and instruction count as the hand-written kernel of its op it replaced (the seed
# expression one register move more).
@cuda.jit(device=True)
def copy_element(a, b, s):
    return a


@cuda.jit(device=True)
def scale_element(a, b, s):
    return s * a


@cuda.jit(device=True)
def add_element(a, b, s):
    return a + b


@cuda.jit(device=True)
def triad_element(b, c, s):
    return b + s * c


@cuda.jit(device=True)
def saxpy_element(x, y, s):
    return s * x + y


@cuda.jit(device=True)
def seed_element(a, b, s):
    return (a * SEED_TEN + SEED_TWO) * ((b + SEED_TWO) * SEED_TEN - SEED_FIVE) * SEED_FIVE


ELEMENTS = {"copy": copy_element, "scale": scale_element, "add": add_element,
            "triad": triad_element, "saxpy": saxpy_element, "seed-expr": seed_element}


# ---- the kernel families, each built from an element function ----------------------------------
# With `inplace` (saxpy: y = s·x + y) a kernel writes into `b` and ignores `out`, so the compiler
# knows the store goes where the second load came from, as in a kernel written for the op (given
# `out`, it computes a second address: 12 more instructions per ILP thread). `inplace` is a
# constant of the closure: the branch on it is gone after compilation.
def per_thread_kernel(element, inplace: bool = False):
    """One element per thread: the simplest mapping."""
    @cuda.jit(cache=True)
    def per_thread(a, b, out, s):
        dst = b if inplace else out
        i = cuda.grid(1)
        if i < dst.size:
            dst[i] = element(a[i], b[i], s)
    return per_thread


def stride_kernel(element, inplace: bool = False):
    """A grid-stride loop over a fixed grid sized to the device: measured against the above."""
    @cuda.jit(cache=True)
    def stride(a, b, out, s):
        dst = b if inplace else out
        for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
            dst[i] = element(a[i], b[i], s)
    return stride


@cuda.jit(device=True)
def _lane(j, n, i):
    return j if j < n else i


def ilp4_kernel(element, inplace: bool = False):
    """Four elements per thread (instruction-level parallelism): thread i handles i, i+q, i+2q, i+3q
    with q = ceil(n/4), so each of the four accesses is still coalesced across a warp.

    Every load is issued before any store: numba knows nothing of aliasing, so it keeps that order,
    and the four loads per input are in flight together. A one-element-per-thread kernel keeps only
    4 bytes per thread in flight, too few to saturate HBM3. Out-of-range lanes load element i again
    (always valid, no branch around the load) and skip their store. Unrolled by hand: a loop over
    a local array would leave the registers to the optimiser's goodwill."""
    @cuda.jit(cache=True)
    def ilp4(a, b, out, s, q):
        dst = b if inplace else out
        i = cuda.grid(1)
        if i < q:
            n = dst.size
            j1, j2, j3 = i + q, i + 2 * q, i + 3 * q
            k1, k2, k3 = _lane(j1, n, i), _lane(j2, n, i), _lane(j3, n, i)
            a0, a1, a2, a3 = a[i], a[k1], a[k2], a[k3]
            b0, b1, b2, b3 = b[i], b[k1], b[k2], b[k3]
            dst[i] = element(a0, b0, s)
            if j1 < n:
                dst[j1] = element(a1, b1, s)
            if j2 < n:
                dst[j2] = element(a2, b2, s)
            if j3 < n:
                dst[j3] = element(a3, b3, s)
    return ilp4


FACTORIES = {"per-thread": per_thread_kernel, "stride": stride_kernel, "ilp4": ilp4_kernel}
ILP = 4
# (family, op) -> the kernel, built on first use
KERNELS: dict[tuple[str, str], object] = {}
_stride_blocks: int | None = None


def kernel(variant: str, op_name: str):
    """The kernel of `variant` for `op_name`, built by its factory the first time it is needed."""
    k = KERNELS.get((variant, op_name))
    if k is None:
        k = FACTORIES[variant](ELEMENTS[op_name], inplace=OPS[op_name].inplace)
        KERNELS[(variant, op_name)] = k
    return k


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


# ---- dot: a reduction -------------------------------------------------------------------------
# A grid of a few blocks per SM (stride_blocks) runs a grid-stride loop, each thread summing the
# float64 products of its elements; each block then adds up its threads in shared memory and
# writes one partial sum; a second launch of one block adds up the partials. Two launches instead
# of an atomic add: nothing to zero first, and the same order (the same result) every run. The
# per-block sum uses shared memory rather than warp shuffles because numba's CUDA simulator, which
# the tests run on, has no shuffles; it runs once per block, after the loop that moves the bytes.
@cuda.jit(device=True)
def _block_sum(v, shared):
    """The sum of `v` over the block's THREADS_PER_BLOCK threads (a power of two), returned to
    every thread."""
    t = cuda.threadIdx.x
    shared[t] = v
    cuda.syncthreads()
    step = THREADS_PER_BLOCK // 2
    while step > 0:
        if t < step:
            shared[t] += shared[t + step]
        cuda.syncthreads()
        step //= 2
    return shared[0]


@cuda.jit(cache=True)
def dot_blocks(a, b, partials):
    shared = cuda.shared.array(THREADS_PER_BLOCK, float64)
    acc = float64(0.0)
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        acc += float64(a[i]) * float64(b[i])
    total = _block_sum(acc, shared)
    if cuda.threadIdx.x == 0:
        partials[cuda.blockIdx.x] = total


@cuda.jit(cache=True)
def dot_final(partials, out):
    shared = cuda.shared.array(THREADS_PER_BLOCK, float64)
    acc = float64(0.0)
    for i in range(cuda.threadIdx.x, partials.size, cuda.blockDim.x):
        acc += partials[i]
    total = _block_sum(acc, shared)
    if cuda.threadIdx.x == 0:
        out[0] = total


_partials: dict = {}   # (context, blocks) -> the device array of per-block sums, reused


def _dot_partials(blocks: int, stream):
    key = (id(cuda.current_context()), blocks)
    arr = _partials.get(key)
    if arr is None:
        _partials.clear()   # one size at a time: the block count only changes below a few blocks
        arr = _partials[key] = cuda.device_array(blocks, np.float64, stream=stream or 0)
    return arr


def run_dot(ins, out, stream=None):
    """out[0] = Σ a·b in float64; `out` is a one-element float64 device array."""
    a, b = ins
    # at least one block, so that N = 0 writes 0 rather than nothing
    blocks = max(1, min((a.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK, stride_blocks()))
    partials = _dot_partials(blocks, stream)
    dot_blocks[blocks, THREADS_PER_BLOCK, stream or 0](a, b, partials)
    dot_final[1, THREADS_PER_BLOCK, stream or 0](partials, out)


def kernel_args(op_name: str, ins, out, s) -> tuple:
    """(a, b, out, s) for every op: a one-input op passes its input as `b` too; saxpy's out is y."""
    a, b = (ins[0], ins[0]) if len(OPS[op_name].inputs) == 1 else (ins[0], ins[1])
    return a, b, out, np.float32(s)


def run_jit(variant: str, op_name: str, ins, out, s, stream=None):
    if OPS[op_name].reduction:
        if variant != "stride":
            raise ValueError(f"dot has a grid-stride kernel only, not {variant!r}")
        run_dot(ins, out, stream)
        return
    n = out.size
    if n == 0:
        return  # a launch with no blocks is an error, and there is nothing to do
    args = kernel_args(op_name, ins, out, s)
    blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    if variant == "stride":
        blocks = min(blocks, stride_blocks())
    elif variant == "ilp4":
        q = (n + ILP - 1) // ILP
        blocks = (q + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
        args = (*args, np.int64(q))
    kernel(variant, op_name)[blocks, THREADS_PER_BLOCK, stream or 0](*args)


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
