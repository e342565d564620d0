"""The perturbation loop's own layout of the orbit and the BLA table (`loop_tables`:
`zo` rows of Z_m with the radius of the single step from m, `bt` rows of A, B as doubles, the
radius and |A|), written on all the CPU's threads: the rows are independent, and a table of
millions of entries is as long to copy into this layout on one thread as to build. The same
arrays bit for bit as column-by-column NumPy (tests/kernels/test_bla_parallel.py); on one thread
where numba's threading layer does not allow parallel code from several threads
(bla.threadsafe_layer).

`loop_tables` / `flat_tables` lay them out in the perturbation loop's columns (below),
`flat_tables32` rounds them to float32 for its float32 deltas; `loop_layout` takes the columns as
arguments.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .bla import _BUILD_LOCK, threadsafe_layer
from .layout import E_B, T_AD, T_ADI, T_ADR, T_BI, T_BR, T_RD
from ..numbers.pow2_scale import ldexp

# zo columns: Re Z_m, Im Z_m, radius (max-norm) of the single BLA step from m (0: none), unused
Z_RE, Z_IM, Z_R0 = range(3)
# bt columns: A (double), B (double), radius (max-norm, double), |A| (double)
B_AR, B_AI, B_BR, B_BI, B_R, B_AA = range(6)
# the loop reads both flattened (`flat_tables`): row width of zo and bt
ZW, BW = 4, 6
_CLAMP = 4000
# the float32 loop's table rows (`pad_table`): six numbers padded to eight, so that a row starts
# on a 16-byte boundary and A, B come in one 16-byte load; zo's rows of four are 16 bytes already
BW32 = 8
# the largest flattened array the float32 loop's uint32 indices reach
MAX_FLAT = 2 ** 32 - 1


@njit(inline="always")
def zo_row(orbit, tab, off0, count0, zo, zc, k):
    """Row k of zo: Z_k and the radius of the single step from k (0 where there is none)."""
    for c in range(zo.shape[1]):
        zo[k, c] = 0.0
    zo[k, zc[0]] = orbit[k, 0]
    zo[k, zc[1]] = orbit[k, 1]
    if 1 <= k <= count0:        # level 0's entry j is the single step from m = 1 + j
        zo[k, zc[2]] = tab[off0 + k - 1, T_RD]


@njit(inline="always")
def bt_row(tab, tabe, bt, bc, clamp, k):
    """Row k of bt from the table's (finished) entry k."""
    bt_row_at(tab, tabe, k, bt, k, bc, clamp)


@njit(inline="always")
def bt_row_at(tab, tabe, t, bt, k, bc, clamp):
    """Row k of bt from the (finished) entry in row t of tab (a block's scratch rows)."""
    for c in range(bt.shape[1]):
        bt[k, c] = 0.0
    bt[k, bc[0]] = tab[t, T_ADR]
    bt[k, bc[1]] = tab[t, T_ADI]
    e = min(max(tabe[t, E_B], -clamp), clamp)
    # a B past float64's range becomes inf, as NumPy's ldexp makes it
    bt[k, bc[2]] = ldexp(tab[t, T_BR], e)
    bt[k, bc[3]] = ldexp(tab[t, T_BI], e)
    bt[k, bc[4]] = tab[t, T_RD]
    bt[k, bc[5]] = tab[t, T_AD]


@njit(inline="always")
def _row(orbit, tab, tabe, off0, count0, zo, bt, zc, bc, clamp, k):
    """Row k of bt and, where there is one, of zo."""
    if k < zo.shape[0]:
        zo_row(orbit, tab, off0, count0, zo, zc, k)
    if k < bt.shape[0]:
        bt_row(tab, tabe, bt, bc, clamp, k)


@njit(cache=True, nogil=True)
def _fill(orbit, tab, tabe, off0, count0, zo, bt, zc, bc, clamp):
    for k in range(max(zo.shape[0], bt.shape[0])):
        _row(orbit, tab, tabe, off0, count0, zo, bt, zc, bc, clamp, k)


@njit(parallel=True, cache=True, nogil=True)
def _fill_parallel(orbit, tab, tabe, off0, count0, zo, bt, zc, bc, clamp):
    # one parallel loop over the rows of both arrays: one barrier
    for k in prange(max(zo.shape[0], bt.shape[0])):
        _row(orbit, tab, tabe, off0, count0, zo, bt, zc, bc, clamp, k)


def table_kernels() -> list:
    """The compiled functions a deep frame's table and its layout use on this machine (the first
    start's check of numba's disk cache: kernels/mandelbrot/frames/warm.py)."""
    from . import bla
    if threadsafe_layer():
        return [bla._build_parallel, _fill_parallel]
    return [bla._build, _fill]


def loop_layout(orbit, tab, tabe, levels, zcols, bcols, zw: int, bw: int, clamp: int,
                parallel: bool = True):
    """(zo (N, zw), bt (E, bw)) float64: zcols = (Re Z, Im Z, single-step radius) columns of zo,
    bcols = (Re A, Im A, Re B, Im B, radius, |A|) columns of bt; B's exponents clamped to ±clamp
    before scaling. Columns not named are 0."""
    zo = np.empty((orbit.shape[0], int(zw)), dtype=np.float64)
    bt = np.empty((tab.shape[0], int(bw)), dtype=np.float64)
    off0, count0 = (int(levels[0, 0]), int(levels[0, 1])) if levels.shape[0] else (0, 0)
    fill = _fill_parallel if (parallel and threadsafe_layer()) else _fill
    with _BUILD_LOCK:
        fill(orbit, tab, tabe, off0, count0, zo, bt, np.asarray(zcols, dtype=np.int64),
             np.asarray(bcols, dtype=np.int64), int(clamp))
    return zo, bt


def loop_tables(orbit: np.ndarray, tab: np.ndarray, tabe: np.ndarray, levels: np.ndarray):
    """(zo (N, 4), bt (E, 6)) float64 from the reference orbit and its table (bla.build_table with
    kmin = 0, or layout.empty_table()): level 0's entry j is the single step from m = 1 + j; a B
    past float64's range becomes inf. Written on all the CPU's threads."""
    return loop_layout(orbit, tab, tabe, levels, (Z_RE, Z_IM, Z_R0),
                       (B_AR, B_AI, B_BR, B_BI, B_R, B_AA), ZW, BW, _CLAMP)


def flat_tables(orbit: np.ndarray, tab: np.ndarray, tabe: np.ndarray, levels: np.ndarray):
    """`loop_tables`' arrays flattened (zo (N*ZW,), bt (E*BW,)), as the loop reads them."""
    zo, bt = loop_tables(orbit, tab, tabe, levels)
    return zo.reshape(-1), bt.reshape(-1)


def _round_down(a: np.ndarray) -> np.ndarray:
    """float32 no larger than `a` (a radius must never grow when it is rounded)."""
    r = a.astype(np.float32)
    up = r.astype(np.float64) > a
    r[up] = np.nextafter(r[up], np.float32(0))
    return r


def pad_table(bt32: np.ndarray) -> np.ndarray:
    """flat float32 table rows of BW numbers as the float32 loop reads them: rows of BW32."""
    rows = bt32.reshape(-1, BW)
    out = np.zeros((rows.shape[0], BW32), np.float32)
    out[:, :BW] = rows
    return out.reshape(-1)


def flat_tables32(orbit, tab, tabe, levels, padded: bool = True):
    """`flat_tables`' arrays rounded to float32, the radii rounded down, the table's rows padded
    (`pad_table`) where `padded` (the float32 loop's; make_walk's 64-bit loop reads them unpadded:
    perturbation_loop.WALK_INT64)."""
    zo, bt = flat_tables(orbit, tab, tabe, levels)
    with np.errstate(over="ignore"):
        zo32 = zo.astype(np.float32)
        bt32 = bt.astype(np.float32)
    zo32[Z_R0::ZW] = _round_down(zo[Z_R0::ZW])
    bt32[B_R::BW] = _round_down(bt[B_R::BW])
    # a step whose coefficients leave float32's range is never taken (radius 0)
    rows = bt32.reshape(-1, BW)
    rows[~np.isfinite(rows).all(axis=1), B_R] = 0.0
    if max(zo32.size, bt32.size) > MAX_FLAT:
        raise ValueError(f"an orbit of {zo32.size // 4} points is too long for the float32 loop's "
                         "32-bit indices")
    return (zo32, pad_table(bt32)) if padded else (zo32, bt32)
