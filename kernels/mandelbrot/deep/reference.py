"""The reference orbit Z_0 = 0, Z_{n+1} = Z_n^2 + C of one centre C, iterated in arbitrary precision
with gmpy2 (MPFR) and kept in two low-precision forms the kernels read:

* `orbit[n] = (Re Z_n, Im Z_n, Re M_n, Im M_n)` float64 and `orbit_exp[n] = e_n` int32, where
  Z_n = (M_n) * 2**e_n with max(|Re M_n|, |Im M_n|) in [0.5, 1) (the floatexp form, exact even
  where Z_n is far below float64's range; the plain pair then reads 0).

The orbit stops at max_iter or at the first Z_K with |Z_K|^2 > BAILOUT2 (kept: a pixel that lands
on it escapes there too). One orbit serves every frame whose pixels it can perturb: `serves()`
says when, `extend()` carries it to more iterations without starting again.

gmpy2 is optional for the app as a whole: importing this module without it works, computing an
orbit raises a RuntimeError that says how to install it.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..escape import BAILOUT2
from ...extras import install_hint

# floatexp exponent of an exact zero: far below any real exponent, so a zero added to anything
# vanishes and products of zeros stay far below too (int32 and sums of two stay in range)
EZERO = -(1 << 29)
# check cancellation and report progress every this many iterations (~10-40 ms of Python)
CHECK_EVERY = 4096
# below this magnitude the plain float64 pair loses digits: take the floatexp form from MPFR
_TINY = 2.0 ** -960
# |Z| above this may have escaped (|Z|^2 > BAILOUT2 decides, as in the kernels)
_ESCAPE = 255.99
# a reused orbit serves frames whose centre lies within this many frame widths of its own
REUSE_WIDTHS = 16


def gmpy2_module():
    """gmpy2, or a RuntimeError that says how to get it."""
    try:
        import gmpy2
    except ImportError as exc:
        raise RuntimeError(f"deep zoom needs gmpy2 (arbitrary precision), part of the app's "
                           f"install: {install_hint()}") from exc
    return gmpy2


def to_mpc(re, im, precision: int):
    """mpc centre from decimal strings (or Decimals / numbers), rounded to `precision` bits."""
    gmpy2 = gmpy2_module()
    with gmpy2.context(precision=precision):
        return gmpy2.mpc(gmpy2.mpfr(str(re)), gmpy2.mpfr(str(im)))


class ReferenceOrbit:
    """The orbit of `centre` (decimal strings re, im) at `precision` bits; compute with extend().

    Attributes: centre (gmpy2 mpc), centre_re / centre_im (the strings given), precision (bits),
    length (points stored, Z_0 .. Z_{length-1}), iterations (how far it was asked to go),
    escaped (True when it left |Z|^2 <= BAILOUT2: it is then complete for any max_iter),
    orbit, orbit_exp (numpy arrays, see the module docstring), version (bumped on every extend, so
    copies on the device know when they are stale)."""

    def __init__(self, centre_re, centre_im, precision: int):
        gmpy2 = gmpy2_module()
        self.centre_re = str(centre_re).strip()
        self.centre_im = str(centre_im).strip()
        self.precision = int(precision)
        self.centre = to_mpc(self.centre_re, self.centre_im, self.precision)
        self._gmpy2 = gmpy2
        self._z = gmpy2.mpc(0)
        self._buf = np.zeros(1, dtype=np.complex128)   # Z_n as float64 pairs, grows by doubling
        self._tiny: dict[int, object] = {}              # n -> exact Z_n where float64 loses it
        self.length = 1                                 # Z_0 = 0
        self.iterations = 0
        self.escaped = False
        self.version = 0
        self.compute_ms = 0.0
        self._orbit = None
        self._orbit_exp = None

    # ---- computing ----------------------------------------------------------------------------
    def extend(self, max_iter: int, cancel=None, progress=None) -> ReferenceOrbit:
        """Iterate on until max_iter iterations or escape. `cancel.check()` (raising to stop) and
        `progress(fraction)` are called every CHECK_EVERY iterations; a cancelled extend leaves
        the orbit as it was."""
        max_iter = int(max_iter)
        if self.escaped or max_iter <= self.iterations:
            return self
        t0 = time.perf_counter()
        gmpy2 = self._gmpy2
        start = self.length - 1
        z = self._z
        c = self.centre
        square = gmpy2.square
        tiny = dict(self._tiny)
        buf = self._buf
        chunk: list[complex] = []
        put = chunk.append
        escaped = False
        n = start
        total = max(1, max_iter - start)
        # the hot loop: one complex square and add in MPFR, one rounding to a float64 pair whose
        # magnitude spots both a possible escape and values below float64's range (their exact
        # floatexp form is taken from MPFR in arrays()); every CHECK_EVERY iterations the chunk
        # goes into the numpy buffer (so a long orbit never sits in Python objects)
        with gmpy2.context(precision=self.precision):
            while n < max_iter:
                stop = min(max_iter, n + CHECK_EVERY)
                first = n + 1
                while n < stop:
                    z = square(z) + c
                    n += 1
                    zc = complex(z)
                    put(zc)
                    a = abs(zc)
                    if a > _ESCAPE or a < _TINY:
                        if a < _TINY:
                            tiny[n] = z
                        elif zc.real * zc.real + zc.imag * zc.imag > BAILOUT2:
                            escaped = True
                            break
                if buf is self._buf or buf.shape[0] <= n:
                    buf = _grown(buf, n + 1, self.length if buf is self._buf else first)
                buf[first:n + 1] = chunk
                chunk.clear()
                if escaped:
                    break
                if cancel is not None:
                    cancel.check()
                if progress is not None:
                    progress((n - start) / total)
        self._buf = buf
        self._z = z
        self._tiny = tiny
        self.length = n + 1
        self.iterations = max_iter
        self.escaped = escaped
        self.version += 1
        self._orbit = self._orbit_exp = None
        self.compute_ms += (time.perf_counter() - t0) * 1e3
        if progress is not None:
            progress(1.0)
        return self

    # ---- what the kernels read ------------------------------------------------------------------
    @property
    def z(self) -> np.ndarray:
        """Z_0 .. Z_{length-1} as complex128 (0 where |Z_n| is below float64's range)."""
        return self._buf[:self.length]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(orbit (length, 4) float64, orbit_exp (length,) int32), built once per version."""
        if self._orbit is None:
            z = self.z
            re, im = z.real.copy(), z.imag.copy()
            big = np.maximum(np.abs(re), np.abs(im))
            _, e = np.frexp(big)
            e = e.astype(np.int64)
            mre, mim = np.ldexp(re, -e), np.ldexp(im, -e)
            e[big == 0] = EZERO
            gmpy2 = self._gmpy2
            for n, zn in self._tiny.items():
                if n >= self.length:
                    continue
                mre[n], mim[n], e[n] = _floatexp_of(gmpy2, zn)
            orbit = np.empty((self.length, 4), dtype=np.float64)
            orbit[:, 0], orbit[:, 1], orbit[:, 2], orbit[:, 3] = re, im, mre, mim
            self._orbit = orbit
            self._orbit_exp = e.astype(np.int32)
        return self._orbit, self._orbit_exp

    # ---- reuse --------------------------------------------------------------------------------
    def offset(self, centre) -> tuple:
        """centre - self.centre as an mpc at this orbit's precision."""
        with self._gmpy2.context(precision=self.precision):
            return centre - self.centre

    def serves(self, centre_re, centre_im, width_log2: float, precision: int) -> bool:
        """Whether this orbit can be the reference of a frame centred at (centre_re, centre_im)
        2**width_log2 wide that needs `precision` bits: precise enough, and near enough that the
        frame's offsets from it stay small (rebasing makes any reference correct; a far one only
        makes pixels leave it early and the approximation table less useful)."""
        if precision > self.precision:
            return False
        gmpy2 = self._gmpy2
        with gmpy2.context(precision=self.precision):
            c = to_mpc(centre_re, centre_im, self.precision)
            d = c - self.centre
            far = max(abs(d.real), abs(d.imag))
            if far == 0:
                return True
            return float(gmpy2.log2(far)) <= width_log2 + math.log2(REUSE_WIDTHS)

    def nbytes(self) -> int:
        return self.length * (4 * 8 + 4)

    def __repr__(self) -> str:
        state = "escaped" if self.escaped else "bounded"
        return (f"ReferenceOrbit({self.centre_re[:24]}…, {self.centre_im[:24]}…, "
                f"{self.precision} bits, {self.length:,} points, {state})")


def _grown(buf: np.ndarray, need: int, keep: int) -> np.ndarray:
    """A buffer of at least `need` points (doubling) holding buf[:keep]; a new array even when
    buf is big enough the first time, so a cancelled extend leaves the orbit's own buffer as it was."""
    out = np.zeros(max(need, 2 * buf.shape[0], 1024), dtype=np.complex128)
    out[:keep] = buf[:keep]
    return out


def _floatexp_of(gmpy2, z) -> tuple[float, float, int]:
    """Exact floatexp (mre, mim, e) of an mpc: max(|mre|, |mim|) in [0.5, 1)."""
    re, im = z.real, z.imag
    if re == 0 and im == 0:
        return 0.0, 0.0, EZERO
    big = re if abs(re) >= abs(im) else im
    e, _ = gmpy2.frexp(big)
    return float(gmpy2.mul_2exp(re, -e)), float(gmpy2.mul_2exp(im, -e)), int(e)
