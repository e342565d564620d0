"""The reference orbit as double-double numbers, for the middle tier (dd_pixels.py): Z_n = hi + lo
for each of its parts, iterated in MPFR (compiled, as mpfr_escape.py) at a precision of the
picture's own + EXTRA_BITS, so that the orbit's own rounding sits below what double-double deltas
resolve (dd_pixels.py counts it in its bound all the same: `noise`).

The renderer's orbit holds doubles only (53 bits of each Z_n): a pixel redone with 106-bit deltas
needs 106 bits of the orbit too. One run of about a reference orbit's time (0.5 s for KF's 5e227),
only for a picture with pixels handed back, kept per picture by exact_redo.ExactCache.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from ..loops.escape import BAILOUT2
from ..numbers import mpfr_lib as M
from .mpfr_escape import CHUNK, CX, CY, T, X, X2, Y, Y2, mpfr_step

# bits above the picture's precision: the orbit's rounding then moves a pixel's z as a shift of
# its c by ~2^-(EXTRA_BITS + 48) of a pixel would (request.precision_bits keeps 48 below a pixel)
EXTRA_BITS = 64
# columns of the orbit: Re Z hi, Re Z lo, Im Z hi, Im Z lo
RH, RL, IH, IL = range(4)

_sub_d = types.ExternalFunction("mpfr_sub_d", types.int32(types.int64, types.int64, types.float64,
                                                         types.int32))


@njit(nogil=True, cache=True)
def _record(a, out, first, last):
    """Z_first .. Z_last into out's rows (z = Z_{first-1}, c at rows X, Y, CX, CY of `a`): the
    index past the last point written, which escapes (|Z|^2 > BAILOUT2) or is `last`."""
    x, y, cx, cy, x2, y2, t = a[X], a[Y], a[CX], a[CY], a[X2], a[Y2], a[T]
    rn = M.RNDN
    for n in range(first, last + 1):
        mpfr_step(x, y, cx, cy, x2, y2, t, rn)
        h = M.get_d(x, rn)
        _sub_d(t, x, h, rn)         # exact: x - h has fewer bits than x
        out[n, RH] = h
        out[n, RL] = M.get_d(t, rn)
        h = M.get_d(y, rn)
        _sub_d(t, y, h, rn)
        out[n, IH] = h
        out[n, IL] = M.get_d(t, rn)
        if out[n, RH] * out[n, RH] + out[n, IH] * out[n, IH] > BAILOUT2:
            return n + 1
    return last + 1


def dd_orbit(cre_hex: str, cim_hex: str, bits: int, max_iter: int, cancel=None) -> np.ndarray:
    """(N, 4) float64: Z_0 = 0 .. Z_{N-1} of c = cre + i*cim (MPFR hex strings) at `bits`, up to
    its escape or Z_max_iter, as hi, lo pairs (columns RH, RL, IH, IL). cancel.check() runs every
    CHUNK iterations."""
    nums = M.MpfrNumbers(7, int(bits))
    nums.set_hex(CX, cre_hex)
    nums.set_hex(CY, cim_hex)
    nums.set_hex(X, "0")
    nums.set_hex(Y, "0")
    out = np.zeros((int(max_iter) + 1, 4), dtype=np.float64)
    first = 1
    while first <= max_iter:
        last = min(int(max_iter), first + CHUNK - 1)
        end = _record(nums.addr, out, first, last)
        if end <= last:
            return out[:end]
        first = last + 1
        if cancel is not None:
            cancel.check()
    return out
