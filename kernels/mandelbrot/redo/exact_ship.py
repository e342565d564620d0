"""The Burning Ship's pixels that float64 deltas cannot place, by brute force in MPFR (gmpy2's
loop, exact.ship_value): the compiled MPFR escape (mpfr_escape.py) iterates z^2 + c only, and the
double-double tier (dd_pixels.py) follows its orbit. The precision grows as mpfr_escape's does
(`precisions`) until two in a row agree on the escape iteration; gmpy2 holds the GIL, so the
pixels run one after another: seconds for a few hundred pixels of a few thousand iterations.
"""
from __future__ import annotations

import math

from .exact import pixel_point, ship_value
from .mpfr_escape import precisions
from ..reference.reference import gmpy2_module


def settled_value(request, row: int, col: int, bits: int | None = None,
                  cancel=None) -> tuple[float, int, bool]:
    """(value, bits, settled) of pixel (row, col) of the ship's `request` (a whole picture)."""
    gmpy2 = gmpy2_module()
    prev = v = None
    b = int(bits or request.precision + 32)
    for b in precisions(b):
        if cancel is not None:
            cancel.check()
        with gmpy2.context(precision=b):
            cre, cim = pixel_point(request, row, col)
            v = ship_value(cre, cim, request.max_iter)
        n = math.floor(v)
        if prev is not None and prev == n:
            return v, b, True
        prev = n
    return v, b, False


def settled_values(request, pixels, bits: int | None = None, threads: int | None = None,
                   cancel=None):
    """settled_value of each (row, col) in `pixels`, in order (`threads`: mpfr_escape's
    signature; one thread, since gmpy2's loop holds the GIL)."""
    return [settled_value(request, int(r), int(c), bits, cancel) for r, c in pixels]
