"""Double-double complex numbers with an exponent, for numba: a value is
(rh + rl + i·(ih + il))·2^e, each part a pair of float64 whose sum carries ~106 bits, the exponent
an integer, so nothing under- or overflows at any depth. Newton's step for a minibrot's nucleus
(newton.py) needs dZ_p/dc to more than float64's 53 bits: rounded at each of p iterations its
error grows with p, and each Newton step is only as good as the derivative.

The sums and products are the classic error-free transformations (Knuth's two-sum, Dekker's
split and product); numba keeps their order of operations (no fast-math).
"""
from __future__ import annotations

import math

from numba import njit

_SPLIT = 134217729.0        # 2^27 + 1: Dekker's split of a double into two 26-bit halves
_FAR = 1100                 # a part more than this many binary places below another vanishes


@njit(inline="always")
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(inline="always")
def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


@njit(inline="always")
def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@njit(inline="always")
def dd_add(ah, al, bh, bl):
    s, e = _two_sum(ah, bh)
    e += al + bl
    hi = s + e
    return hi, e - (hi - s)


@njit(inline="always")
def dd_mul(ah, al, bh, bl):
    p, e = _two_prod(ah, bh)
    e += ah * bl + al * bh
    hi = p + e
    return hi, e - (hi - p)


@njit(inline="always")
def ddc_norm(rh, rl, ih, il, e):
    """The same value with max(|rh|, |ih|) in [0.5, 1) (scaling by a power of two is exact)."""
    a = max(abs(rh), abs(ih))
    if a == 0.0:
        return 0.0, 0.0, 0.0, 0.0, e
    _, k = math.frexp(a)
    return (math.ldexp(rh, -k), math.ldexp(rl, -k), math.ldexp(ih, -k), math.ldexp(il, -k),
            e + k)


@njit(inline="always")
def ddc_mul(ar, arl, ai, ail, ae, br, brl, bi, bil, be):
    """a·b of two normalised double-double complex numbers, normalised."""
    p1h, p1l = dd_mul(ar, arl, br, brl)
    p2h, p2l = dd_mul(ai, ail, bi, bil)
    q1h, q1l = dd_mul(ar, arl, bi, bil)
    q2h, q2l = dd_mul(ai, ail, br, brl)
    rh, rl = dd_add(p1h, p1l, -p2h, -p2l)
    ih, il = dd_add(q1h, q1l, q2h, q2l)
    return ddc_norm(rh, rl, ih, il, ae + be)


@njit(inline="always")
def ddc_add_real(rh, rl, ih, il, e, x, xe):
    """(rh + rl + i·(ih + il))·2^e + x·2^xe for a double x, normalised."""
    if rh == 0.0 and ih == 0.0:
        return ddc_norm(x, 0.0, 0.0, 0.0, xe)
    if xe <= e:
        if e - xe > _FAR:
            return rh, rl, ih, il, e
        rh, rl = dd_add(rh, rl, math.ldexp(x, xe - e), 0.0)
        return ddc_norm(rh, rl, ih, il, e)
    if xe - e > _FAR:
        return ddc_norm(x, 0.0, 0.0, 0.0, xe)
    d = e - xe
    rh, rl = dd_add(math.ldexp(rh, d), math.ldexp(rl, d), x, 0.0)
    return ddc_norm(rh, rl, math.ldexp(ih, d), math.ldexp(il, d), xe)
