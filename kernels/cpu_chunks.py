"""Parallel CPU loops timed from inside their parallel region, so that neither a wait for the GIL
nor a thread the OS sets aside enters their time.

numba's parallel region takes the GIL back when it ends: beside a busy Python thread (a repainting
window) that wait, up to the switch interval, was inside any clock read around the call, even a
clock read in compiled code (native_clock). Here each of the loop's threads reads the clocks itself
(`enter` before its first piece, `leave` after its last) and the span is from the first start to
the last end (`stamped`).

A thread's end counts only the time it ran: its start plus the lesser of its wall and CPU time,
so a stretch in which the OS set it aside, piece in hand, is the OS's, as a host pause is on the
GPU's clock. Real contention still shows: the pieces are handed out on demand (`claim`, an atomic
counter) to `ctl[WORKERS]` loops, one per thread, so a core lost to another thread leaves its
pieces to the threads that run, and a thread that runs slower beside a busy one counts as slower.
(The GIL released at the region's start wakes a waiting Python thread beside the loop's threads:
docs/PERFORMANCE.md, "Honest CPU times", says what that costs on two cores.) The CPU clock is a
system call, read twice per thread and outside the span: before the wall clock at the start, after
it at the end.

The control block (int64): [FLAG] a cancel flag another thread may set (the Mandelbrot rows kernels
read it, escape._read_flag); [COUNTER] the next piece to claim; [END] the latest end; [WORKERS]
how many loops to start (numba's thread count, set by `stamped`'s caller: get_num_threads inside a
kernel is a dynamic global, which would stop the kernels being cached on disk); [START] the
earliest start; [CPU] the CPU time the threads that ran a piece spent in the loop (`cpu_ms`: a
span longer than that holds a stretch in which none of them ran).
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .native_clock import _now_ns, _thread_cpu_ns

FLAG, COUNTER, END, WORKERS, START, CPU = 0, 1, 2, 3, 4, 5
_NOT_YET = np.iinfo(np.int64).max
STAMPED = "native clock (stamped inside the parallel loop)"


def control() -> np.ndarray:
    """A control block for a stamped kernel."""
    ctl = np.zeros(CPU + 1, dtype=np.int64)
    ctl[WORKERS] = numba.get_num_threads()
    return ctl


def _is_control(ctl):
    return isinstance(ctl, types.Array) and ctl.ndim == 1 and ctl.dtype == types.int64


def _atomic(op: str, index: int, doc: str):
    @intrinsic
    def rmw(typingctx, ctl, value):
        if not _is_control(ctl):
            return None

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            ptr = builder.gep(ary.data, [ir.Constant(ir.IntType(64), index)])
            return builder.atomic_rmw(op, ptr, args[1], "monotonic")
        return types.int64(ctl, types.int64), codegen
    rmw.__doc__ = doc
    return rmw


_fetch_add = _atomic("add", COUNTER, "ctl[COUNTER] += value, atomically; the value before.")
_fetch_max = _atomic("max", END, "ctl[END] = max(ctl[END], value), atomically.")
_fetch_min = _atomic("min", START, "ctl[START] = min(ctl[START], value), atomically.")
_add_cpu = _atomic("add", CPU, "ctl[CPU] += value, atomically.")


@njit(inline="always")
def claim(ctl):
    """The next piece's number (each piece goes to one thread, whichever asks first)."""
    return _fetch_add(ctl, 1)


@njit(inline="always")
def enter():
    """A loop thread starts: (its CPU clock, then the wall clock), both in ns."""
    cpu = _thread_cpu_ns()
    return cpu, _now_ns()


@njit(inline="always")
def leave(ctl, clocks, ran):
    """A loop thread is done; if it ran a piece, ctl[START] = min(ctl[START], its start) and
    ctl[END] = max(ctl[END], its start + the lesser of its wall and CPU time), atomically."""
    if ran:
        wall = _now_ns() - clocks[1]
        cpu = _thread_cpu_ns() - clocks[0]
        _fetch_min(ctl, clocks[1])
        _fetch_max(ctl, clocks[1] + min(wall, cpu))
        _add_cpu(ctl, cpu)


@njit(inline="always")
def piece(c, n, pieces):
    """[lo, hi) of piece c of n items cut in `pieces` nearly equal pieces."""
    return c * n // pieces, (c + 1) * n // pieces


@njit(inline="always")
def reset(ctl):
    """Counter and stamps cleared; the cancel flag and the workers are the caller's and stay. A
    stamped kernel calls it before its parallel loop, so a control block serves call after call."""
    ctl[COUNTER] = 0
    ctl[END] = 0
    ctl[START] = _NOT_YET
    ctl[CPU] = 0


def span_ms(ctl) -> float:
    """Milliseconds from the first piece's start to the last piece's end (0: no piece ran)."""
    if ctl[START] == _NOT_YET:
        return 0.0
    return float(ctl[END] - ctl[START]) * 1e-6


def cpu_ms(ctl) -> float:
    """Milliseconds of CPU time the loop's threads that ran a piece spent in it."""
    return float(ctl[CPU]) * 1e-6


def stamped(kernel):
    """`kernel(*args, ctl)` (a numba parallel function whose threads `enter` and `leave` ctl)
    as f(*args, ctl) -> span_ms: ctl[WORKERS] set to numba's thread count, the kernel run.

    From the first piece, not from the call: the thread pool's wake-up before it is the runtime's,
    as a GPU kernel's time leaves its launch out (a fresh process's pool can take milliseconds to
    wake: docs/PERFORMANCE.md, "Honest CPU times")."""
    def call(*args):
        ctl = args[-1]
        ctl[WORKERS] = numba.get_num_threads()
        kernel(*args)
        return span_ms(ctl)
    return call
