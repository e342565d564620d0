"""The Burning Ship's BLA table in the extended loop's layout (bla_ship.ext_ship_tables): the same
entries as the perturbation loop's rows, and each step the ship's own iterations, off the axis."""
from __future__ import annotations

import numpy as np
import pytest

gmpy2 = pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.benches import locations as loc  # noqa: E402
from kernels.mandelbrot.tables.bla import EPS_BITS  # noqa: E402
from kernels.mandelbrot.tables.bla_ship import (  # noqa: E402
    B_PAR, B_QI, B_QR, E_Q, N_TAB_SHIP, SHIP_BW, T_PAR, T_QI, T_QR, ext_ship_tables,
    flat_ship_tables)
from kernels.mandelbrot.tables.layout import (  # noqa: E402
    E_A, E_B, E_R, T_AD, T_ADI, T_ADR, T_AI, T_AR, T_BI, T_BR, T_RD, T_RM)
from kernels.mandelbrot.reference.reference import ReferenceOrbit  # noqa: E402

C_MAX = (0.5, -330)         # |δc| < 2^-331: a frame ~1e-100 wide


@pytest.fixture(scope="module")
def orbit():
    o = ReferenceOrbit(loc.SHIP_447.center_re, loc.SHIP_447.center_im, 400,
                       formula="burning-ship")
    o.extend(1500)
    return o.arrays()


def test_the_entries_are_the_perturbation_loop_s(orbit):
    orb, oexp = orbit
    tab, tabe, levels = ext_ship_tables(orb, oexp, C_MAX, EPS_BITS)
    _, bt, lv = flat_ship_tables(orb, oexp, C_MAX, EPS_BITS)
    bt = bt.reshape(-1, SHIP_BW)
    assert tab.shape == (bt.shape[0], N_TAB_SHIP) and np.array_equal(levels, lv)
    assert np.array_equal(tab[:, [T_ADR, T_ADI, T_RD, T_AD]], bt[:, [0, 1, 4, 5]])
    assert np.array_equal(np.ldexp(tab[:, [T_BR, T_BI]], tabe[:, [E_B, E_B]]), bt[:, [2, 3]])
    assert np.array_equal(np.ldexp(tab[:, [T_QR, T_QI]], np.maximum(tabe[:, [E_Q, E_Q]], -4000)),
                          bt[:, [B_QR, B_QI]])
    assert np.array_equal(tab[:, T_PAR], bt[:, B_PAR])
    assert np.array_equal(np.ldexp(tab[:, T_RM], np.maximum(tabe[:, E_R], -4000)), tab[:, T_RD])
    # off the axis the signs hold for a while: steps of every level, odd ones among them
    assert (tab[:, T_RM] > 0).sum() > tab.shape[0] // 2
    assert (tab[:, T_PAR] != 0).any() and (tab[levels[3, 0]:, T_QR] != 0).any()
    assert ext_ship_tables(orb, oexp, C_MAX, EPS_BITS, use_bla=False)[2].shape == (0, 2)


def _fe(m, e):
    return gmpy2.mpfr(float(m)) * gmpy2.mpfr(2) ** int(e)


def test_a_step_is_the_ship_s_iterations_within_its_radius(orbit):
    """Entries of several levels applied to a δ at half their radius or to none give the ship's exact
    perturbation iterations (MPFR) to within the table's ε, conjugation and B' included."""
    orb, oexp = orbit
    tab, tabe, levels = ext_ship_tables(orb, oexp, C_MAX, EPS_BITS)
    gmpy2.get_context().precision = 1200
    cx, cy = _fe(0.3, C_MAX[1] + 1), _fe(-0.4, C_MAX[1] + 1)
    tried = odd = 0
    for lv in (0, 3, 6):
        off, count = levels[lv]
        for j in range(0, count, max(1, count // 12)):
            idx = off + j
            if tab[idx, T_RM] == 0.0:
                continue
            # a δ at half the radius (max-norm, R/sqrt2), and none: B(δc) alone, b' and all
            r = _fe(tab[idx, T_RM], tabe[idx, E_R]) / 2 * (j % 2)
            dx, dy = r * gmpy2.mpfr(0.8), -r * gmpy2.mpfr(0.6)
            x0, y0 = dx, dy
            m = 1 + j * (1 << lv)
            for k in range(m, m + (1 << lv)):
                zx, zy = gmpy2.mpfr(orb[k, 0]), gmpy2.mpfr(orb[k, 1])
                xy = zx * zy
                nx = (2 * zx + dx) * dx - (2 * zy + dy) * dy + cx
                dy = 2 * (abs(xy + zx * dy + dx * (zy + dy)) - abs(xy)) + cy
                dx = nx
            par = tab[idx, T_PAR] != 0.0
            odd += par
            sx, sy = x0, (-y0 if par else y0)
            ar, ai = _fe(tab[idx, T_AR], tabe[idx, E_A]), _fe(tab[idx, T_AI], tabe[idx, E_A])
            br, bi = _fe(tab[idx, T_BR], tabe[idx, E_B]), _fe(tab[idx, T_BI], tabe[idx, E_B])
            qr, qi = _fe(tab[idx, T_QR], tabe[idx, E_Q]), _fe(tab[idx, T_QI], tabe[idx, E_Q])
            lx = ar * sx - ai * sy + br * cx - bi * cy + qr * cx + qi * cy
            ly = ar * sy + ai * sx + br * cy + bi * cx + qi * cx - qr * cy
            err = gmpy2.sqrt((lx - dx) ** 2 + (ly - dy) ** 2)
            size = gmpy2.sqrt(dx * dx + dy * dy)
            assert size > 0
            assert err <= size * 2.0 ** (6 - EPS_BITS) * (1 << lv), (lv, j, float(err / size))
            tried += 1
    assert tried >= 20 and odd > 0
