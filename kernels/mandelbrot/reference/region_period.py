"""The period of a region of the plane: the lowest period of a minibrot nucleus that a disc holds.

Around a nucleus c₀ of period p, Z_p(c) ≈ (c − c₀)·dZ_p/dc. So at the disc's centre c, the first
n with |Z_n(c)| < r·|dZ_n/dc(c)| is, to first order, the lowest period of a nucleus within
distance r of c (the "ball" period test of deep zoomers such as Imagina and Kalles Fraktaler).
The orbit is computed in arbitrary precision (orbit_scan.py); a centre whose orbit escapes first
has no period below its escape.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from .orbit_scan import scan
from .reference import gmpy2_module
from ..requests.deep_request import parse_decimal, precision_bits


@dataclass(frozen=True)
class RegionPeriod:
    """period: the lowest period found, or None; iterations: how far the orbit went; escaped:
    the centre's orbit escaped (at `iterations`) before any period was found."""
    period: int | None
    iterations: int
    escaped: bool


def floatexp_of_decimal(d: Decimal) -> tuple[float, int]:
    """(mantissa, exponent) with d = mantissa·2^exponent to float64 accuracy, for any exponent."""
    if d == 0:
        return 0.0, 0
    k = d.adjusted()
    m = float(d.scaleb(-k))                 # in [1, 10)
    e2 = k * math.log2(10.0)
    whole = math.floor(e2)
    return m * 2.0 ** (e2 - whole), int(whole)


def region_precision(radius: Decimal, centre_abs: float = 2.0) -> int:
    """Bits that tell points 1/1000 of `radius` apart around a centre of size `centre_abs`."""
    log2_r = math.log2(floatexp_of_decimal(radius)[0]) + floatexp_of_decimal(radius)[1]
    return precision_bits(log2_r - 10, math.log2(max(centre_abs, 1.0)))


def period_steps(center_re, center_im, radius, max_period: int, precision: int | None = None):
    """A generator (fractions of max_period done) returning the RegionPeriod of the disc of
    `radius` around (center_re, center_im): decimal strings, Decimals or numbers. ValueError in
    plain words for a radius that is not positive or a max_period under 1."""
    r = parse_decimal(radius, "radius")
    if r <= 0:
        raise ValueError(f"the region's radius must be greater than 0, got {radius!r}")
    max_period = int(max_period)
    if max_period < 1:
        raise ValueError(f"the highest period to look for must be at least 1, got {max_period}")
    re_, im_ = parse_decimal(center_re, "centre re"), parse_decimal(center_im, "centre im")
    if precision is None:
        precision = region_precision(r, float(max(abs(re_), abs(im_))))
    gmpy2 = gmpy2_module()
    with gmpy2.context(precision=precision):
        cx, cy = gmpy2.mpfr(str(re_)), gmpy2.mpfr(str(im_))
    res = yield from scan(cx, cy, precision, max_period + 1, radius=floatexp_of_decimal(r))
    if res.found:
        return RegionPeriod(res.n, res.n, False)
    return RegionPeriod(None, res.n, res.escaped)
