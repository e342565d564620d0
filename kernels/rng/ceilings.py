"""The write-only and read-only ceilings the rng bench measures its kernels against, in the same
run, on buffers of the same size and dtype: a fill (write a constant) and a read (a sum that
writes one value per block).

A generator only writes and a sum or a histogram only reads, so neither is compared fairly with a
copy, which does both; these two kernels do one thing each, as fast as this package knows how:
grid-stride loops over the resident threads (grid.py), 16-byte vector stores and loads
(kernels/wide_access.py), four independent accesses per thread per iteration so enough bytes
are in flight.
The fill also runs with plain 4- or 8-byte stores, one per thread per iteration; the faster of the
two is the write ceiling, so a generator that beats the vector fill is never over 100 % by
accident of the fill's shape. Bandwidth counts the bytes written (fill) or read (read) once.
"""
from __future__ import annotations

import functools

import numba
import numpy as np

from ..backend import numba_cuda
from . import grid
from .blocksum import block_sum
from .grid import threads_per_block
from ..wide_access import WIDTH, aligned, load16, store16

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

FILL_VALUE = 0.5


@functools.cache
def fill_kernel(dtype: str, vector: bool = True):
    """fill[blocks, tpb, stream](out, n, value): out[:n] = value; `vector` writes 16 bytes per
    store (out's data 16-byte aligned), else one element per store."""
    width = WIDTH[dtype]

    if not vector:
        @cuda.jit
        def fill_scalar(out, n, value):
            i = cuda.grid(1)
            threads = cuda.gridsize(1)
            while i < n:
                out[i] = value
                i += threads
        return fill_scalar

    if width == 4:
        @cuda.jit(device=True)
        def splat(v):
            return (v, v, v, v)
    else:
        @cuda.jit(device=True)
        def splat(v):
            return (v, v)

    @cuda.jit
    def fill(out, n, value):
        t = cuda.grid(1)
        threads = cuda.gridsize(1)
        vals = splat(value)
        full = n // width
        q = t
        while q + 3 * threads < full:
            store16(out, q * width, vals)
            store16(out, (q + threads) * width, vals)
            store16(out, (q + 2 * threads) * width, vals)
            store16(out, (q + 3 * threads) * width, vals)
            q += 4 * threads
        while q < full:
            store16(out, q * width, vals)
            q += threads
        if q == full:
            for e in range(full * width, n):
                out[e] = value

    return fill


@functools.cache
def read_kernel(nbtype, dtype: str):
    """read[blocks, tpb, stream](x, n, partials): partials[block] = the block's sum of x[:n],
    read with 16-byte loads, four in flight per thread (x's data 16-byte aligned)."""
    width = WIDTH[dtype]
    bsum = block_sum(nbtype, threads_per_block())
    zero = nbtype(0)

    if width == 4:
        @cuda.jit(device=True)
        def add(acc, v):
            return acc + ((v[0] + v[1]) + (v[2] + v[3]))
    else:
        @cuda.jit(device=True)
        def add(acc, v):
            return acc + (v[0] + v[1])

    @cuda.jit
    def read(x, n, partials):
        t = cuda.grid(1)
        threads = cuda.gridsize(1)
        full = n // width
        a0 = zero
        a1 = zero
        a2 = zero
        a3 = zero
        q = t
        while q + 3 * threads < full:
            v0 = load16(x, q * width)
            v1 = load16(x, (q + threads) * width)
            v2 = load16(x, (q + 2 * threads) * width)
            v3 = load16(x, (q + 3 * threads) * width)
            a0 = add(a0, v0)
            a1 = add(a1, v1)
            a2 = add(a2, v2)
            a3 = add(a3, v3)
            q += 4 * threads
        while q < full:
            a0 = add(a0, load16(x, q * width))
            q += threads
        if q == full:
            for e in range(full * width, n):
                a0 += x[e]
        s = bsum((a0 + a1) + (a2 + a3))
        if cuda.threadIdx.x == 0:
            partials[cuda.blockIdx.x] = s

    return read


# ---- measuring them ---------------------------------------------------------------------------------
def launch_blocks(kernel, args, n: int) -> int:
    """Resident blocks for this kernel, no more than n values need (one per thread)."""
    tpb = threads_per_block()
    return max(1, min(grid.resident_blocks(kernel, args, tpb), (n + tpb - 1) // tpb))


def _gbs(nbytes: int, ms) -> float | None:
    return None if not ms else nbytes / (ms * 1e-3) / 1e9


def measure(backend, dtype: str, n: int, repeats: int = 10) -> dict:
    """{"fill-vector", "fill-scalar", "write", "read": GB/s} for n values of `dtype` on a GPU
    backend (None where not timed, as under the simulator): the median of `repeats` launches
    after a warm-up, on a buffer allocated for the measurement and freed after it. "write" is the
    faster fill."""
    from ..bench import time_runs
    from ..timing import JobTimer
    stream = cuda.stream()
    buf = cuda.device_array(n, dtype=dtype, stream=stream)
    if not aligned(buf):
        raise RuntimeError("a device allocation that is not 16-byte aligned")
    value = np.dtype(dtype).type(FILL_VALUE)
    partials_probe = cuda.device_array(1, dtype=dtype, stream=stream)
    tpb = threads_per_block()
    nbytes = n * np.dtype(dtype).itemsize

    def timed(label, kernel, args):
        blocks = launch_blocks(kernel, args, n)

        def once():
            t = JobTimer(backend, stream, label)
            grid.hold_stream(stream)
            with t.phase("kernel", gpu=True):
                kernel[blocks, tpb, stream](*args)
            return t.finish()
        runs, _ = time_runs(once, repeats=repeats, warmup=1)
        vals = sorted(r.phases_ms["kernel"] for r in runs if r.phases_ms["kernel"] is not None)
        return _gbs(nbytes, vals[len(vals) // 2] if vals else None)

    out = {}
    for name, vector in (("fill-vector", True), ("fill-scalar", False)):
        out[name] = timed(name, fill_kernel(dtype, vector), (buf, n, value))
    good = [v for v in (out["fill-vector"], out["fill-scalar"]) if v]
    out["write"] = max(good) if good else None
    read = read_kernel(numba.from_dtype(np.dtype(dtype)), dtype)
    blocks = grid.resident_blocks(read, (buf, n, partials_probe), tpb)
    partials = cuda.device_array(blocks, dtype=dtype, stream=stream)
    out["read"] = timed("read", read, (buf, n, partials))
    stream.synchronize()
    del buf, partials
    return out
