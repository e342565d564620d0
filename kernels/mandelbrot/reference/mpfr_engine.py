"""The reference engine in compiled code: Z_{n+1} = Z_n^2 + C by MPFR's C API from numba, with no
Python per iteration. Three squarings an iteration (x², y², (x+y)²; y' = (x+y)² − x² − y² + cy,
x' = x² − y² + cx), as Kalles Fraktaler does: a square costs about half a multiply.

Same interface as reference_gmpy2.Gmpy2Engine (save / restore / load / last_hex / step): the
ReferenceOrbit drives either. The threaded variant is mpfr_threads.py.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..loops.escape import BAILOUT2
from ..numbers import mpfr_lib as M
from ..numbers.orbit_format import ESCAPE, EZERO, TINY

# rows of the engine's MpfrNumbers
X, Y, CX, CY, X2, Y2, T, S = range(8)
N_NUMBERS = 8


@njit(nogil=True, cache=True)
def floatexp_of(ax, ay, s):
    """Exact floatexp (mre, mim, e) of the MPFR pair at addresses ax, ay (s: a scratch number):
    both scaled by the larger exponent, each rounded once to a double."""
    zx, zy = M.zero_p(ax) != 0, M.zero_p(ay) != 0
    if zx and zy:
        return 0.0, 0.0, EZERO
    if zx:
        e = M.get_exp(ay)
    elif zy:
        e = M.get_exp(ax)
    else:
        e = max(M.get_exp(ax), M.get_exp(ay))
    M.mul_2si(s, ax, -e, M.RNDN)
    mre = M.get_d(s, M.RNDN)
    M.mul_2si(s, ay, -e, M.RNDN)
    mim = M.get_d(s, M.RNDN)
    return mre, mim, e


@njit(nogil=True, cache=True)
def combine(a):
    """Z = Z^2 + C from the squares x², y², (x+y)² at rows X2, Y2, T."""
    x, y, cx, cy, x2, y2, t = a[X], a[Y], a[CX], a[CY], a[X2], a[Y2], a[T]
    rn = M.RNDN
    M.sub(t, t, x2, rn)
    M.sub(t, t, y2, rn)
    M.add(y, t, cy, rn)
    M.sub(x, x2, y2, rn)
    M.add(x, x, cx, rn)


@njit(nogil=True, cache=True)
def record(a, k, out, nt, tiny_k, tiny_m, tiny_e):
    """Store the new Z as the k-th point of the chunk (out[k]; tiny_* where it is below float64's
    range); return (tiny points now, escaped)."""
    zr = M.get_d(a[X], M.RNDN)
    zi = M.get_d(a[Y], M.RNDN)
    out[k] = complex(zr, zi)
    r = math.hypot(zr, zi)
    if r > ESCAPE and zr * zr + zi * zi > BAILOUT2:
        return nt, True
    if r < TINY:
        mre, mim, e = floatexp_of(a[X], a[Y], a[S])
        tiny_k[nt] = k
        tiny_m[nt, 0] = mre
        tiny_m[nt, 1] = mim
        tiny_e[nt] = e
        nt += 1
    return nt, False


@njit(nogil=True, cache=True)
def iterate(a, count, out, tiny_k, tiny_m, tiny_e):
    """Up to `count` iterations of the numbers at addresses `a` (rows X .. S); out[k] = Z of the
    k-th new point as a float64 pair; points below float64's range also go into tiny_* (their
    index k, exact floatexp). Returns (points made, tiny points, escaped)."""
    x, y, x2, y2, t = a[X], a[Y], a[X2], a[Y2], a[T]
    rn = M.RNDN
    nt = 0
    for k in range(count):
        M.sqr(x2, x, rn)
        M.sqr(y2, y, rn)
        M.add(t, x, y, rn)
        M.sqr(t, t, rn)
        combine(a)
        nt, escaped = record(a, k, out, nt, tiny_k, tiny_m, tiny_e)
        if escaped:
            return k + 1, nt, True
    return count, nt, False


class MpfrEngine:
    """One orbit's arbitrary-precision state in MPFR numbers, iterated by `iterate`."""

    name = "MPFR, compiled, 1 thread"

    def __init__(self, centre_re_hex: str, centre_im_hex: str, precision: int):
        self.precision = int(precision)
        self.nums = M.MpfrNumbers(N_NUMBERS, self.precision)
        self.nums.set_hex(CX, centre_re_hex)
        self.nums.set_hex(CY, centre_im_hex)
        self.nums.set_hex(X, "0")
        self.nums.set_hex(Y, "0")

    # ---- state ----------------------------------------------------------------------------
    def save(self):
        return self.last_hex()

    def restore(self, token) -> None:
        self.load(*token)

    def load(self, re_hex: str, im_hex: str) -> None:
        self.nums.set_hex(X, re_hex)
        self.nums.set_hex(Y, im_hex)

    def last_hex(self) -> tuple[str, str]:
        return self.nums.hex(X), self.nums.hex(Y)

    # ---- iterating --------------------------------------------------------------------------
    def step(self, count: int, z, tk, tm, te) -> tuple[int, int, bool]:
        """As Gmpy2Engine.step."""
        made, nt, escaped = iterate(self.nums.addr, count, z, tk, tm, te)
        return int(made), int(nt), bool(escaped)
