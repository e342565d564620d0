"""The middle tier's BLA table (dd_pixels.py): bla.py's bilinear steps δ ← A·δ + B·δc with A and B
in double-double, radii for ε = 2^-EPS_BITS (so the dropped δ² sits below double-double's own
rounding), and beside each entry what the pixel's sound bound needs: |A|, a bound on |B| by
magnitudes, the absolute errors of A and B, and how much the orbit's own rounding grows across the
step. Built on one core from dd_orbit's rows, once a picture (~0.3 s for 5e227's 1.15 M points).

A single step from m (1 ≤ m < last): A = 2·Z_m, B = 1, valid while |δ| ≤ R = ε·|2·Z_m| (then
|δ²| ≤ ε·|2·Z_m·δ|), R = 0 where |Z_m| > 2 (a pixel could escape inside a longer step). Steps x
then y merge (Heiland-Allen, "Deep zoom theory and practice (again)", 2022):
    A = A_y·A_x,  B = A_y·B_x + B_y,  R = min(R_x, (R_y − |B_x|·|δc|max) / |A_x|),
each radius shrunk by 2^-40 so that the true δ, off the linear one by at most l·ε of it, still
stays inside every inner radius. Level k holds the steps of length 2^k from m = 1 + j·2^k.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..numbers.double_double import dd_add, dd_mul

# ε of the middle tier's steps: 2^-100 of a step's linear part, a merged step of l single ones
# dropping at most l·ε of it (dd_pixels.py adds that to the bound)
EPS_BITS = 100
# columns: A (re hi, re lo, im hi, im lo), B (same), radius, |A|, bound on |B| by magnitudes
# (Σ of |A| after each inner step: what the inner δ can reach), absolute error of A, of B, the
# orbit's rounding grown across the step (times the noise), |B| as computed
AR, ARL, AI, AIL, BR, BRL, BI, BIL, RAD, AABS, BMAG, EA, EB, NZ, BABS = range(15)
WIDTH = 15
# a step's double-double rounding, as a fraction of its operands' size (as dd_pixels.DD_INJ)
_ROUND = 2.0 ** -98
_UP = 1.0 + 2.0 ** -50          # a product of magnitudes rounded up
_SHRINK = 1.0 - 2.0 ** -40


@njit(inline="always")
def _single(orbit, m, eps, out):
    zr, zrl, zi, zil = orbit[m, 0], orbit[m, 1], orbit[m, 2], orbit[m, 3]
    za = math.hypot(zr, zi)
    out[AR], out[ARL], out[AI], out[AIL] = 2.0 * zr, 2.0 * zrl, 2.0 * zi, 2.0 * zil
    out[BR], out[BRL], out[BI], out[BIL] = 1.0, 0.0, 0.0, 0.0
    out[RAD] = 0.0 if za > 2.0 else eps * 2.0 * za * _SHRINK
    out[AABS] = 2.0 * za * _UP
    out[BMAG] = 1.0
    out[EA] = _ROUND * out[AABS]        # Z's hi + lo rounding, doubled
    out[EB] = 0.0
    out[NZ] = za * za * _UP + 2.0
    out[BABS] = 1.0


@njit(inline="always")
def _merge(x, y, dcmax, out):
    """Step x then step y, into out."""
    p1h, p1l = dd_mul(y[AR], y[ARL], x[AR], x[ARL])
    p2h, p2l = dd_mul(y[AI], y[AIL], x[AI], x[AIL])
    q1h, q1l = dd_mul(y[AR], y[ARL], x[AI], x[AIL])
    q2h, q2l = dd_mul(y[AI], y[AIL], x[AR], x[ARL])
    out[AR], out[ARL] = dd_add(p1h, p1l, -p2h, -p2l)
    out[AI], out[AIL] = dd_add(q1h, q1l, q2h, q2l)
    p1h, p1l = dd_mul(y[AR], y[ARL], x[BR], x[BRL])
    p2h, p2l = dd_mul(y[AI], y[AIL], x[BI], x[BIL])
    q1h, q1l = dd_mul(y[AR], y[ARL], x[BI], x[BIL])
    q2h, q2l = dd_mul(y[AI], y[AIL], x[BR], x[BRL])
    rh, rl = dd_add(p1h, p1l, -p2h, -p2l)
    ih, il = dd_add(q1h, q1l, q2h, q2l)
    out[BR], out[BRL] = dd_add(rh, rl, y[BR], y[BRL])
    out[BI], out[BIL] = dd_add(ih, il, y[BI], y[BIL])
    ax, ay = x[AABS], y[AABS]
    out[AABS] = ay * ax * _UP
    out[BMAG] = (ay * x[BMAG] + y[BMAG]) * _UP
    out[EA] = (ay * x[EA] + y[EA] * ax + x[EA] * y[EA] + _ROUND * out[AABS]) * _UP
    # B's error by the computed |B| (a magnitude bound would count cancellations that happened)
    out[BABS] = math.hypot(out[BR], out[BI]) * _UP
    bx = x[BABS] + x[EB]
    out[EB] = (ay * x[EB] + y[EA] * bx + y[EB] + _ROUND * (ay * bx + y[BABS] + y[EB])) * _UP
    out[NZ] = (ay * x[NZ] + y[NZ]) * _UP
    r = x[RAD]
    if ax > 0.0:
        r = min(r, max(0.0, (y[RAD] - x[BMAG] * dcmax * _UP) / (ax * _UP)))
    out[RAD] = r * _SHRINK


@njit(nogil=True, cache=True)
def _build(orbit, dcmax, eps, tab, levels):
    last = orbit.shape[0] - 1
    for j in range(levels[0, 1]):
        _single(orbit, 1 + j, eps, tab[j])
    for k in range(1, levels.shape[0]):
        below = levels[k - 1, 0]
        at = levels[k, 0]
        for j in range(levels[k, 1]):
            _merge(tab[below + 2 * j], tab[below + 2 * j + 1], dcmax, tab[at + j])
    return last


def level_sizes(last: int) -> np.ndarray:
    """(K, 2) int64: offset and count of each level's entries for an orbit whose last point is
    `last` (a step of length 2^k from m = 1 + j·2^k lands at most on `last`)."""
    rows = []
    offset = 0
    k = 0
    while True:
        count = (last - 1) >> k
        if count < 1:
            break
        rows.append((offset, count))
        offset += count
        k += 1
    return np.array(rows if rows else [(0, 0)], dtype=np.int64).reshape(-1, 2)


def build(orbit: np.ndarray, dcmax: float, eps_bits: int | None = None):
    """(tab (E, WIDTH) float64, levels (K, 2) int64) of dd_orbit's rows for pixels with
    |δc| ≤ dcmax; ε = 2^-eps_bits (default EPS_BITS)."""
    eps_bits = EPS_BITS if eps_bits is None else eps_bits
    levels = level_sizes(orbit.shape[0] - 1)
    total = int(levels[-1, 0] + levels[-1, 1])
    tab = np.zeros((max(total, 1), WIDTH), dtype=np.float64)
    if levels[0, 1] > 0:
        _build(orbit, float(dcmax), 2.0 ** -int(eps_bits), tab, levels)
    return tab, levels
