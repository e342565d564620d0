"""A minibrot's nucleus by Newton's method, and the minibrot's size.

The nucleus c₀ of period p solves Z_p(c) = 0; from a start near it Newton's step
c ← c − Z_p(c) / (dZ_p/dc)(c) converges quadratically with exact arithmetic. Z_p is computed in
arbitrary precision (orbit_scan.py: three squarings an iteration in MPFR) and dZ_p/dc in
double-double floatexp (~106 bits): each step is then good to that relative accuracy, so the steps
gain about that many bits each once the quadratic gain would be more (float64 would give half).
The precision grows with the answer: the first steps run at the precision that resolves the
frame's pixels, and once the step is far below them, the minibrot's size says how precisely the
nucleus must be known for a view of the minibrot itself.

Size estimate (a standard result for the atom of period p, e.g. mathr.co.uk's "Mandelbrot set
component size estimate"; our own code): with L = ∏_{k=1}^{p−1} 2·Z_k and B = 1 + Σ_{k=1}^{p−1}
1/∏_{j=1}^{k} 2·Z_j at the nucleus, the minibrot is the whole set scaled by |1/(B·L²)| (and turned
by its argument): c ≈ c₀ + s·w for w over the whole set, which spans |w| ≤ 2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Context, Decimal

from .orbit_scan import floatexp_of, scan
from .region_period import floatexp_of_decimal
from .reference import gmpy2_module
from ..requests.deep_request import parse_decimal, precision_bits

# Newton steps at most (each iterates the whole period); from a start within the nucleus's atom
# domain quadratic convergence needs far fewer
MAX_STEPS = 64
# done when the step is this many binary places below the frame's pixel ...
FRAME_MARGIN_BITS = 16
# ... and below the minibrot's own size by this many (its view's pixels are ~size/200)
SIZE_MARGIN_BITS = 28
# the nucleus must lie within this many radii of the region's centre
REGION_SLACK = 2.0
# bits of Newton's step: more than the double-double derivative's ~106
STEP_BITS = 128
# good bits of the derivative the precision keeps (beyond its size): Newton's steps stay quadratic
DERIVATIVE_BITS = 112


class NewtonFailed(ValueError):
    """Newton's method found no nucleus: the message says why in plain words."""


@dataclass(frozen=True)
class Nucleus:
    """center_re, center_im: the nucleus as decimal strings (every digit its precision holds);
    size: the minibrot's size as (mantissa, exponent): |size| = mantissa·2^exponent (see the
    module docstring); steps: Newton steps taken; precision: bits of the last steps."""
    center_re: str
    center_im: str
    period: int
    size: tuple[float, int]
    steps: int
    precision: int

    @property
    def size_log2(self) -> float:
        return math.log2(abs(self.size[0])) + self.size[1]


def size_estimate(l_fe: tuple, b_fe: tuple) -> tuple[float, int]:
    """|1/(B·L²)| as (mantissa, exponent) from the scan's floatexp L and B."""
    lr, li, le = l_fe
    br, bi, be = b_fe
    l2r, l2i = lr * lr - li * li, 2.0 * lr * li
    pr, pi = br * l2r - bi * l2i, br * l2i + bi * l2r
    a = math.hypot(pr, pi)
    if a == 0.0:
        return math.inf, 0
    m, k = math.frexp(1.0 / a)
    return m, k - (be + 2 * le)


def decimal_text(x, accuracy_log2: float) -> str:
    """x (mpfr) as a decimal string whose last digits are below 2^accuracy_log2."""
    places = max(1, int(math.ceil(-accuracy_log2 * math.log10(2.0))) + 3)
    ctx = Context(prec=places + 10, Emin=-10 ** 6, Emax=10 ** 6)
    d = Decimal(x.__format__(f".{places + 4}e")).quantize(Decimal(1).scaleb(-places), context=ctx)
    return "0" if d == 0 else format(d, "f").rstrip("0").rstrip(".")


def _step(gmpy2, z, dz):
    """Newton's step Z_p / Z_p' as (re, im) mpfr of STEP_BITS and log2 of its size, from Z_p
    (mpfr pair) and the double-double derivative; (None, None, None) for a zero derivative."""
    dh, dl, ih, il, de = dz
    if (dh == 0.0 and ih == 0.0) or not (math.isfinite(dh) and math.isfinite(ih)):
        return None, None, None
    zh, zl, wh, wl, ze = floatexp_of(gmpy2, *z)
    with gmpy2.context(precision=STEP_BITS):
        m = gmpy2.mpfr
        q = (gmpy2.mpc(m(zh) + m(zl), m(wh) + m(wl)) / gmpy2.mpc(m(dh) + m(dl), m(ih) + m(il)))
        if q == 0:
            return m(0), m(0), -math.inf
        k = ze - de
        return (gmpy2.mul_2exp(q.real, k), gmpy2.mul_2exp(q.imag, k),
                float(gmpy2.log2(abs(q))) + k)


def nucleus_steps(center_re, center_im, period: int, radius, pixel, max_steps: int = MAX_STEPS):
    """Newton's method for the nucleus of `period` from (center_re, center_im) (decimal strings,
    Decimals or numbers), within REGION_SLACK × `radius` of it; `pixel`: the frame's pixel size
    (the first accuracy aimed at). A generator of (step, fraction of the step done); returns a
    Nucleus, or raises NewtonFailed."""
    gmpy2 = gmpy2_module()
    period = int(period)
    if period < 1:
        raise NewtonFailed(f"a nucleus has a period of at least 1, got {period}")
    re_, im_ = parse_decimal(center_re, "centre re"), parse_decimal(center_im, "centre im")
    r_m, r_e = floatexp_of_decimal(parse_decimal(radius, "radius"))
    p_m, p_e = floatexp_of_decimal(parse_decimal(pixel, "pixel size"))
    if r_m <= 0 or p_m <= 0:
        raise NewtonFailed("the region and its pixels must have a size greater than 0")
    region_log2 = math.log2(r_m) + r_e + math.log2(REGION_SLACK)
    target = math.log2(p_m) + p_e - FRAME_MARGIN_BITS
    centre_log2 = math.log2(max(float(abs(re_)), float(abs(im_)), 1.0))
    prec = precision_bits(target, centre_log2)
    with gmpy2.context(precision=prec):
        x0, y0 = gmpy2.mpfr(str(re_)), gmpy2.mpfr(str(im_))
    cx, cy = x0, y0
    for step in range(1, int(max_steps) + 1):
        gen = scan(cx, cy, prec, period, stop_on_escape=False)
        while True:
            try:
                f = next(gen)
            except StopIteration as stop:
                res = stop.value
                break
            yield step, f
        if res.n < period or not (gmpy2.is_finite(res.z[0]) and gmpy2.is_finite(res.z[1])):
            raise NewtonFailed(f"Newton's method for period {period} went where the orbit escapes "
                               f"far too soon (step {step}): no minibrot of that period near here")
        sr, si, step_log2 = _step(gmpy2, res.z, res.dz)
        if sr is None:
            raise NewtonFailed(f"Newton's method for period {period} met a zero derivative")
        with gmpy2.context(precision=prec):
            cx, cy = cx - sr, cy - si
            off = gmpy2.hypot(cx - x0, cy - y0)
            far = float(gmpy2.log2(off)) if off > 0 else -math.inf
        if far > region_log2:
            raise NewtonFailed(f"Newton's method for period {period} left the region (step "
                               f"{step}): the nucleus it was heading for lies outside it")
        # Z_n near the period carry ~precision − log2|dZ_n/dc| good bits, and so does the
        # derivative summed from them: the next steps get enough for a double-double's worth
        prec = max(prec, 64 * math.ceil((res.dz[4] + DERIVATIVE_BITS) / 64))
        if step_log2 < target:
            size = size_estimate(res.l, res.b)
            if not math.isfinite(size[0]):
                raise NewtonFailed(f"the minibrot of period {period} has no size estimate here")
            need = math.log2(size[0]) + size[1] - SIZE_MARGIN_BITS
            if need < target - 1:       # the minibrot is far below the frame's pixels: go on
                target = need
                prec = max(prec, precision_bits(target, centre_log2))
                continue
            return Nucleus(decimal_text(cx, target), decimal_text(cy, target), period,
                           size, step, prec)
    raise NewtonFailed(f"Newton's method for period {period} did not converge in {max_steps} "
                       "steps")
