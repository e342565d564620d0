"""The vector ops on the CPU: numba parallel loops (the GPU kernels' twins) and NumPy ufuncs writing
into the caller's arrays. Both take NumPy arrays and ignore the stream argument, and return the
milliseconds they ran by a clock no wait for the GIL enters (None: time them from outside).

dot: the numba loop sums float64 products of the float32 inputs, as the GPU kernel does; NumPy's
np.dot on float32 vectors is BLAS sdot, which sums in float32 (what a NumPy user gets), so its
result agrees with the others to about 1e-6 relative rather than 1e-12."""
from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np
from numba import njit, prange

from ..cpu_chunks import WORKERS, claim, control, enter, leave, piece, reset, stamped
from ..native_clock import thread_ms
from .ops import SEED_FIVE, SEED_TEN, SEED_TWO


# ---- numba parallel loops ------------------------------------------------------------------------
# One loop for every op: its pieces are claimed by whichever thread is free, and each thread reads
# its own clocks (cpu_chunks), so neither a thread woken late or set aside nor the wait for the GIL
# after the loop enters the op's time. An op is a branch taken once per piece, outside the inner loop.
COPY, SCALE, ADD, TRIAD, SAXPY, SEED, DOT = range(7)
OPS = {"copy": COPY, "scale": SCALE, "add": ADD, "triad": TRIAD, "saxpy": SAXPY,
       "seed-expr": SEED, "dot": DOT}
# at least PIECE items a piece, at most 4 pieces a thread: more pieces cost more than they balance
# (each claim moves the control block's cache line between cores)
PIECE = 16384


@njit(cache=True)
def _piece_op(op, a, b, out, s):
    """One piece of an op on slices (unit stride, so each loop vectorises); DOT returns its sum."""
    acc = 0.0
    if op == COPY:
        for i in range(out.size):
            out[i] = a[i]
    elif op == SCALE:
        for i in range(out.size):
            out[i] = s * a[i]
    elif op == ADD:
        for i in range(out.size):
            out[i] = a[i] + b[i]
    elif op == TRIAD:
        for i in range(out.size):
            out[i] = a[i] + s * b[i]
    elif op == SAXPY:               # out is y: y = s * x + y
        for i in range(out.size):
            out[i] = s * a[i] + out[i]
    elif op == SEED:
        for i in range(out.size):
            a10 = a[i] * SEED_TEN + SEED_TWO
            out[i] = a10 * ((b[i] + SEED_TWO) * SEED_TEN - SEED_FIVE) * SEED_FIVE
    else:                           # DOT: float64 products of the float32 inputs, as on the GPU
        for i in range(a.size):
            acc += np.float64(a[i]) * np.float64(b[i])
    return acc


@njit(parallel=True, cache=True)
def _cpu_vec(op, a, b, out, s, parts, ctl):
    n = a.size
    pieces = parts.size
    reset(ctl)               # every call claims its pieces from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        c = claim(ctl)
        while c < pieces:
            ran = True
            lo, hi = piece(c, n, pieces)
            if op == DOT:
                parts[c] = _piece_op(op, a[lo:hi], b[lo:hi], out, s)
            else:
                _piece_op(op, a[lo:hi], b[lo:hi], out[lo:hi], s)
            c = claim(ctl)
        leave(ctl, clocks, ran)


def numba_ops() -> dict[str, Callable]:
    """Each op returns the milliseconds its loop ran, stamped inside the loop (cpu_chunks)."""
    run = stamped(_cpu_vec)
    ctl = control()
    state: dict = {}

    def parts_for(n):
        got = state.get("parts")
        pieces = max(1, min(n // PIECE, 4 * numba.get_num_threads()))
        if got is None or got.size != pieces:
            got = state["parts"] = np.zeros(pieces, dtype=np.float64)
        return got

    def op(code):
        def call(ins, out, s, stream=None):
            a = ins[0]
            b = ins[1] if len(ins) > 1 else a
            if code == SAXPY:           # ins = (x, y), y updated in place
                out = ins[1]
            parts = parts_for(a.size)
            ms = run(np.int64(code), a, b, out, np.float32(s), parts, ctl)
            if code == DOT:
                out[0] = parts.sum()    # in piece order: the same sum whichever thread took a piece
            return ms
        return call
    return {name: op(code) for name, code in OPS.items()}


# ---- NumPy: ufuncs writing into the caller's array, with one reused scratch array --------------
def numpy_ops() -> dict[str, Callable]:
    scratch: dict[int, np.ndarray] = {}

    def tmp(n):
        if n not in scratch:
            scratch.clear()
            scratch[n] = np.empty(n, dtype=np.float32)
        return scratch[n]

    def triad(ins, out, s, stream=None):
        b, c = ins
        np.multiply(c, np.float32(s), out=out)
        np.add(out, b, out=out)

    def saxpy(ins, out, s, stream=None):
        x, y = ins
        t = tmp(y.size)
        np.multiply(x, np.float32(s), out=t)
        np.add(y, t, out=y)

    def seed(ins, out, s, stream=None):
        a, b = ins
        t = tmp(out.size)
        np.multiply(a, SEED_TEN, out=out)
        np.add(out, SEED_TWO, out=out)
        np.add(b, SEED_TWO, out=t)
        np.multiply(t, SEED_TEN, out=t)
        np.subtract(t, SEED_FIVE, out=t)
        np.multiply(out, t, out=out)
        np.multiply(out, SEED_FIVE, out=out)

    def dot(ins, out, s, stream=None):
        out[0] = np.dot(ins[0], ins[1])

    def copy(ins, out, s, stream=None):
        np.copyto(out, ins[0])

    def scale(ins, out, s, stream=None):
        np.multiply(ins[0], np.float32(s), out=out)

    def add(ins, out, s, stream=None):
        np.add(ins[0], ins[1], out=out)

    # ufuncs run on the calling thread: its CPU time is theirs, without a wait for the GIL;
    # np.dot may run on BLAS's own threads, so it keeps the caller's wall clock (None)
    ops = {"copy": copy, "scale": scale, "add": add, "triad": triad, "saxpy": saxpy,
           "seed-expr": seed}
    out = {name: (lambda fn: lambda ins, o, s, stream=None: thread_ms(fn, ins, o, s))(fn)
           for name, fn in ops.items()}
    out["dot"] = dot
    return out
