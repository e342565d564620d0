"""Pieces both per-pixel loops compile in, written once for both targets (targets.py): where a
pixel sits (its δc), escape.py's smooth value, and the rebasing test |z| < |δ|."""
from __future__ import annotations

import math

from ..escape import _make_escape  # the same smoothing as escape.py
from .floatexp import make_floatexp

# squares of numbers below this underflow: compare |z| and |δ| scaled up instead
_TINY2 = 2.0 ** -900
_SCALE = 2.0 ** 500
LN2 = math.log(2.0)


def make_offset(mul, add, jit):
    """pixel_offset(row, col, d0r, d0i, step, half_w, half_h) compiled by `jit`."""

    @jit
    def pixel_offset(row, col, d0r, d0i, step, half_w, half_h):
        """δc mantissa of pixel (row, col): offset of the frame centre from the reference plus
        the pixel's place, both in units of 2**cexp (row 0 = top = largest imaginary part).
        half_w < 0 marks a log-polar grid (loop_args.PixelGrid): every loop takes it this way."""
        if half_w < 0.0:
            # radius step·2^((col+0.5)/W), angle (row+0.5-half_h)·ln2/W with W = -half_w (libm
            # and libdevice may round exp/cos/sin an ulp apart: twins agree to a count, not a bit)
            rho = mul(step, math.exp(mul(add(float(col), 0.5), -LN2 / half_w)))
            theta = mul(add(add(float(row), 0.5), -half_h), -LN2 / half_w)
            return add(d0r, mul(rho, math.cos(theta))), add(d0i, mul(rho, math.sin(theta)))
        gx = add(float(col) + 0.5, -half_w)
        gy = add(float(row) + 0.5, -half_h)
        return add(d0r, mul(gx, step)), add(d0i, -mul(gy, step))

    return pixel_offset


def make_delta_c(mul, add, jit):
    """delta_c(row, col, d0r, d0i, step, cexp, half_w, half_h): δc of pixel (row, col) as doubles
    (the perturbation format's spacings stay within float64's range), compiled by `jit`."""
    pixel_offset = make_offset(mul, add, jit)
    fe_norm, _, _, fe_to_double, _ = make_floatexp(mul, add, jit)

    @jit
    def delta_c(row, col, d0r, d0i, step, cexp, half_w, half_h):
        cmr, cmi = pixel_offset(row, col, d0r, d0i, step, half_w, half_h)
        cnr, cni, cne = fe_norm(cmr, cmi, cexp)
        return fe_to_double(cnr, cni, cne)

    return delta_c


def make_step_helpers(mul, add, jit, tiny2=None, scale=None):
    """(smooth, closer_to_zero) compiled by `jit` with the target's `mul` and `add`: escape.py's
    smooth value from |z_n|^2 and n, and whether |z|^2 < |δ|^2 for doubles, exact in sign where
    the squares would underflow (below `tiny2`, then compared scaled by `scale`: float32 loops
    give their own, perturbation_f32.py)."""
    smooth = _make_escape(mul, add, jit)[4]
    tiny2 = _TINY2 if tiny2 is None else tiny2
    scale = _SCALE if scale is None else scale

    @jit
    def closer_to_zero(xr, xi, r2, dr, di):
        dd = add(mul(dr, dr), mul(di, di))
        if r2 >= tiny2 and dd >= tiny2:
            return r2 < dd
        xr, xi = mul(xr, scale), mul(xi, scale)
        dr, di = mul(dr, scale), mul(di, scale)
        return add(mul(xr, xr), mul(xi, xi)) < add(mul(dr, dr), mul(di, di))

    return smooth, closer_to_zero
