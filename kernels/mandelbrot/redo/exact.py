"""Brute force in arbitrary precision: every pixel iterated on its own with gmpy2 (MPFR), no
perturbation, no approximation. Slow (microseconds per iteration in Python): the yardstick the
tests hold the kernels to, and a spot check for one pixel of any frame, for the request's
formula.

Same pixel grid and value convention as the kernels: pixel (row, col) sits at
C + ((col + 0.5 - W/2) - i (row + 0.5 - H/2)) * width / W; value = (n - 1) + f at the first n with
|z_n|^2 > BAILOUT2, max_iter for points still bounded.
"""
from __future__ import annotations

import math

import numpy as np

from ..requests import formulas
from ..loops.escape import _FRAC_MAX, _INV_LOG_BAILOUT2, BAILOUT2
from ..reference.reference import gmpy2_module
from ..requests.deep_request import DeepRequest


def smooth_value(r2: float, n: int) -> float:
    f = 1.0 - math.log2(math.log(r2) * _INV_LOG_BAILOUT2)
    f = min(max(f, 0.0), _FRAC_MAX)
    return float(n - 1) + f


def escape_value(cre, cim, max_iter: int) -> float:
    """Smooth escape value of c = cre + i*cim (gmpy2 mpfr, iterated at the current context's
    precision)."""
    x = cre * 0
    y = cim * 0
    x2 = x * x
    y2 = y * y
    for n in range(1, int(max_iter) + 1):
        y = 2 * x * y + cim
        x = x2 - y2 + cre
        x2 = x * x
        y2 = y * y
        r2 = x2 + y2
        if r2 > BAILOUT2:
            return smooth_value(float(r2), n)
    return float(max_iter)


def ship_value(cre, cim, max_iter: int) -> float:
    """escape_value of the Burning Ship, z <- (|Re z| + i|Im z|)^2 + c."""
    x = cre * 0
    y = cim * 0
    for n in range(1, int(max_iter) + 1):
        x, y = x * x - y * y + cre, 2 * abs(x * y) + cim
        r2 = x * x + y * y
        if r2 > BAILOUT2:
            return smooth_value(float(r2), n)
    return float(max_iter)


VALUES = {formulas.MANDELBROT: escape_value, formulas.BURNING_SHIP: ship_value}


def pixel_point(request: DeepRequest, row: int, col: int):
    """(re, im) of pixel (row, col) as mpfr at the current context's precision."""
    gmpy2 = gmpy2_module()
    w, h = int(request.size[0]), int(request.size[1])
    step = gmpy2.mpfr(str(request.width_decimal)) / w
    cre = gmpy2.mpfr(str(request.center_re)) + (col + 0.5 - w / 2) * step
    cim = gmpy2.mpfr(str(request.center_im)) - (row + 0.5 - h / 2) * step
    return cre, cim


def exact_values(request: DeepRequest, precision: int | None = None, rows=None, cols=None) -> np.ndarray:
    """(H, W) float64 values of the frame by brute force (or the sub-grid rows x cols)."""
    gmpy2 = gmpy2_module()
    request.validate()
    bits = int(precision) if precision else request.precision + 32
    w, h = int(request.size[0]), int(request.size[1])
    rows = range(h) if rows is None else rows
    cols = range(w) if cols is None else cols
    out = np.empty((len(rows), len(cols)), dtype=np.float64)
    value = VALUES[request.formula]
    with gmpy2.context(precision=bits):
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                cre, cim = pixel_point(request, r, c)
                out[i, j] = value(cre, cim, request.max_iter)
    return out
