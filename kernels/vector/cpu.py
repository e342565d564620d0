"""The vector ops on the CPU: numba parallel loops (the GPU kernels' twins) and NumPy ufuncs writing
into the caller's arrays. Both take NumPy arrays and ignore the stream argument, and return the
milliseconds they ran by a clock no wait for the GIL enters (None: time them from outside).

dot: the numba loop sums float64 products of the float32 inputs, as the GPU kernel does; NumPy's
np.dot on float32 vectors is BLAS sdot, which sums in float32 (what a NumPy user gets), so its
result agrees with the others to about 1e-6 relative rather than 1e-12."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit, prange

from ..native_clock import thread_ms, timed
from .ops import SEED_FIVE, SEED_TEN, SEED_TWO


# ---- numba parallel loops ------------------------------------------------------------------------
@njit(parallel=True, cache=True)
def _cpu_copy(a, out):
    for i in prange(out.size):
        out[i] = a[i]


@njit(parallel=True, cache=True)
def _cpu_scale(a, out, s):
    for i in prange(out.size):
        out[i] = s * a[i]


@njit(parallel=True, cache=True)
def _cpu_add(a, b, out):
    for i in prange(out.size):
        out[i] = a[i] + b[i]


@njit(parallel=True, cache=True)
def _cpu_triad(b, c, out, s):
    for i in prange(out.size):
        out[i] = b[i] + s * c[i]


@njit(parallel=True, cache=True)
def _cpu_saxpy(x, y, s):
    for i in prange(y.size):
        y[i] = s * x[i] + y[i]


@njit(parallel=True, cache=True)
def _cpu_seed(a, b, out):
    for i in prange(out.size):
        a10 = a[i] * SEED_TEN + SEED_TWO
        out[i] = a10 * ((b[i] + SEED_TWO) * SEED_TEN - SEED_FIVE) * SEED_FIVE


@njit(parallel=True, cache=True)
def _cpu_dot(a, b, out):
    acc = 0.0
    for i in prange(a.size):
        acc += np.float64(a[i]) * np.float64(b[i])
    out[0] = acc


def numba_ops() -> dict[str, Callable]:
    """Each op returns the milliseconds it ran, read inside compiled code (native_clock.timed):
    a wait for the GIL after the loop is not the loop's time."""
    copy, scale, add, triad = (timed(k) for k in (_cpu_copy, _cpu_scale, _cpu_add, _cpu_triad))
    saxpy, seed, dot = (timed(k) for k in (_cpu_saxpy, _cpu_seed, _cpu_dot))
    return {
        "copy": lambda ins, out, s, stream=None: copy(ins[0], out),
        "scale": lambda ins, out, s, stream=None: scale(ins[0], out, np.float32(s)),
        "add": lambda ins, out, s, stream=None: add(ins[0], ins[1], out),
        "triad": lambda ins, out, s, stream=None: triad(ins[0], ins[1], out, np.float32(s)),
        "saxpy": lambda ins, out, s, stream=None: saxpy(ins[0], ins[1], np.float32(s)),
        "seed-expr": lambda ins, out, s, stream=None: seed(ins[0], ins[1], out),
        "dot": lambda ins, out, s, stream=None: dot(ins[0], ins[1], out),
    }


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
