"""The reference engine in Python over gmpy2: the fallback where MPFR's library cannot be loaded
for the compiled engine (mpfr_engine.py), and the measure the compiled one is held to.

An engine iterates Z_{n+1} = Z_n^2 + C from its current Z, writing each new point's float forms
into the chunk arrays it is given, and can go back to a marked point (a cancelled or truncated
chunk). Both engines square three times per iteration (x², y², (x+y)²), as Kalles Fraktaler does.
"""
from __future__ import annotations

import numpy as np

from ..escape import BAILOUT2
from .orbit_format import ESCAPE, TINY


class Gmpy2Engine:
    """One orbit's arbitrary-precision state in gmpy2 objects."""

    name = "gmpy2 (Python loop)"

    def __init__(self, gmpy2, centre, precision: int):
        self._g = gmpy2
        self.precision = int(precision)
        self._ctx = gmpy2.context(precision=self.precision)
        self._cx, self._cy = centre.real, centre.imag
        self._x = self._y = gmpy2.mpfr(0, self.precision)

    # ---- state ----------------------------------------------------------------------------
    def save(self):
        """A token for the current Z (restore() goes back to it)."""
        return self._x, self._y

    def restore(self, token) -> None:
        self._x, self._y = token

    def load(self, re_hex: str, im_hex: str) -> None:
        g = self._g
        self._x = g.mpfr(re_hex, self.precision, 16)
        self._y = g.mpfr(im_hex, self.precision, 16)

    def last_hex(self) -> tuple[str, str]:
        return format(self._x, "a"), format(self._y, "a")

    def last_mpc(self):
        return self._g.mpc(self._x, self._y)

    def close(self) -> None:
        pass

    # ---- iterating --------------------------------------------------------------------------
    def step(self, count: int, z: np.ndarray, tiny: list) -> tuple[int, bool]:
        """Up to `count` iterations: z[k] = Z as a float64 pair for the k-th new point; points
        below float64's range also go into `tiny` as (k, mre, mim, e). Returns (points made,
        escaped); an escaped point is the last one made."""
        g = self._g
        square = g.square
        x, y, cx, cy = self._x, self._y, self._cx, self._cy
        k = 0
        escaped = False
        with g.context(self._ctx):
            while k < count:
                x2, y2 = square(x), square(y)
                y = square(x + y) - x2 - y2 + cy
                x = x2 - y2 + cx
                zc = complex(float(x), float(y))
                z[k] = zc
                k += 1
                a = abs(zc)
                if a > ESCAPE or a < TINY:
                    if a < TINY:
                        tiny.append((k - 1,) + _floatexp_of(g, x, y))
                    elif zc.real * zc.real + zc.imag * zc.imag > BAILOUT2:
                        escaped = True
                        break
        self._x, self._y = x, y
        return k, escaped


def _floatexp_of(gmpy2, re, im) -> tuple[float, float, int]:
    """Exact floatexp (mre, mim, e) of re + i im: max(|mre|, |mim|) in [0.5, 1)."""
    from .orbit_format import EZERO
    if re == 0 and im == 0:
        return 0.0, 0.0, EZERO
    big = re if abs(re) >= abs(im) else im
    e, _ = gmpy2.frexp(big)
    return float(gmpy2.mul_2exp(re, -e)), float(gmpy2.mul_2exp(im, -e)), int(e)
