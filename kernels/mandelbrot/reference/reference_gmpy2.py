"""The reference engine in Python over gmpy2: the fallback where MPFR's library cannot be loaded
for the compiled engine (mpfr_engine.py). Its loop is the one the project ran before that engine:
one complex square (MPC's) and add per iteration, the fewest Python steps an iteration can take.

An engine iterates Z_{n+1} = Z_n^2 + C from its current Z, writing each new point's float forms
into the chunk arrays it is given, and can go back to a saved point (a cancelled or truncated
chunk). The two engines round differently (MPC's square against three MPFR squarings), so their
orbits agree to the precision's last bits, not bit for bit.
"""
from __future__ import annotations

from ..loops.escape import BAILOUT2
from ..requests import formulas
from ..numbers.orbit_format import ESCAPE, TINY


class Gmpy2Engine:
    """One orbit's arbitrary-precision state in gmpy2 objects."""

    name = "gmpy2 (Python loop)"

    def __init__(self, gmpy2, centre, precision: int):
        self._g = gmpy2
        self.precision = int(precision)
        self._ctx = gmpy2.context(precision=self.precision)
        self._c = centre
        self._z = gmpy2.mpc(0)

    # ---- state ----------------------------------------------------------------------------
    def save(self):
        """A token for the current Z (restore() goes back to it)."""
        return self._z

    def restore(self, token) -> None:
        self._z = token

    def load(self, re_hex: str, im_hex: str) -> None:
        g = self._g
        with g.context(self._ctx):      # mpc() rounds to the context's precision
            self._z = g.mpc(g.mpfr(re_hex, self.precision, 16), g.mpfr(im_hex, self.precision, 16))

    def last_hex(self) -> tuple[str, str]:
        return format(self._z.real, "a"), format(self._z.imag, "a")

    # ---- iterating --------------------------------------------------------------------------
    def step(self, count: int, z, tk, tm, te) -> tuple[int, int, bool]:
        """Up to `count` iterations: z[k] = Z as a float64 pair for the k-th new point; points
        below float64's range also go into tk, tm, te (their k, exact floatexp mantissas and
        exponent). Returns (points made, tiny points, escaped); an escaped point is the last made."""
        g = self._g
        square = g.square
        zz, c = self._z, self._c
        chunk: list[complex] = []
        put = chunk.append
        nt = 0
        escaped = False
        with g.context(self._ctx):
            for k in range(count):
                zz = square(zz) + c
                zc = complex(zz)
                put(zc)
                a = abs(zc)
                if a > ESCAPE or a < TINY:
                    if a < TINY:
                        tk[nt] = k
                        tm[nt, 0], tm[nt, 1], te[nt] = _floatexp_of(g, zz.real, zz.imag)
                        nt += 1
                    elif zc.real * zc.real + zc.imag * zc.imag > BAILOUT2:
                        escaped = True
                        break
        z[:len(chunk)] = chunk
        self._z = zz
        return len(chunk), nt, escaped


def _floatexp_of(gmpy2, re, im) -> tuple[float, float, int]:
    """Exact floatexp (mre, mim, e) of re + i im: max(|mre|, |mim|) in [0.5, 1)."""
    from ..numbers.orbit_format import EZERO
    if re == 0 and im == 0:
        return 0.0, 0.0, EZERO
    big = re if abs(re) >= abs(im) else im
    e, _ = gmpy2.frexp(big)
    return float(gmpy2.mul_2exp(re, -e)), float(gmpy2.mul_2exp(im, -e)), int(e)


class Gmpy2ShipEngine(Gmpy2Engine):
    """Gmpy2Engine for the Burning Ship, z <- (|Re z| + i|Im z|)^2 + c, on MPFR reals (the fold
    takes the parts apart, so MPC's square does not serve); the compiled engines are the
    Mandelbrot's alone."""

    name = "gmpy2 (Python loop, Burning Ship)"

    def step(self, count: int, z, tk, tm, te) -> tuple[int, int, bool]:
        g = self._g
        c = self._c
        cx, cy = c.real, c.imag
        chunk: list[complex] = []
        put = chunk.append
        nt = 0
        escaped = False
        with g.context(self._ctx):
            x, y = self._z.real, self._z.imag
            for k in range(count):
                # the same operations as exact.ship_value: x' = x^2 - y^2 + cx, y' = 2|xy| + cy
                x, y = x * x - y * y + cx, 2 * abs(x * y) + cy
                zc = complex(float(x), float(y))
                put(zc)
                a = abs(zc)
                if a > ESCAPE or a < TINY:
                    if a < TINY:
                        tk[nt] = k
                        tm[nt, 0], tm[nt, 1], te[nt] = _floatexp_of(g, x, y)
                        nt += 1
                    elif zc.real * zc.real + zc.imag * zc.imag > BAILOUT2:
                        escaped = True
                        break
            self._z = g.mpc(x, y)
        z[:len(chunk)] = chunk
        return len(chunk), nt, escaped


ENGINES = {formulas.MANDELBROT: Gmpy2Engine, formulas.BURNING_SHIP: Gmpy2ShipEngine}
