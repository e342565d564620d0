"""Parallel CPU loops timed from inside their parallel region, so that neither a wait for the GIL
nor a thread the OS wakes late enters their time.

numba's parallel region takes the GIL back when it ends: beside a busy Python thread (a repainting
window) that wait, up to the switch interval, was inside any clock read around the call, even a
clock read in compiled code (native_clock). Here each of the region's threads writes the time it
finished a piece of work into a control block (`stamp`, an atomic max), and the span is the last
stamp less a clock read taken just before the region, which starts without waiting because the
caller holds the GIL (`stamped`).

A loop may also hand out its pieces on demand (`claim`, an atomic counter): with a static split a
thread that the OS wakes milliseconds late (two cores, one taken by the busy thread) holds the
whole loop up, while with claimed pieces the threads already running take its share.

The control block (int64): [FLAG] a cancel flag another thread may set (the Mandelbrot rows
kernels read it, escape._read_flag); [COUNTER] the next piece to claim; [END] the latest stamp.
No thread id is read in the loop: numba's get_thread_id is a dynamic global, which would stop the
kernels being cached on disk.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .closure_cache import cache_closure
from .native_clock import _now_ns

FLAG, COUNTER, END = 0, 1, 2
STAMPED = "native clock (stamped inside the parallel loop)"


def control() -> np.ndarray:
    """A control block for a stamped kernel."""
    return np.zeros(END + 1, dtype=np.int64)


def _is_control(ctl):
    return isinstance(ctl, types.Array) and ctl.ndim == 1 and ctl.dtype == types.int64


@intrinsic
def claim(typingctx, ctl):
    """The next piece's number, ctl[COUNTER] incremented atomically (each piece goes to one
    thread, whichever asks first)."""
    if not _is_control(ctl):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [ir.Constant(ir.IntType(64), COUNTER)])
        return builder.atomic_rmw("add", ptr, ir.Constant(ir.IntType(64), 1), "monotonic")
    return types.int64(ctl), codegen


@intrinsic
def _stamp_max(typingctx, ctl, t):
    if not _is_control(ctl):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [ir.Constant(ir.IntType(64), END)])
        builder.atomic_rmw("max", ptr, args[1], "monotonic")
        return context.get_dummy_value()
    return types.none(ctl, types.int64), codegen


@njit(inline="always")
def stamp(ctl):
    """A thread finished a piece now: ctl[END] = max(ctl[END], now), atomically."""
    _stamp_max(ctl, _now_ns())


@njit(inline="always")
def piece(c, n, pieces):
    """[lo, hi) of piece c of n items cut in `pieces` nearly equal pieces."""
    return c * n // pieces, (c + 1) * n // pieces


@njit
def reset(ctl):
    """Counter and stamps to 0; the cancel flag is the caller's and stays."""
    for i in range(COUNTER, ctl.size):
        ctl[i] = 0


def stamped(kernel):
    """`kernel(*args, ctl)` (a numba parallel function that stamps ctl) as f(*args, ctl) -> the
    milliseconds from just before its parallel region to its last stamp.

    Compiled without nogil: holding the GIL, the region's own take of the GIL at its start is
    immediate, so the clock read before it counts no wait either."""
    @njit
    def run(*args):
        ctl = args[-1]
        reset(ctl)
        t0 = _now_ns()
        kernel(*args)
        end = ctl[END]
        if end < t0:                    # no piece of work at all
            end = _now_ns()
        return (end - t0) * 1e-6
    return cache_closure(run)


_wrapped: dict = {}


def stamped_cached(kernel):
    """stamped(kernel), made once per kernel."""
    got = _wrapped.get(kernel)
    if got is None:
        got = _wrapped[kernel] = stamped(kernel)
    return got
