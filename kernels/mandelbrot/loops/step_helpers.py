"""Pieces both per-pixel loops compile in, written once for both targets (targets.py): where a
pixel sits (its δc), escape.py's smooth value, and the rebasing test |z| < |δ|."""
from __future__ import annotations

import math

from .escape import _make_escape  # the same smoothing as escape.py
from ..numbers.floatexp import make_floatexp

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
    give their own, perturbation_loop.LIMITS32)."""
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


def make_ship_steps(mul, add, jit):
    """(ship_im, fe_ship_im) compiled by `jit`: the imaginary part of the Burning Ship's δ step,
    2·(|XY + d| - |XY|) + δcy with d = X·δy + δx·(Y + δy) (y' = 2|xy| + cy about the reference
    Z = X + iY), for doubles and for floatexp. Its real part is the Mandelbrot's, Re((2Z + δ)δ) +
    δcx. |c + d| - |c| is taken by cases (`diffabs`), never as a difference of two absolute
    values, which would cancel where |d| << |c|."""
    fe_norm, fe_add, fe_mul, _, _ = make_floatexp(mul, add, jit)

    @jit
    def diffabs(c, d):
        cd = add(c, d)
        if c >= 0.0:
            return d if cd >= 0.0 else -add(cd, c)
        return add(cd, c) if cd > 0.0 else -d

    @jit
    def ship_im(zr, zi, dr, di, cdi):
        d = add(mul(zr, di), mul(dr, add(zi, di)))
        return add(mul(2.0, diffabs(mul(zr, zi), d)), cdi)

    @jit
    def fe_ship_im(mr, mi, ze, dr, di, de, cni, cne):
        """ship_im with Z = (mr + i mi)·2^ze, δ = (dr + i di)·2^de, δcy = cni·2^cne: (m, e)."""
        cm, _, ce = fe_norm(mul(mr, mi), 0.0, ze + ze)              # XY
        xm, _, xe = fe_norm(dr, 0.0, de)                            # δx alone, normalised
        ym, _, ye = fe_norm(di, 0.0, de)                            # δy alone
        sm, _, se = fe_add(mi, 0.0, ze, ym, 0.0, ye)                # Y + δy
        am, _, ae = fe_mul(mr, 0.0, ze, ym, 0.0, ye)
        bm, _, be = fe_mul(xm, 0.0, xe, sm, 0.0, se)
        dm, _, dx = fe_add(am, 0.0, ae, bm, 0.0, be)                # d
        um, _, ue = fe_add(cm, 0.0, ce, dm, 0.0, dx)                # XY + d
        if cm >= 0.0:
            if um >= 0.0:
                rm, _, re = dm, 0.0, dx
            else:
                rm, _, re = fe_add(-um, 0.0, ue, -cm, 0.0, ce)
        elif um > 0.0:
            rm, _, re = fe_add(um, 0.0, ue, cm, 0.0, ce)
        else:
            rm, _, re = -dm, 0.0, dx
        om, _, oe = fe_add(rm, 0.0, re + 1, cni, 0.0, cne)
        return om, oe

    return ship_im, fe_ship_im
