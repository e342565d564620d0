"""One orbit Z_0 = 0, Z_{n+1} = Z_n² + c in arbitrary precision with its derivatives, for finding
minibrots (region_period.py, newton.py): the MPFR loop in gmpy2, three squarings an iteration
(x², y², (x+y)²: y' = (x+y)² − x² − y² + Im c, cheaper than a complex multiply at high precision),
and, a chunk of iterations at a time, numba over the chunk's Z_n in floatexp (a float64 mantissa
pair and an exponent, so nothing under- or overflows at any depth):

* dZ_n/dc (dZ_{n+1} = 2·Z_n·dZ_n + 1), whose relative precision is all Newton's step needs;
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

from .bla import _cadd, _cmul, _cnorm, _rlt, _rnorm
from .reference import EZERO, gmpy2_module

# iterations per chunk: a generator step of ~10-50 ms in gmpy2
CHUNK = 4096
# |Z| beyond this escapes for any c of the set's neighbourhood (|c| <= 2)
ESCAPE = 2.0
# below this a float64 of a coordinate loses digits: its floatexp form comes from MPFR
_TINY = 2.0 ** -960
_HUGE = 2.0 ** 960


@dataclass
class ScanResult:
    """Where a scan stopped: `n` iterations done (Z_n is `z`, exact at the scan's precision, as
    gmpy2 mpfr (x, y)); `dz`, `l`, `b`: dZ_n/dc and the size sums as (re, im, exponent) floatexp;
    `found`: the ball test held at n (z is then None: the scan had gone past it); `escaped`:
    |Z_k| > ESCAPE for some k <= n (then z may be infinite: past MPFR's exponents)."""
    n: int
    z: tuple
    dz: tuple
    l: tuple
    b: tuple
    found: bool
    escaped: bool


@njit(cache=True)
def _scan_chunk(zr, zi, ze, n0, st, se, rm, rexp, test):
    """Run the derivatives over Z_{n0} .. Z_{n0+len-1}; st = (dZ re, im, L re, im, B re, im),
    se = their exponents (updated in place). Returns the index in the chunk where the ball test
    (when `test`) first held, or -1."""
    for k in range(zr.shape[0]):
        n = n0 + k
        a_r, a_i, a_e = _cnorm(zr[k], zi[k], ze[k])
        if test and n >= 1 and se[0] != EZERO:
            zm, zme = _rnorm(math.sqrt(a_r * a_r + a_i * a_i), a_e)
            dm, dme = _rnorm(math.sqrt(st[0] * st[0] + st[1] * st[1]) * rm, se[0] + rexp)
            if zm == 0.0 or _rlt(zm, zme, dm, dme):
                return k
        # dZ <- 2 Z dZ + 1
        t_r, t_i, t_e = _cmul(a_r, a_i, a_e + 1, st[0], st[1], se[0])
        st[0], st[1], se[0] = _cadd(t_r, t_i, t_e, 0.5, 0.0, 1)
        if n >= 1:
            # L <- 2 Z L, B <- B + 1 / L
            st[2], st[3], se[1] = _cmul(a_r, a_i, a_e + 1, st[2], st[3], se[1])
            q = st[2] * st[2] + st[3] * st[3]
            if q > 0.0:
                st[4], st[5], se[2] = _cadd(st[4], st[5], se[2], st[2] / q, -st[3] / q, -se[1])
    return -1


def floatexp_of(gmpy2, x, y) -> tuple[float, float, int]:
    """(mre, mim, e) with x + iy = (mre + i·mim)·2^e exactly to 53 bits, max(|mre|, |mim|) in
    [0.5, 1); zero as (0, 0, EZERO)."""
    if x == 0 and y == 0:
        return 0.0, 0.0, EZERO
    big = x if abs(x) >= abs(y) else y
    e, _ = gmpy2.frexp(big)
    e = int(e)
    return float(gmpy2.mul_2exp(x, -e)), float(gmpy2.mul_2exp(y, -e)), e


def scan(cx, cy, precision: int, steps: int, radius=None, stop_on_escape: bool = True):
    """Iterate c = cx + i·cy (gmpy2 mpfr) `steps` times at `precision` bits, or until the ball test
    of `radius` ((mantissa, exponent) floatexp, or None for no test) holds or, with
    `stop_on_escape`, the orbit escapes (Newton's method goes on: a start just outside a
    minibrot may escape a few iterations before its period and still converge). A generator of
    fractions done; returns a ScanResult."""
    gmpy2 = gmpy2_module()
    steps = int(steps)
    st = np.zeros(6)
    se = np.zeros(3, dtype=np.int64)
    st[2], se[1] = 0.5, 1          # L = 1
    st[4], se[2] = 0.5, 1          # B = 1
    se[0] = EZERO                  # dZ_0 = 0
    rm, rexp = (0.5, 0) if radius is None else (float(radius[0]), int(radius[1]))
    test = radius is not None
    sq = gmpy2.square
    fl = float
    n = 0
    found = escaped = False
    with gmpy2.context(precision=int(precision)):
        x, y = gmpy2.mpfr(0), gmpy2.mpfr(0)
        cx, cy = gmpy2.mpfr(cx), gmpy2.mpfr(cy)
        while n < steps and not (found or escaped):
            count = min(CHUNK, steps - n)
            re_, im_, tiny = [], [], {}
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
                        tiny[k] = floatexp_of(gmpy2, x, y)
                elif abs(fx) < _TINY and abs(fy) < _TINY and (x or y):
                    tiny[k] = floatexp_of(gmpy2, x, y)
                re_.append(fx)
                im_.append(fy)
                x2, y2 = sq(x), sq(y)
                x, y = x2 - y2 + cx, sq(x + y) - x2 - y2 + cy
                k += 1
            zr = np.array(re_, dtype=np.float64)
            zi = np.array(im_, dtype=np.float64)
            ze = np.zeros(zr.shape[0], dtype=np.int64)
            for j, (mr, mi, e) in tiny.items():
                zr[j], zi[j], ze[j] = mr, mi, e
            hit = _scan_chunk(zr, zi, ze, n, st, se, rm, rexp, test) if k else -1
            if hit >= 0:
                found = True
                n += hit
                break
            n += k
            yield n / max(1, steps)
    return ScanResult(n, None if found else (x, y), (st[0], st[1], int(se[0])), (st[2], st[3], int(se[1])),
                      (st[4], st[5], int(se[2])), found, escaped)


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


def log2_abs(m_r: float, m_i: float, e: int) -> float:
    """log2 |(m_r + i·m_i)·2^e| (−inf for zero)."""
    a = math.hypot(m_r, m_i)
    return -math.inf if a == 0.0 else math.log2(a) + e
