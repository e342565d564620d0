"""Where a reference orbit may stop: Imagina's period test on its float data.

Alongside Z_n the derivative D_n = dZ_n/dc runs as a floatexp (D_0 = 0, D_{n+1} = 2 Z_n D_n + 1):
it grows like the orbit's stretching, far past float64's range on long orbits. The orbit stops at
the first n with radius·|D_n|·2 > |Z_n|: the ball of that radius around C then holds a nucleus of
period n, every pixel of the frame lies within it, and a pixel reaching Z_n rebases to Z_0 with a
delta as small as the ones perturbation starts from (the kernels rebase at the orbit's last point).

Runs over each chunk as the engine leaves it (scan_chunk), on Z's floatexp form (mantissas in
[0.5, 1), exponent e; EZERO for an exact zero: orbit_floatexp.py) taken point by point.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .orbit_floatexp import point_floatexp
from ..numbers.orbit_format import EZERO
from ..numbers.pow2_scale import frexp, ldexp


@njit(cache=True, nogil=True)
def _renorm(xr, xi, e):
    a = max(abs(xr), abs(xi))
    if a == 0.0:
        return 0.0, 0.0, EZERO
    _, k = frexp(a)
    return ldexp(xr, -k), ldexp(xi, -k), e + k


@njit(cache=True, nogil=True)
def _log2_abs(mr, mi, e):
    """log2 |(mr + i mi) 2^e|, -inf for zero."""
    a = mr * mr + mi * mi
    if a == 0.0:
        return -np.inf
    return 0.5 * math.log2(a) + e


@njit(inline="always")
def _next_derivative(zr, zi, ze, dr, di, de):
    """D_{n+1} = 2 Z_n D_n + 1 in floatexp: the product's exponent, then the 1 added at its scale."""
    pr = 2.0 * (zr * dr - zi * di)
    pi = 2.0 * (zr * di + zi * dr)
    pe = ze + de
    if zr == 0.0 and zi == 0.0 or dr == 0.0 and di == 0.0:
        pr, pi, pe = 0.0, 0.0, EZERO
    # beyond 2^±64 one of the two terms is below the other's last bit
    if pe > 64:
        return _renorm(pr, pi, pe)
    if pe < -64:
        return 0.5, 0.0, 1
    return _renorm(ldexp(pr, pe) + 1.0, ldexp(pi, pe), 0)


@njit(inline="always")
def _test_holds(dr, di, de, zr, zi, ze, radius_log2):
    """The period test, log2|D| + radius_log2 + 1 > log2|Z|, with the logarithms taken only where
    the exponents leave it open: a normalised floatexp (m, e) has log2|m 2^e| in [e - 1, e + 0.5)
    (a margin of one more either side keeps round-off from deciding)."""
    if dr == 0.0 and di == 0.0:
        return False
    if zr == 0.0 and zi == 0.0:
        return True
    lhs = radius_log2 + 1.0
    if de + lhs + 1.5 < ze - 2.0:
        return False
    if de + lhs - 2.0 > ze + 1.5:
        return True
    return _log2_abs(dr, di, de) + lhs > _log2_abs(zr, zi, ze)


@njit(inline="always")
def _point(z, k, tk, tm, te, nt, i):
    """(mre, mim, e, next i) of z[k] (orbit_floatexp.point_floatexp), or the exact
    floatexp of a tiny point (tk[i] == k - 1: the engine counts from the chunk's first new point)."""
    if i < nt and tk[i] + 1 == k:
        return tm[i, 0], tm[i, 1], te[i], i + 1
    mr, mi, e = point_floatexp(z[k].real, z[k].imag)
    return mr, mi, e, i


@njit(cache=True, nogil=True)
def scan_chunk(z, made, prev, tk, tm, te, nt, deriv, radius_log2):
    """Carry deriv = [re, im, exp] (D at the chunk's start as a floatexp, exp held as a float)
    over a chunk as the engine left it: z[0] the chunk's start (its floatexp in prev = [mre, mim,
    e]), z[1 .. made] the new points, the tiny ones (tk ascending) exact in tm, te. Returns the
    first n in (0, made] where the period test holds (deriv then holds D_n, prev the floatexp of
    z[n]), or -1 (deriv and prev at z[made]). radius_log2 = -inf turns the test off (the
    derivative is still carried)."""
    dr, di, de = deriv[0], deriv[1], int(deriv[2])
    zr, zi, ze = prev[0], prev[1], int(prev[2])
    hit = -1
    i = 0
    for n in range(made):
        dr, di, de = _next_derivative(zr, zi, ze, dr, di, de)
        zr, zi, ze, i = _point(z, n + 1, tk, tm, te, nt, i)
        if radius_log2 > -np.inf and _test_holds(dr, di, de, zr, zi, ze, radius_log2):
            hit = n + 1
            break
    deriv[0], deriv[1], deriv[2] = dr, di, de
    prev[0], prev[1], prev[2] = zr, zi, ze
    return hit


def start_derivative() -> np.ndarray:
    """D_0 = 0 as scan_chunk() carries it."""
    return np.array([0.0, 0.0, float(EZERO)])


def holds_at(z_fe, d_fe, radius_log2: float) -> bool:
    """The period test for one point: Z and D as (mre, mim, e) floatexp triples."""
    return float(_log2_abs(*d_fe)) + radius_log2 + 1.0 > float(_log2_abs(*z_fe))


def radius_log2(grid) -> float:
    """log2 of the radius of the ball around the reference holding every pixel of a frame
    (a loop_args.PixelGrid: its centre's offset d0 and half-extent, in units of 2**cexp)."""
    if grid.half_w < 0:     # a log-polar grid: its outer radius (renderer.FrameGeometry.reach)
        r = grid.reach
    else:
        r = math.hypot(grid.d0r, grid.d0i) + math.hypot(grid.half_w, grid.half_h) * grid.step
    return math.log2(r) + grid.cexp
