"""One orbit Z_0 = 0, Z_{n+1} = Z_n² + c in arbitrary precision with its derivatives, for finding
minibrots (region_period.py, newton.py): the MPFR loop in gmpy2, three squarings an iteration
(x², y², (x+y)²: y' = (x+y)² − x² − y² + Im c, cheaper than a complex multiply at high precision),
and, a chunk of iterations at a time, numba over the chunk's Z_n in floatexp (a float64 mantissa
pair and an exponent, so nothing under- or overflows at any depth):

* dZ_n/dc (dZ_{n+1} = 2·Z_n·dZ_n + 1), whose relative precision is all Newton's step needs:
  in double-double (double_double.py) for Newton's scans, from Z_n's digits to ~106 bits;
* the ball test: the first n ≥ 1 with |Z_n| < r·|dZ_n/dc| (the disc of radius r around c then
  holds a nucleus of period n, to first order);
* the size estimate's sums at a nucleus of period p: L = ∏ 2·Z_k and B = Σ 1/∏_{j≤k} 2·Z_j over
  k = 1 .. p−1, from which newton.size_estimate takes the minibrot's size 1/(B·L²).

`scan` is a generator: it yields the fraction done after each chunk (the scheduler runs other jobs
between its steps; a cancel stops it there) and returns a ScanResult.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..tables.bla import _cadd, _cmul, _cnorm, _rlt, _rnorm
from ..numbers.double_double import ddc_add_real, ddc_mul, ddc_norm
from ..numbers.orbit_format import EZERO
from .reference import gmpy2_module

# iterations per chunk: a generator step short enough that frames render between steps
CHUNK = 4096
# |Z| beyond this escapes for any c of the set's neighbourhood (|c| <= 2)
ESCAPE = 2.0
# below this a float64 of a coordinate loses digits: its floatexp form comes from MPFR
_TINY = 2.0 ** -960
_HUGE = 2.0 ** 960


@dataclass
class ScanResult:
    """Where a scan stopped: `n` iterations done (Z_n is `z`, exact at the scan's precision, as
    gmpy2 mpfr (x, y)); `dz`: dZ_n/dc as (re hi, re lo, im hi, im lo, exponent), double-double
    for Newton's scans (lo parts 0 otherwise); `l`, `b`: the size sums as (re, im, exponent)
    floatexp (Newton's scans); `found`: the ball test held at n (z is then None: the scan had
    gone past it); `escaped`: |Z_k| > ESCAPE for some k <= n (then z may be infinite: past
    MPFR's exponents)."""
    n: int
    z: tuple
    dz: tuple
    l: tuple
    b: tuple
    found: bool
    escaped: bool


@njit(cache=True, nogil=True)
def _period_chunk(zr, zi, ze, n0, dd, de, rm, rexp):
    """The ball test and dZ/dc (re dd[0], im dd[2], exponent de[0], updated in place) over
    Z_{n0} .. Z_{n0+len-1}; returns the index in the chunk where the test first held, or -1."""
    for k in range(zr.shape[0]):
        n = n0 + k
        a_r, a_i, a_e = _cnorm(zr[k], zi[k], ze[k])
        if n >= 1 and de[0] != EZERO:
            zm, zme = _rnorm(math.sqrt(a_r * a_r + a_i * a_i), a_e)
            dm, dme = _rnorm(math.sqrt(dd[0] * dd[0] + dd[2] * dd[2]) * rm, de[0] + rexp)
            if zm == 0.0 or _rlt(zm, zme, dm, dme):
                return k
        # dZ <- 2 Z dZ + 1
        t_r, t_i, t_e = _cmul(a_r, a_i, a_e + 1, dd[0], dd[2], de[0])
        dd[0], dd[2], de[0] = _cadd(t_r, t_i, t_e, 0.5, 0.0, 1)
    return -1


@njit(cache=True, nogil=True)
def _newton_chunk(zr, zrl, zi, zil, ze, n0, dd, de, st, se):
    """Over Z_{n0} .. Z_{n0+len-1} (double-double parts): dZ/dc in double-double (dd = re hi,
    re lo, im hi, im lo; de[0] its exponent) and the size sums L, B (st = L re, im, B re, im;
    se = their exponents), updated in place."""
    for k in range(zr.shape[0]):
        n = n0 + k
        a = ddc_norm(zr[k], zrl[k], zi[k], zil[k], ze[k])
        # dZ <- 2 Z dZ + 1
        if dd[0] == 0.0 and dd[2] == 0.0:
            t = ddc_norm(0.5, 0.0, 0.0, 0.0, 1)
        else:
            p = ddc_mul(a[0], a[1], a[2], a[3], a[4] + 1, dd[0], dd[1], dd[2], dd[3], de[0])
            t = ddc_add_real(p[0], p[1], p[2], p[3], p[4], 0.5, 1)
        dd[0], dd[1], dd[2], dd[3], de[0] = t
        if n >= 1:
            # L <- 2 Z L, B <- B + 1 / L
            a_r, a_i, a_e = _cnorm(zr[k], zi[k], ze[k])
            st[0], st[1], se[0] = _cmul(a_r, a_i, a_e + 1, st[0], st[1], se[0])
            q = st[0] * st[0] + st[1] * st[1]
            if q > 0.0:
                st[2], st[3], se[1] = _cadd(st[2], st[3], se[1], st[0] / q, -st[1] / q, -se[0])


def floatexp_of(gmpy2, x, y) -> tuple[float, float, float, float, int]:
    """(re hi, re lo, im hi, im lo, e): x + iy = (re hi + re lo + i·(im hi + im lo))·2^e to ~106
    bits, max(|re hi|, |im hi|) in [0.5, 1); zero as (0, 0, 0, 0, EZERO)."""
    if x == 0 and y == 0:
        return 0.0, 0.0, 0.0, 0.0, EZERO
    big = x if abs(x) >= abs(y) else y
    e, _ = gmpy2.frexp(big)
    e = int(e)
    # at the numbers' own precision: under the default context's 53 bits the low parts vanish
    with gmpy2.context(precision=max(x.precision, y.precision, 128)):
        mx, my = gmpy2.mul_2exp(x, -e), gmpy2.mul_2exp(y, -e)
        hx, hy = float(mx), float(my)
        return hx, float(mx - hx), hy, float(my - hy), e


def scan(cx, cy, precision: int, steps: int, radius=None, stop_on_escape: bool = True):
    """Iterate c = cx + i·cy (gmpy2 mpfr) `steps` times at `precision` bits. With `radius`
    ((mantissa, exponent) floatexp) a period scan: it stops where the ball test holds or the
    orbit escapes. Without, a Newton scan: dZ/dc in double-double and the size sums, on past an
    escape (a start just outside a minibrot may escape a few iterations before its period and
    still converge). A generator of fractions done; returns a ScanResult."""
    gmpy2 = gmpy2_module()
    steps = int(steps)
    newton = radius is None
    st = np.zeros(4)
    se = np.zeros(2, dtype=np.int64)
    dd = np.zeros(4)
    de = np.zeros(1, dtype=np.int64)
    if newton:
        st[0], se[0] = 0.5, 1          # L = 1
        st[2], se[1] = 0.5, 1          # B = 1
        rm, rexp = 0.5, 0
    else:
        de[0] = EZERO                  # dZ_0 = 0
        rm, rexp = float(radius[0]), int(radius[1])
    stop_on_escape = stop_on_escape and not newton
    sq = gmpy2.square
    fl = float
    n = 0
    found = escaped = False
    with gmpy2.context(precision=int(precision)):
        x, y = gmpy2.mpfr(0), gmpy2.mpfr(0)
        cx, cy = gmpy2.mpfr(cx), gmpy2.mpfr(cy)
        while n < steps and not (found or escaped and stop_on_escape):
            count = min(CHUNK, steps - n)
            re_, im_, re_lo, im_lo, exact = [], [], [], [], {}
            k = 0
            while k < count:
                fx, fy = fl(x), fl(y)
                a = fx * fx + fy * fy
                if a > ESCAPE * ESCAPE:
                    escaped = True
                    if stop_on_escape:
                        break
                    if a > _HUGE:       # past float64's range: the exact floatexp form
                        if not (gmpy2.is_finite(x) and gmpy2.is_finite(y)):
                            break       # past even MPFR's exponents: nothing more to learn
                        exact[k] = floatexp_of(gmpy2, x, y)
                elif abs(fx) < _TINY and abs(fy) < _TINY and (x or y):
                    exact[k] = floatexp_of(gmpy2, x, y)
                re_.append(fx)
                im_.append(fy)
                if newton:          # the digits below the double, for the derivative
                    re_lo.append(fl(x - fx))
                    im_lo.append(fl(y - fy))
                x2, y2 = sq(x), sq(y)
                x, y = x2 - y2 + cx, sq(x + y) - x2 - y2 + cy
                k += 1
            zr, zi = np.array(re_, dtype=np.float64), np.array(im_, dtype=np.float64)
            ze = np.zeros(zr.shape[0], dtype=np.int64)
            if newton:
                zrl = np.array(re_lo, dtype=np.float64)
                zil = np.array(im_lo, dtype=np.float64)
                for j, (rh, rl, ih, il, e) in exact.items():
                    zr[j], zrl[j], zi[j], zil[j], ze[j] = rh, rl, ih, il, e
                if k:
                    _newton_chunk(zr, zrl, zi, zil, ze, n, dd, de, st, se)
            else:
                for j, (rh, _, ih, _, e) in exact.items():
                    zr[j], zi[j], ze[j] = rh, ih, e
                hit = _period_chunk(zr, zi, ze, n, dd, de, rm, rexp) if k else -1
                if hit >= 0:
                    found = True
                    n += hit
                    break
            n += k
            yield n / max(1, steps)
            if k < count:       # stopped inside the chunk: past MPFR's exponents
                break
    return ScanResult(n, None if found else (x, y), (dd[0], dd[1], dd[2], dd[3], int(de[0])),
                      (st[0], st[1], int(se[0])), (st[2], st[3], int(se[1])), found, escaped)


def run(gen, cancel=None, progress=None):
    """Drive a generator of fractions to its return value: cancel.check() and progress(fraction)
    at each step (the command line's way; the scheduler steps it itself)."""
    while True:
        try:
            f = next(gen)
        except StopIteration as stop:
            return stop.value
        if cancel is not None:
            cancel.check()
        if progress is not None:
            progress(f)
