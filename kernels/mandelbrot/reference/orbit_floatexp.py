"""The reference orbit's floatexp form (reference.py's docstring), compiled: one point's, as the
period test reads it chunk by chunk, and the whole orbit's arrays for the kernels in one pass."""
from __future__ import annotations

from numba import njit

from ..numbers.orbit_format import EZERO
from ..numbers.pow2_scale import frexp, ldexp


@njit(inline="always")
def point_floatexp(re, im):
    """(mre, mim, e): re + i im = (mre + i mim)·2^e with max(|mre|, |mim|) in [0.5, 1); EZERO for
    zero. Exact (scaling by a power of two)."""
    big = max(abs(re), abs(im))
    if big == 0.0:
        return re, im, EZERO
    _, e = frexp(big)
    return ldexp(re, -e), ldexp(im, -e), e


@njit(cache=True, nogil=True)
def fill_orbit(z, tiny_n, tiny_m, tiny_e, orbit, oexp):
    """orbit (N, 4) = (Re Z, Im Z, mre, mim) and oexp (N,) = e for Z = z[:N], the points below
    float64's range (tiny_n ascending) taking their exact floatexp from tiny_m, tiny_e."""
    for n in range(orbit.shape[0]):
        re, im = z[n].real, z[n].imag
        orbit[n, 0] = re
        orbit[n, 1] = im
        orbit[n, 2], orbit[n, 3], oexp[n] = point_floatexp(re, im)
    for i in range(tiny_n.shape[0]):
        n = tiny_n[i]
        orbit[n, 2] = tiny_m[i, 0]
        orbit[n, 3] = tiny_m[i, 1]
        oexp[n] = tiny_e[i]


@njit(cache=True, nogil=True)
def fill_rows(z, lo, hi, tiny_n, tiny_m, tiny_e, orbit, oexp):
    """fill_orbit's rows lo .. hi-1 alone (the same numbers), from z[lo:hi] and the tiny points
    among them: an orbit's arrays written part by part while it is computed (table_ahead.py)."""
    for n in range(lo, hi):
        re, im = z[n].real, z[n].imag
        orbit[n, 0] = re
        orbit[n, 1] = im
        orbit[n, 2], orbit[n, 3], oexp[n] = point_floatexp(re, im)
    for i in range(tiny_n.shape[0]):
        n = tiny_n[i]
        if lo <= n < hi:
            orbit[n, 2] = tiny_m[i, 0]
            orbit[n, 3] = tiny_m[i, 1]
            oexp[n] = tiny_e[i]
