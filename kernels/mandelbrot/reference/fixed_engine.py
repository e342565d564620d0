"""The reference engine up to ~3,000 bits: Z_{n+1} = Z_n^2 + C in fixed point on GMP's mpn layer
(the library under MPFR, shipped with it), from numba.

At low precisions MPFR's additions cost about what its squares do: each one aligns exponents,
normalises and rounds. In fixed point (two's complement, `n` limbs of fraction and one of integer:
|Z| <= 256 until the orbit escapes) an addition is one mpn_add_n and a square an mpn_sqr whose
middle limbs are the result: the same three squarings (x², y², (x+y)²) with none of that. The
fraction's 64·n bits are at least the orbit's precision, counted from the binary point: what the
pixels' offsets need (reference.py's precision rule is an absolute one).

Same interface as mpfr_engine.MpfrEngine; numbers come in and go out as MPFR hex strings.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from ..loops.escape import BAILOUT2
from ..numbers import mpfr_lib  # noqa: F401  (loads MPFR's library, and GMP's with it, for the symbols)
from ..numbers.orbit_format import ESCAPE, EZERO, TINY

# rows of the limb array: the orbit's numbers, |.| scratch, the three products (2W limbs each)
X, Y, CX, CY, S, AX, AY, AS, P1, P2, P3, TMP = range(12)
N_ROWS = 12
# up to this precision the fixed-point engine beats MPFR's on one thread (whose squares at more
# limbs are short products); docs/notes/performance-history.md, "The reference orbit", has the
# measurements
FIXED_UP_TO_BITS = 3072

_P = types.int64
add_n = types.ExternalFunction("__gmpn_add_n", types.uint64(_P, _P, _P, _P))
sub_n = types.ExternalFunction("__gmpn_sub_n", types.uint64(_P, _P, _P, _P))
neg = types.ExternalFunction("__gmpn_neg", types.uint64(_P, _P, _P))
sqr = types.ExternalFunction("__gmpn_sqr", types.void(_P, _P, _P))

_TWO64 = 18446744073709551616.0
_INV_TWO64 = 1.0 / _TWO64
_TWO53 = 1 << 53
_SIGN = np.uint64(1 << 63)


@njit(nogil=True, cache=True)
def _magnitude(L, base, row, into, w):
    """Address of |number `row`| (the row itself, or its negation written to row `into`), and
    whether it was negative."""
    stride = L.shape[1] * 8
    if L[row, w - 1] & _SIGN:
        neg(base + stride * into, base + stride * row, w)
        return base + stride * into, True
    return base + stride * row, False


@njit(nogil=True, cache=True)
def _to_frexp(L, base, row, w, n):
    """(m, e): number `row` = m · 2^e with |m| in [0.5, 1) (m = 0, e = EZERO for zero), from its
    top two nonzero limbs."""
    addr, negative = _magnitude(L, base, row, TMP, w)
    r = row if not negative else TMP
    i = w - 1
    while i >= 0 and L[r, i] == 0:
        i -= 1
    if i < 0:
        return 0.0, EZERO
    v = float(L[r, i])
    if i >= 1:
        v = v * _TWO64 + float(L[r, i - 1])
        i -= 1
    m, e = math.frexp(v)
    return (-m if negative else m), e + 64 * (i - n)


@njit(nogil=True, cache=True)
def _record(L, base, w, n, k, out, nt, tiny_k, tiny_m, tiny_e):
    """Store the new Z as the chunk's k-th point (as mpfr_engine.record); (tiny points, escaped)."""
    mx, ex = _to_frexp(L, base, X, w, n)
    my, ey = _to_frexp(L, base, Y, w, n)
    e = max(ex, ey)
    mre = math.ldexp(mx, ex - e) if mx != 0.0 else 0.0
    mim = math.ldexp(my, ey - e) if my != 0.0 else 0.0
    zr = math.ldexp(mre, e) if e > -1100 else 0.0
    zi = math.ldexp(mim, e) if e > -1100 else 0.0
    out[k] = complex(zr, zi)
    r = math.hypot(zr, zi)
    if r > ESCAPE and zr * zr + zi * zi > BAILOUT2:
        return nt, True
    if r < TINY:
        tiny_k[nt] = k
        tiny_m[nt, 0] = mre
        tiny_m[nt, 1] = mim
        tiny_e[nt] = e
        nt += 1
    return nt, False


@njit(inline="always")
def _top_value(L, row, w):
    """(ok, number `row` as a float64) from its top three limbs, read as two's complement, where
    they hold all of a double's bits (|x| >= 2^-11); ok False for smaller numbers (_to_frexp)."""
    t = np.int64(L[row, w - 1])
    u = L[row, w - 2]
    if (t == 0 and u < _SIGN) or (t == -1 and u >= _SIGN):
        s = np.int64(u)         # the number in units of 2^-64, the lower limbs adding to it
        if -_TWO53 < s < _TWO53:
            return False, 0.0
        return True, (float(s) + float(L[row, w - 3]) * _INV_TWO64) * _INV_TWO64
    return True, float(t) + float(u) * _INV_TWO64


@njit(nogil=True, cache=True)
def _double(L, base, row, w, n):
    m, e = _to_frexp(L, base, row, w, n)
    return math.ldexp(m, e) if e > -1100 else 0.0


@njit(inline="always")
def _record_fast(L, base, w, n, k, out, nt, tiny_k, tiny_m, tiny_e):
    """_record where Re Z or Im Z is at least 2^-11 (nearly always): the doubles straight from the
    top limbs, no negation, no floatexp (Z is then far from float64's underflow)."""
    if w < 3:
        return _record(L, base, w, n, k, out, nt, tiny_k, tiny_m, tiny_e)
    okx, zr = _top_value(L, X, w)
    oky, zi = _top_value(L, Y, w)
    if not (okx or oky):
        return _record(L, base, w, n, k, out, nt, tiny_k, tiny_m, tiny_e)
    if not okx:
        zr = _double(L, base, X, w, n)
    if not oky:
        zi = _double(L, base, Y, w, n)
    out[k] = complex(zr, zi)
    if zr * zr + zi * zi > BAILOUT2 and math.hypot(zr, zi) > ESCAPE:
        return nt, True
    return nt, False


@njit(inline="always")
def _square(L, base, row, into, prod, w):
    """Row `prod` = |number `row`|² (|.| in row `into` where negative), on w - 1 limbs where the
    integer limb is 0 (|x| < 1, most points): the square's top two limbs are then 0."""
    stride = L.shape[1] * 8
    a, negative = _magnitude(L, base, row, into, w)
    if L[into if negative else row, w - 1] == 0:
        sqr(base + stride * prod, a, w - 1)
        L[prod, 2 * w - 2] = 0
        L[prod, 2 * w - 1] = 0
    else:
        sqr(base + stride * prod, a, w)


@njit(nogil=True, cache=True)
def iterate(L, base, n, count, out, tiny_k, tiny_m, tiny_e):
    """As mpfr_engine.iterate, on the limb array L (its address `base`; n fraction limbs)."""
    w = n + 1
    st = L.shape[1] * 8
    x, y, cx, cy, s = base, base + st * Y, base + st * CX, base + st * CY, base + st * S
    p1, p2, p3 = base + st * P1, base + st * P2, base + st * P3
    # the squares' value limbs: the product of two numbers with n fraction limbs has 2n
    x2, y2, t = p1 + 8 * n, p2 + 8 * n, p3 + 8 * n
    nt = 0
    for k in range(count):
        add_n(s, x, y, w)
        _square(L, base, X, AX, P1, w)
        _square(L, base, Y, AY, P2, w)
        _square(L, base, S, AS, P3, w)
        sub_n(x, x2, y2, w)
        add_n(x, x, cx, w)
        sub_n(y, t, x2, w)
        sub_n(y, y, y2, w)
        add_n(y, y, cy, w)
        nt, escaped = _record_fast(L, base, w, n, k, out, nt, tiny_k, tiny_m, tiny_e)
        if escaped:
            return k + 1, nt, True
    return count, nt, False


class FixedEngine:
    """One orbit's state as fixed-point limbs, iterated by `iterate`."""

    name = "GMP fixed point, compiled, 1 thread"

    def __init__(self, centre_re_hex: str, centre_im_hex: str, precision: int):
        import gmpy2
        self._g = gmpy2
        self.precision = int(precision)
        self.n = -(-self.precision // 64)
        self.w = self.n + 1
        self.L = np.zeros((N_ROWS, 2 * self.w), dtype=np.uint64)
        self._set(CX, centre_re_hex)
        self._set(CY, centre_im_hex)

    def _set(self, row: int, text: str) -> None:
        g = self._g
        try:
            v = g.mpfr(text.strip(), 64 * self.w + 64, 16)
        except ValueError:
            raise ValueError(f"not an MPFR hexadecimal number: {text[:40]!r}") from None
        if not g.is_finite(v) or abs(v) >= 2 ** 62:
            raise ValueError(f"{text[:40]!r} is out of the reference's range")
        with g.context(precision=64 * self.w + 64):     # results round to the context's bits
            i = int(g.floor(g.mul_2exp(v, 64 * self.n))) % (1 << (64 * self.w))
        self.L[row, :] = 0
        self.L[row, :self.w] = np.frombuffer(i.to_bytes(8 * self.w, "little"), dtype=np.uint64)

    def _hex(self, row: int) -> str:
        i = int.from_bytes(self.L[row, :self.w].tobytes(), "little")
        if i >> (64 * self.w - 1):
            i -= 1 << (64 * self.w)
        return f"{'-' if i < 0 else ''}0x{abs(i):x}p-{64 * self.n}"

    # ---- state ----------------------------------------------------------------------------
    def save(self):
        return self.L[X].copy(), self.L[Y].copy()

    def restore(self, token) -> None:
        self.L[X], self.L[Y] = token

    def load(self, re_hex: str, im_hex: str) -> None:
        self._set(X, re_hex)
        self._set(Y, im_hex)

    def last_hex(self) -> tuple[str, str]:
        return self._hex(X), self._hex(Y)

    # ---- iterating --------------------------------------------------------------------------
    def step(self, count: int, z, tk, tm, te) -> tuple[int, int, bool]:
        made, nt, escaped = iterate(self.L, self.L.ctypes.data, self.n, count, z, tk, tm, te)
        return int(made), int(nt), bool(escaped)
