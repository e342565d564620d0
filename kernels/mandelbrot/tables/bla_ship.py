"""The Burning Ship's bilinear approximation table, in the perturbation loop's layout.

Where x and y keep the signs of the reference's X and Y, the ship's map is a polynomial, and its
step is δ ← J·δ + N(δ) + δc with J·δ = 2Z·δ where XY >= 0, conj(2Z)·conj(δ) where XY < 0, and
|N(δ)| = |δ|² (the Mandelbrot's δ² or its conjugate). So one step is linear, δ ← A(δ) + B(δc),
while |δ| < R = min(ε·|2Z|, min(|X|, |Y|)): the first bound the Mandelbrot's (bla.py), the second
keeps the signs (|δx| < |X|, |δy| < |Y|). A is a complex a, conjugating δ first when its parity is odd, and
the composition of such maps is one again; B is R-linear, b·δc + b'·conj(δc). Two steps x then y:
    a = a_y·(a_x, conjugated when p_y),  p = p_x xor p_y,
    B = A_y∘B_x + B_y,  R = max(0, min(R_x, (R_y − (|b_x| + |b'_x|)·|δc|max) / |a_x|)),
bla.py's merge rule with |A| = |a| (conjugation keeps lengths). Where Y = 0 (a reference on the
real axis) no step is linear: such frames take perturbation steps only.

Entries in floatexp while the levels are built (a mantissa and an exponent each), then written
as perturbation_loop's rows (`flat_ship_tables`): `zo` (Z_m and the single step's radius / sqrt 2)
and `bt` (A, B, the radius / sqrt 2, |A|, B', the parity; a B past float64's range becomes inf,
as there); or as extended_loop's (`ext_ship_tables`): bla.py's columns (layout.py), then B' and
the parity (T_QR, T_QI, T_PAR; B''s exponent E_Q), every entry kept in floatexp. One thread: the
ship's frames are the rarer ones, and the table is linear in the orbit's length.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .bla import _cadd, _cmul, _mag, _rlt, _rnorm, _rsub, level_counts
from .layout import (E_A, E_B, E_R, N_TAB, T_AD, T_ADI, T_ADR, T_AI, T_AM, T_AR, T_BI, T_BR,
                     T_RD, T_RM, empty_table)
from ..numbers.pow2_scale import ldexp
from ..numbers.orbit_format import EZERO

# floatexp columns: a, b, b' (mantissa pairs), R mantissa, parity; exponents of a, b, b', R
S_AR, S_AI, S_BR, S_BI, S_QR, S_QI, S_R, S_P = range(8)
N_S = 8
X_A, X_B, X_Q, X_R = range(4)
# the loop's bt row for the ship (perturbation_loop reads its first six columns as the
# Mandelbrot's: A, B, radius, |A|)
SHIP_BW = 10
B_QR, B_QI, B_PAR = 6, 7, 8
# extended_loop's table for the ship: layout.py's columns, then B' (exponent E_Q) and the parity
T_QR, T_QI, T_PAR = N_TAB, N_TAB + 1, N_TAB + 2
N_TAB_SHIP = N_TAB + 3
E_Q = 3
_CLAMP = 4000
_INV_SQRT2 = 1.0 / math.sqrt(2.0)


@njit(cache=True)
def _single(orbit, oexp, eps_bits, tab, tabe, j):
    """Level 0's entry j: the single step from m = 1 + j."""
    m = 1 + j
    mr, mi, e = orbit[m, 2], orbit[m, 3], oexp[m]
    # J·δ = 2Z·δ where XY >= 0, else conj(2Z·δ) = conj(2Z)·conj(δ): a = conj(2Z), odd parity
    odd = mr * mi < 0.0
    tab[j, S_AR], tab[j, S_AI], tabe[j, X_A] = mr, -mi if odd else mi, e + 1
    tab[j, S_P] = 1.0 if odd else 0.0
    tab[j, S_BR], tab[j, S_BI], tabe[j, X_B] = 0.5, 0.0, 1
    tab[j, S_QR], tab[j, S_QI], tabe[j, X_Q] = 0.0, 0.0, EZERO
    zr, zi = orbit[m, 0], orbit[m, 1]
    if zr * zr + zi * zi > 4.0 or e == EZERO or mr == 0.0 or mi == 0.0:
        tab[j, S_R], tabe[j, X_R] = 0.0, EZERO
        return
    r, re_ = _rnorm(_mag(mr, mi), e + 1 - eps_bits)
    f, fe = _rnorm(min(abs(mr), abs(mi)), e)
    if _rlt(f, fe, r, re_):
        r, re_ = f, fe
    tab[j, S_R], tabe[j, X_R] = r, re_


@njit(cache=True)
def _merge(cm, ce, tab, tabe, x, k):
    """Entry k: the steps at x then x + 1 (one level down) merged."""
    y = x + 1
    conj = tab[y, S_P] != 0.0
    sgn = -1.0 if conj else 1.0
    ayr, ayi, aye = tab[y, S_AR], tab[y, S_AI], tabe[y, X_A]
    ar, ai, ae = _cmul(ayr, ayi, aye, tab[x, S_AR], sgn * tab[x, S_AI], tabe[x, X_A])
    # A_y applied to B_x = b·δc + b'·conj(δc): conjugating swaps the two coefficients' roles
    if conj:
        pr, pi, pe = _cmul(ayr, ayi, aye, tab[x, S_QR], -tab[x, S_QI], tabe[x, X_Q])
        qr, qi, qe = _cmul(ayr, ayi, aye, tab[x, S_BR], -tab[x, S_BI], tabe[x, X_B])
    else:
        pr, pi, pe = _cmul(ayr, ayi, aye, tab[x, S_BR], tab[x, S_BI], tabe[x, X_B])
        qr, qi, qe = _cmul(ayr, ayi, aye, tab[x, S_QR], tab[x, S_QI], tabe[x, X_Q])
    br, bi, be = _cadd(pr, pi, pe, tab[y, S_BR], tab[y, S_BI], tabe[y, X_B])
    qr, qi, qe = _cadd(qr, qi, qe, tab[y, S_QR], tab[y, S_QI], tabe[y, X_Q])
    # R = max(0, min(R_x, (R_y - (|b_x| + |b'_x|) c) / |a_x|))
    b1, b1e = _rnorm(_mag(tab[x, S_BR], tab[x, S_BI]), tabe[x, X_B])
    b2, b2e = _rnorm(_mag(tab[x, S_QR], tab[x, S_QI]), tabe[x, X_Q])
    bs, _, bse = _cadd(b1, 0.0, b1e, b2, 0.0, b2e)
    bc, bce = _rnorm(bs * cm, bse + ce)
    num, nume = _rsub(tab[y, S_R], tabe[y, X_R], bc, bce)
    if num == 0.0:
        r, re_ = 0.0, EZERO
    else:
        am, ame = _rnorm(_mag(tab[x, S_AR], tab[x, S_AI]), tabe[x, X_A])
        if am == 0.0:
            r, re_ = tab[x, S_R], tabe[x, X_R]
        else:
            r, re_ = _rnorm(num / am, nume - ame)
            if _rlt(tab[x, S_R], tabe[x, X_R], r, re_):
                r, re_ = tab[x, S_R], tabe[x, X_R]
    tab[k, S_AR], tab[k, S_AI], tabe[k, X_A] = ar, ai, ae
    tab[k, S_P] = 1.0 if (tab[x, S_P] != 0.0) != conj else 0.0
    tab[k, S_BR], tab[k, S_BI], tabe[k, X_B] = br, bi, be
    tab[k, S_QR], tab[k, S_QI], tabe[k, X_Q] = qr, qi, qe
    tab[k, S_R], tabe[k, X_R] = r, re_


@njit(inline="always")
def _double(m, e):
    return ldexp(m, max(-_CLAMP, min(_CLAMP, e)))


@njit(cache=True)
def _levels(orbit, oexp, cm, ce, eps_bits, offsets, counts, tab, tabe):
    """Every level's entries in floatexp (the S_ and X_ columns)."""
    for j in range(counts[0]):
        _single(orbit, oexp, eps_bits, tab, tabe, j)
    for lv in range(1, counts.shape[0]):
        for j in range(counts[lv]):
            _merge(cm, ce, tab, tabe, offsets[lv - 1] + 2 * j, offsets[lv] + j)


@njit(cache=True)
def _build(orbit, oexp, cm, ce, eps_bits, offsets, counts, tab, tabe, zo, bt):
    _levels(orbit, oexp, cm, ce, eps_bits, offsets, counts, tab, tabe)
    for k in range(tab.shape[0]):
        r = _double(tab[k, S_R] * _INV_SQRT2, tabe[k, X_R]) if tab[k, S_R] != 0.0 else 0.0
        bt[k, 0] = _double(tab[k, S_AR], tabe[k, X_A])
        bt[k, 1] = _double(tab[k, S_AI], tabe[k, X_A])
        bt[k, 2] = _double(tab[k, S_BR], tabe[k, X_B])
        bt[k, 3] = _double(tab[k, S_BI], tabe[k, X_B])
        bt[k, 4] = r
        bt[k, 5] = _double(_mag(tab[k, S_AR], tab[k, S_AI]), tabe[k, X_A])
        bt[k, B_QR] = _double(tab[k, S_QR], tabe[k, X_Q])
        bt[k, B_QI] = _double(tab[k, S_QI], tabe[k, X_Q])
        bt[k, B_PAR] = tab[k, S_P]
        bt[k, 9] = 0.0
    for k in range(zo.shape[0]):
        zo[k, 0], zo[k, 1], zo[k, 2], zo[k, 3] = orbit[k, 0], orbit[k, 1], 0.0, 0.0
        if 1 <= k <= counts[0]:         # level 0's entry j is the single step from m = 1 + j
            zo[k, 2] = bt[k - 1, 4]


def _level_plan(counts):
    """(offsets, levels (L, 2) int64: each level's first entry and count) of the levels' counts."""
    offsets = np.zeros(len(counts), dtype=np.int64)
    offsets[1:] = np.cumsum(counts[:-1])
    levels = np.empty((len(counts), 2), dtype=np.int64)
    levels[:, 0] = offsets
    levels[:, 1] = counts
    return offsets, levels


def flat_ship_tables(orbit: np.ndarray, orbit_exp: np.ndarray, c_max: tuple[float, int],
                     eps_bits: int, use_bla: bool = True):
    """(zo (N*4,), bt (E*SHIP_BW,), levels (L, 2) int64) flattened as perturbation_loop's walk
    reads them, for an orbit and a bound c_max = (mantissa, exponent) on the frame's |δc|; no
    levels where use_bla is off (perturbation steps only)."""
    counts = level_counts(orbit.shape[0]) if use_bla else []
    zo = np.zeros((orbit.shape[0], 4), dtype=np.float64)
    if not counts:
        zo[:, 0], zo[:, 1] = orbit[:, 0], orbit[:, 1]
        return zo.reshape(-1), np.zeros(SHIP_BW), empty_table()[2]
    offsets, levels = _level_plan(counts)
    total = int(sum(counts))
    tab = np.empty((total, N_S), dtype=np.float64)
    tabe = np.empty((total, 4), dtype=np.int32)
    bt = np.empty((total, SHIP_BW), dtype=np.float64)
    cm, ce = c_max
    _build(orbit, orbit_exp, float(cm), int(ce), int(eps_bits), offsets,
           np.asarray(counts, dtype=np.int64), tab, tabe, zo, bt)
    return zo.reshape(-1), bt.reshape(-1), levels



@njit(cache=True)
def _build_ext(orbit, oexp, cm, ce, eps_bits, offsets, counts, tab, tabe, out, oute):
    """The levels, written as bla.py's _finish writes its entries, B' and the parity after them."""
    _levels(orbit, oexp, cm, ce, eps_bits, offsets, counts, tab, tabe)
    for k in range(tab.shape[0]):
        r, re_ = 0.0, EZERO
        if tab[k, S_R] != 0.0:
            r, re_ = _rnorm(tab[k, S_R] * _INV_SQRT2, tabe[k, X_R])
        ar, ai, ae = tab[k, S_AR], tab[k, S_AI], tabe[k, X_A]
        out[k, T_AR], out[k, T_AI], oute[k, E_A] = ar, ai, ae
        out[k, T_BR], out[k, T_BI], oute[k, E_B] = tab[k, S_BR], tab[k, S_BI], tabe[k, X_B]
        out[k, T_RM], oute[k, E_R] = r, re_
        out[k, T_ADR], out[k, T_ADI] = _double(ar, ae), _double(ai, ae)
        out[k, T_RD] = _double(r, re_)
        am = _mag(ar, ai)
        out[k, T_AM], out[k, T_AD] = am, _double(am, ae)
        out[k, T_QR], out[k, T_QI], oute[k, E_Q] = tab[k, S_QR], tab[k, S_QI], tabe[k, X_Q]
        out[k, T_PAR] = tab[k, S_P]


def ext_ship_tables(orbit: np.ndarray, orbit_exp: np.ndarray, c_max: tuple[float, int],
                    eps_bits: int, use_bla: bool = True):
    """(tab (E, N_TAB_SHIP) float64, tabe (E, 4) int32, levels (L, 2) int64) as extended_loop's
    ship walk reads them (bla.build_table's layout with kmin = 0, B' and the parity added), for an
    orbit and a bound c_max = (mantissa, exponent) on the frame's |δc|; no levels where use_bla
    is off."""
    counts = level_counts(orbit.shape[0]) if use_bla else []
    if not counts:
        return (np.zeros((1, N_TAB_SHIP)), np.zeros((1, 4), dtype=np.int32),
                empty_table()[2])
    offsets, levels = _level_plan(counts)
    total = int(sum(counts))
    tab = np.empty((total, N_S), dtype=np.float64)
    tabe = np.empty((total, 4), dtype=np.int32)
    out = np.empty((total, N_TAB_SHIP), dtype=np.float64)
    oute = np.empty((total, 4), dtype=np.int32)
    cm, ce = c_max
    _build_ext(orbit, orbit_exp, float(cm), int(ce), int(eps_bits), offsets,
               np.asarray(counts, dtype=np.int64), tab, tabe, out, oute)
    return out, oute, levels
