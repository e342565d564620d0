"""The middle tier between float64 perturbation and MPFR: a pixel the per-pixel loops hand back
(guard.py: float64 deltas cannot place it) is iterated again with double-double deltas (~106 bits)
against the reference orbit in double-double (dd_orbit.py), with a bound on its error that is
sound, not a guess. A pixel the bound proves keeps this count; only the others go to MPFR
(--exact-pixels) or are marked (exact_redo.py).

Why it works: such a pixel's count moves with c at ~2^-50 of |δc| (its z depends on c through a
derivative that large), so float64's 53 bits cannot hold it, while 106 bits hold it with ~50 bits
to spare; MPFR, at the picture's ~800-1,000 bits, is far more than it needs.

A perturbation step, with rebasing as perturbation_loop.py's:
    δ ← (2·Z_m + δ)·δ + δc,   z = Z_m + δ;   δ ← z, m ← 0 when |z| < |δ| or the orbit ends;
or, where δ and its error fit a radius of the tier's own BLA table (dd_bla.py, ε = 2^-100), a
bilinear step δ ← A·δ + B·δc of up to 2^k iterations.
The bound e on |z - z_true| (z_true: c's orbit) follows each step rigorously:
    e ← (2|z| + e)·e + inj,
since (z + ε)² - z² = 2zε + ε². inj bounds what a step adds: the double-double operations' own
rounding (each below 2^-104 of its operands' size, a few per step: DD_INJ = 2^-98 of
(2|Z| + |δ|)·|δ| + |δc| covers them, the orbit's hi + lo rounding and the sloppy additions'
cancellation), the orbit's MPFR rounding (`noise`: 2^-(bits - 5) of |Z|² + 2 per step, as if each
Z_n were off by that) and subnormal lo parts (ABS_INJ). Norms are |Re| + |Im| (≥ |·|), |z| is the
Euclidean one from the escape test. A BLA step of l iterations multiplies e by |A| and adds what
it drops (l·ε of what its inner δ can reach), its coefficients' errors (the table carries them),
its own rounding and the orbit's rounding grown across it (dd_bla.py). That bound counts the
coefficients by magnitudes, so a few pixels it leaves unproved are iterated again with shorter
steps (and before MPFR step by step).

Proof of the count: let t_k be c's true orbit, z_k the computed one, |t_k - z_k| ≤ e_k ≤ E_MAX =
128 at every iteration before the computed escape n (bailout radius 256), and e_n ≤ |z_n|/2. A
true escape at j < n - 1 would give |t_{j+1}| > 256² - 2, so |z_{j+1}| > 256 and the computed orbit
would have escaped at j + 1 < n; and |t_n| ≥ |z_n|/2 > 128, so t escapes by n + 1. Inside a BLA
step the true |δ| stays within radii below ε·|2·Z| with |Z| ≤ 2: no escape there. The true escape
iteration is n - 1, n or n + 1: within ±1, as the issue asks (a pixel that never escapes
likewise). e's own double roundings lose less than 2^-30 of it over 10^6 steps, far inside the
factor of ~8 DD_INJ leaves over the sum of the roundings it stands for.

Cost: a perturbation step is ~100 double operations (Dekker's products; numba emits no FMA),
~70 ns; with the table a 5e227 pixel (1.1 M iterations) takes a few ms instead of ~75, against
~1.4 s for MPFR's two runs (docs/PERFORMANCE.md, "Exact where doubles fail"). The orbit in
double-double and its table are one more MPFR run and ~0.3 s a picture (dd_orbit.py, dd_bla.py).
"""
from __future__ import annotations

import math
import operator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from ..loops.escape import BAILOUT2, _make_escape
from ..tables import dd_bla
from ..tables.dd_bla import AABS, AI, AIL, AR, ARL, BABS, BI, BIL, BMAG, BR, BRL, EA, EB, NZ, RAD
from .dd_orbit import EXTRA_BITS, dd_orbit
from ..numbers.double_double import dd_add, dd_mul

# see the module docstring: a step's double-double rounding, as a fraction of its operands' size
DD_INJ = 2.0 ** -98
# subnormal lo parts (deltas below 2^-969) lose at most a few 2^-1074 per operation
ABS_INJ = 2.0 ** -1060
_UP = 1.0 + 2.0 ** -50          # a product of magnitudes rounded up
# a pixel is proved while e stays at most this up to its escape: half the bailout radius
E_MAX = 0.5 * math.sqrt(BAILOUT2)
# pixels a thread takes at a time
BATCH = 4
# the orbit in double-double stops here at the latest (its table holds ~240 bytes a point: 0.5 GB
# at most); a pixel that reaches its end rebases to Z_0, which is sound at any length, only a
# shorter orbit leaves it larger deltas and a larger bound
MAX_ORBIT = 1 << 21
# the table's levels a second pass takes for the pixels the whole table's bound leaves (steps of
# up to 2^11: its magnitude bounds count fewer cancellations)
FALLBACK_LEVELS = 12

_smooth = _make_escape(operator.mul, operator.add, njit(inline="always"))[4]


@njit(nogil=True, cache=True)
def dd_pixel(orbit, tab, levels, cr_h, cr_l, ci_h, ci_l, max_iter, noise, eps):
    """(value, proved) of the pixel δc = (cr_h + cr_l) + i·(ci_h + ci_l) against `orbit`
    (dd_orbit's rows) and its BLA table (dd_bla.build: `tab`, `levels`; ε = eps): escape.py's
    smooth value, and whether the bound proves its count within ±1. noise: the orbit's MPFR
    rounding per step, as a fraction of |Z|^2 + 2."""
    last = orbit.shape[0] - 1
    nlev = levels.shape[0]
    dr_h = dr_l = di_h = di_l = 0.0
    dcm = abs(cr_h) + abs(ci_h)
    e = 0.0
    emax = 0.0
    z_abs = 0.0
    m = 0
    n = 0
    while n < max_iter:
        dmag = abs(dr_h) + abs(di_h)
        best = -1
        length = 1
        if m >= 1:
            # the longest aligned step from m whose radius holds δ and its error
            j0 = m - 1
            k = 0
            while k < nlev and (j0 & ((1 << k) - 1)) == 0:
                j = j0 >> k
                if j >= levels[k, 1] or n + (1 << k) > max_iter:
                    break
                idx = levels[k, 0] + j
                if not dmag * _UP + e <= tab[idx, RAD]:
                    break
                best = idx
                length = 1 << k
                k += 1
        if best >= 0:
            t = tab[best]
            p1h, p1l = dd_mul(t[AR], t[ARL], dr_h, dr_l)
            p2h, p2l = dd_mul(t[AI], t[AIL], di_h, di_l)
            q1h, q1l = dd_mul(t[AR], t[ARL], di_h, di_l)
            q2h, q2l = dd_mul(t[AI], t[AIL], dr_h, dr_l)
            nr_h, nr_l = dd_add(p1h, p1l, -p2h, -p2l)
            ni_h, ni_l = dd_add(q1h, q1l, q2h, q2l)
            p1h, p1l = dd_mul(t[BR], t[BRL], cr_h, cr_l)
            p2h, p2l = dd_mul(t[BI], t[BIL], ci_h, ci_l)
            q1h, q1l = dd_mul(t[BR], t[BRL], ci_h, ci_l)
            q2h, q2l = dd_mul(t[BI], t[BIL], cr_h, cr_l)
            br_h, br_l = dd_add(p1h, p1l, -p2h, -p2l)
            bi_h, bi_l = dd_add(q1h, q1l, q2h, q2l)
            dr_h, dr_l = dd_add(nr_h, nr_l, br_h, br_l)
            di_h, di_l = dd_add(ni_h, ni_l, bi_h, bi_l)
            da = dmag + e
            # what the step drops (l·ε of what the inner δ can reach), its coefficients' and its
            # own rounding, and the orbit's rounding grown across it
            e = (t[AABS] * e + length * eps * 1.01 * (t[AABS] * da + t[BMAG] * dcm)
                 + t[EA] * da + t[EB] * dcm + DD_INJ * (t[AABS] * da + (t[BABS] + t[EB]) * dcm)
                 + noise * t[NZ] + ABS_INJ * length) * _UP
            m += length
            n += length
        else:
            zr_h = orbit[m, 0]
            zr_l = orbit[m, 1]
            zi_h = orbit[m, 2]
            zi_l = orbit[m, 3]
            zmag = abs(zr_h) + abs(zi_h)
            # t = 2Z + δ; δ ← t·δ + δc
            tr_h, tr_l = dd_add(2.0 * zr_h, 2.0 * zr_l, dr_h, dr_l)
            ti_h, ti_l = dd_add(2.0 * zi_h, 2.0 * zi_l, di_h, di_l)
            p1h, p1l = dd_mul(tr_h, tr_l, dr_h, dr_l)
            p2h, p2l = dd_mul(ti_h, ti_l, di_h, di_l)
            q1h, q1l = dd_mul(tr_h, tr_l, di_h, di_l)
            q2h, q2l = dd_mul(ti_h, ti_l, dr_h, dr_l)
            nr_h, nr_l = dd_add(p1h, p1l, -p2h, -p2l)
            ni_h, ni_l = dd_add(q1h, q1l, q2h, q2l)
            dr_h, dr_l = dd_add(nr_h, nr_l, cr_h, cr_l)
            di_h, di_l = dd_add(ni_h, ni_l, ci_h, ci_l)
            inj = (DD_INJ * ((2.0 * zmag + dmag) * dmag + dcm) + noise * (zmag * zmag + 2.0)
                   + ABS_INJ)
            e = (2.0 * z_abs + e) * e + inj
            m += 1
            n += 1
        xr = (orbit[m, 0] + dr_h) + (orbit[m, 1] + dr_l)
        xi = (orbit[m, 2] + di_h) + (orbit[m, 3] + di_l)
        r2 = xr * xr + xi * xi
        if r2 > BAILOUT2:
            return _smooth(r2, n), emax <= E_MAX and 4.0 * e * e <= r2
        emax = max(emax, e)
        z_abs = math.sqrt(r2)
        dd2 = dr_h * dr_h + di_h * di_h
        if m == last or r2 < dd2:
            # δ ← Z_m + δ: adds the orbit's hi + lo rounding and the sums' own
            e += DD_INJ * (abs(orbit[m, 0]) + abs(orbit[m, 2]) + abs(dr_h) + abs(di_h)) + ABS_INJ
            dr_h, dr_l = dd_add(orbit[m, 0], orbit[m, 1], dr_h, dr_l)
            di_h, di_l = dd_add(orbit[m, 2], orbit[m, 3], di_h, di_l)
            m = 0
    return float(max_iter), emax <= E_MAX


@njit(nogil=True, cache=True)
def _dd_batch(orbit, tab, levels, dcs, max_iter, noise, eps, values, proved, lo, hi):
    for k in range(lo, hi):
        v, ok = dd_pixel(orbit, tab, levels, dcs[k, 0], dcs[k, 1], dcs[k, 2], dcs[k, 3],
                         max_iter, noise, eps)
        values[k] = v
        proved[k] = ok


def dd_values(orbit: np.ndarray, table, dcs: np.ndarray, max_iter: int, noise: float,
              threads: int = 1, cancel=None) -> tuple[np.ndarray, np.ndarray]:
    """(values, proved) of each row (cr_h, cr_l, ci_h, ci_l) of `dcs` against `orbit` and its
    `table` (dd_bla.build's (tab, levels)), on `threads` threads (the loop holds no GIL);
    cancel.check() between batches of BATCH pixels."""
    tab, levels = table
    eps = 2.0 ** -dd_bla.EPS_BITS
    k = dcs.shape[0]
    values = np.zeros(k, dtype=np.float64)
    proved = np.zeros(k, dtype=np.bool_)

    def run(lo):
        if cancel is not None:
            cancel.check()
        _dd_batch(orbit, tab, levels, dcs, int(max_iter), float(noise), eps, values, proved, lo,
                  min(k, lo + BATCH))

    starts = range(0, k, BATCH)
    if threads <= 1 or k <= BATCH:
        for lo in starts:
            run(lo)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(run, starts))
    return values, proved


def deltas(whole, places, bits: int) -> np.ndarray:
    """(K, 4) δc of pixels `places` ((row, col) of the picture `whole`) from its centre, as
    double-double (cr_h, cr_l, ci_h, ci_l): exact.pixel_point's offsets (col + 0.5 - W/2)·step
    and -(row + 0.5 - H/2)·step, the spacing `step` at `bits` in double-double (these offsets
    are exact doubles, so each δc is within 2^-104 of itself: the bound's DD_INJ·|δc| per step
    covers that)."""
    from ..reference.reference import gmpy2_module
    gmpy2 = gmpy2_module()
    w, h = int(whole.size[0]), int(whole.size[1])
    with gmpy2.context(precision=int(bits)):
        step = gmpy2.mpfr(str(whole.width_decimal)) / w
        s_h = float(step)
        s_l = float(step - s_h)
    at = np.array(places, dtype=np.int64).reshape(-1, 2)
    out = np.zeros((len(at), 4), dtype=np.float64)
    _deltas(at, w, h, s_h, s_l, out)
    return out


@njit(cache=True)
def _deltas(at, w, h, s_h, s_l, out):
    for k in range(at.shape[0]):
        out[k, 0], out[k, 1] = dd_mul(at[k, 1] + 0.5 - w / 2.0, 0.0, s_h, s_l)
        out[k, 2], out[k, 3] = dd_mul(-(at[k, 0] + 0.5 - h / 2.0), 0.0, s_h, s_l)


def centre_hex(whole, bits: int) -> tuple[str, str]:
    """The picture's centre at `bits`, as MPFR hex strings (dd_orbit's input)."""
    from ..reference.reference import gmpy2_module
    gmpy2 = gmpy2_module()
    with gmpy2.context(precision=int(bits)):
        return (format(gmpy2.mpfr(str(whole.center_re)), "a"),
                format(gmpy2.mpfr(str(whole.center_im)), "a"))


def reaches(whole) -> bool:
    """Whether the tier serves the picture: a rectangular grid (`deltas` places its pixels as
    exact.pixel_point does) whose δc are within float64's range (the perturbation format's
    spacings; lo parts below 2^-1022 lose bits, which ABS_INJ counts); others go on to MPFR."""
    return not getattr(whole, "polar", 0) and whole.spacing_log2 >= -1000.0


def dd_at(whole, places, threads: int = 1, orbits: dict | None = None, cancel=None,
          thorough: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(values, proved) of pixels `places` of the picture `whole` (a DeepRequest.picture());
    its double-double orbit made once and kept in `orbits` (a dict) when given. `thorough`:
    the pixels BLA leaves are tried step by step too (where MPFR would be next)."""
    bits = int(whole.precision) + EXTRA_BITS
    key = (str(whole.center_re), str(whole.center_im), bits, int(whole.max_iter))
    got = None if orbits is None else orbits.get(key)
    if got is None:
        orbit = dd_orbit(*centre_hex(whole, bits), bits, min(int(whole.max_iter), MAX_ORBIT),
                         cancel)
        got = (orbit, dd_bla.build(orbit, dc_max(whole)))
        if orbits is not None:
            orbits.clear()          # one picture's orbit and table at a time (~300 MB at 5e227)
            orbits[key] = got
    noise = 2.0 ** -(bits - 5)
    dcs = deltas(whole, places, bits)
    values, proved = dd_values(got[0], got[1], dcs, whole.max_iter, noise, threads, cancel)
    tab, levels = got[1]
    # BLA's bound counts its coefficients by magnitudes: some pixels it leaves, shorter steps
    # (cheap) or step by step iteration (a bound that follows the pixel's own δ, as costly as the
    # first pass for a pixel in fifteen: only before MPFR, `thorough`) still prove
    for k in (FALLBACK_LEVELS, 0) if thorough else (FALLBACK_LEVELS,):
        left = np.flatnonzero(~proved)
        if len(left):
            v, ok = dd_values(got[0], (tab, levels[:k]), dcs[left], whole.max_iter, noise,
                              threads, cancel)
            values[left[ok]], proved[left[ok]] = v[ok], True
    return values, proved


def dc_max(whole) -> float:
    """A bound on |δc| over the picture `whole` (its centre is the orbit's)."""
    w, h = int(whole.size[0]), int(whole.size[1])
    return math.ldexp(0.5 * math.hypot(w, h) * (1.0 + 2.0 ** -30), math.ceil(whole.spacing_log2))
