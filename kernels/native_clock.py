"""CPU kernels timed from inside compiled code, so that no wait for the GIL enters their time.

A wall clock read in Python around a CPU kernel counts the wait for the GIL after it: a numba
kernel returns, another Python thread (a repainting window) holds the GIL for up to the switch
interval (5 ms), and only then can the caller read the clock (docs/PERFORMANCE.md, "Honest GPU
times"). `timed(kernel)` wraps a numba kernel in a compiled function that reads CLOCK_MONOTONIC
itself just before and after the call, and releases the GIL meanwhile. `thread_ms(fn)` times a NumPy call by
its thread's CPU time (a ufunc runs on the calling thread only and does not count a wait).
"""
from __future__ import annotations

import time

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .closure_cache import cache_closure

NATIVE = "native clock (inside the compiled kernel)"
THREAD_CPU = "thread CPU time"

_CLOCK_MONOTONIC = int(getattr(time, "CLOCK_MONOTONIC", 1))    # 1 on Linux, 6 on macOS
_CLOCK_THREAD_CPU = int(getattr(time, "CLOCK_THREAD_CPUTIME_ID", 3))    # 3 on Linux, 16 on macOS


def _clock_intrinsic(clock_id: int, doc: str):
    @intrinsic
    def read(typingctx):
        def codegen(context, builder, sig, args):
            i64, i32 = ir.IntType(64), ir.IntType(32)
            spec = cgutils.alloca_once(builder, ir.ArrayType(i64, 2))
            fnty = ir.FunctionType(i32, [i32, ir.PointerType(ir.IntType(8))])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
            builder.call(fn, [ir.Constant(i32, clock_id),
                              builder.bitcast(spec, ir.PointerType(ir.IntType(8)))])
            sec = builder.load(builder.gep(spec, [ir.Constant(i32, 0), ir.Constant(i32, 0)]))
            nsec = builder.load(builder.gep(spec, [ir.Constant(i32, 0), ir.Constant(i32, 1)]))
            return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)
        return types.int64(), codegen
    read.__doc__ = doc
    return read


# libc's clock_gettime called from compiled code (declared, not a ctypes address: the functions
# calling it can be cached on disk)
_now_ns = _clock_intrinsic(_CLOCK_MONOTONIC, "CLOCK_MONOTONIC in nanoseconds.")
_thread_cpu_ns = _clock_intrinsic(_CLOCK_THREAD_CPU, "The calling thread's CPU time in nanoseconds.")


def timed(kernel):
    """`kernel` (a numba CPU function) as f(*args) -> milliseconds it ran. A serial kernel runs
    with the GIL released; a parallel one with it held, so that its region's own take of the GIL
    at the start waits for nobody (the take at its end still can: cpu_chunks.stamped)."""
    if getattr(kernel, "targetoptions", {}).get("parallel"):
        @njit
        def run(*args):
            t0 = _now_ns()
            kernel(*args)
            return (_now_ns() - t0) * 1e-6
    else:
        @njit(nogil=True)
        def run(*args):
            t0 = _now_ns()
            kernel(*args)
            return (_now_ns() - t0) * 1e-6
    # cache=True keyed the closure by a per-process uuid: a compile at every start (closure_cache)
    return cache_closure(run)


_wrapped: dict = {}


def timed_cached(kernel):
    """timed(kernel), made once per kernel."""
    got = _wrapped.get(kernel)
    if got is None:
        got = _wrapped[kernel] = timed(kernel)
    return got


def thread_ms(fn, *args) -> float:
    """Milliseconds of this thread's CPU time that fn(*args) took."""
    t0 = time.thread_time_ns()
    fn(*args)
    return (time.thread_time_ns() - t0) * 1e-6
