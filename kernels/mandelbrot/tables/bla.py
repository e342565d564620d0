"""The bilinear approximation (BLA) table of a reference orbit, built on the CPU with numba.

A step from reference iteration m, δ ← 2·Z_m·δ + δ² + δc, is bilinear in (δ, δc) once δ² is lost in
the round-off of 2·Z_m·δ: δ_{m+1} = A·δ_m + B·δc with A = 2·Z_m, B = 1, valid while
|δ| < R = ε·|2·Z_m| (ε = 2^-EPS_BITS). Two steps x then y merge into one (Heiland-Allen, "Deep zoom
theory and practice (again)", mathr.co.uk, 2022):
    A = A_y·A_x,   B = A_y·B_x + B_y,   R = max(0, min(R_x, (R_y − |B_x|·|δc|max) / |A_x|)).
Level k holds the merged steps of length 2^k that start at m = 1 + j·2^k (landing at most on the
orbit's last point); a pixel at m takes the longest one whose radius holds its δ.

Entries are stored in floatexp (a float64 mantissa and an int32 exponent each for A, B and R), since
a frame 1e-1000 wide has |B| up to ~1e1000 and R down to ~1e-1000, plus float64 copies of A and R
for deltas that are plain doubles, and |A| (mantissa with A's exponent, and as a double) for the
kernels' error bound (guard.py). R is stored divided by sqrt(2) so a pixel can compare it with
max(|Re δ|, |Im δ|) instead of |δ|.

Steps that start where |Z_m| > 2 get R = 0: a pixel following them could escape in the middle of a
merged step unseen, so only single perturbation steps go there.

Cost: the table has ~2 entries per orbit point (N + N/2 + N/4 ...), 92 bytes each; the build is
linear in N (see DeepRenderer timings: detail "table"), spread over the CPU's threads: an entry
depends only on the single steps it merges, so blocks of them are built side by side
(`_build_parallel`), the same table bit for bit as the one-thread `_build`.
"""
from __future__ import annotations

import math
import threading

import numba
import numpy as np
from numba import njit, prange

from .layout import empty_table
from ..numbers.pow2_scale import frexp, ldexp
from ..numbers.orbit_format import EZERO

# ε = 2^-EPS_BITS: the neglected δ² is at most this fraction of the linear term per step. 2^-53 would
# be exact to float64 round-off; a larger ε lets more steps merge. Measured against brute force and
# the frames of bench.py (CPU twin, 2026-11-22): with 2^-24 one frame in five fell to 98.7 % of its
# pixels within ±1; 2^-32, 2^-40 and 2^-48 kept every pixel within ±1 except one hypersensitive
# pixel at the centre of the published 1e-30 frame (where moving c by 1e-12 of a pixel changes the
# count by 4). Perturbation steps per pixel at 1e-100 / 1e-300: 344 / 268 (2^-24), 523 / 413
# (2^-32), 718 / 487 (2^-40), 963 / 623 (2^-48): the steps left are the pixels' last iterations,
# after they leave the reference, where no linear step holds. In seahorse valley just past float64
# 2-3 % of the pixels are ill-conditioned and no ε of a useful size holds them (2^-48 still left up
# to 13 of 2,304 off): the kernels' accuracy guard (guard.py) redoes those with tighter radii,
# which keeps 2^-32 for the rest (docs/PERFORMANCE.md, "The accuracy guard").
EPS_BITS = 32
_FAR = 1100
_CLAMP = 4000
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
# one table build at a time: each takes every CPU thread, and GPU worker threads may ask at once
_BUILD_LOCK = threading.Lock()
_THREADSAFE: bool | None = None
# the parallel build's blocks: 2^CHUNK_LEVELS single steps (and the levels above them) each
CHUNK_LEVELS = 10


@njit(inline="always")
def _rnorm(m, e):
    if m == 0.0:
        return 0.0, EZERO
    f, k = frexp(m)
    return f, e + k


@njit(inline="always")
def _rsub(a, ae, b, be):
    """max(0, a - b) for non-negative floatexp reals."""
    if b == 0.0:
        return a, ae
    if ae >= be:
        d = be - ae
        v = a if d < -_FAR else a - ldexp(b, d)
        e = ae
    else:
        d = ae - be
        v = (0.0 if d < -_FAR else ldexp(a, d)) - b
        e = be
    if v <= 0.0:
        return 0.0, EZERO
    return _rnorm(v, e)


@njit(inline="always")
def _rlt(a, ae, b, be):
    """a < b for normalised non-negative floatexp reals (zero has e = EZERO)."""
    if ae != be:
        return ae < be
    return a < b


@njit(inline="always")
def _cnorm(xr, xi, e):
    a = max(abs(xr), abs(xi))
    if a == 0.0:
        return 0.0, 0.0, EZERO
    _, k = frexp(a)
    return ldexp(xr, -k), ldexp(xi, -k), e + k


@njit(inline="always")
def _cmul(ar, ai, ae, br, bi, be):
    return _cnorm(ar * br - ai * bi, ar * bi + ai * br, ae + be)


@njit(inline="always")
def _cadd(ar, ai, ae, br, bi, be):
    if ae >= be:
        d = be - ae
        if d < -_FAR:
            return ar, ai, ae
        return _cnorm(ar + ldexp(br, d), ai + ldexp(bi, d), ae)
    d = ae - be
    if d < -_FAR:
        return br, bi, be
    return _cnorm(ldexp(ar, d) + br, ldexp(ai, d) + bi, be)


@njit(inline="always")
def _mag(xr, xi):
    """|x| of a normalised mantissa pair (no overflow or underflow to guard against, unlike hypot)."""
    return math.sqrt(xr * xr + xi * xi)


@njit(inline="always")
def _clamp(k):
    return max(-_CLAMP, min(_CLAMP, k))


@njit(cache=True, nogil=True)
def _single(orbit, oexp, eps_bits, tab, tabe, j):
    """Level 0's entry j: the single step from m = 1 + j."""
    _single_at(orbit, oexp, eps_bits, tab, tabe, j, j)


@njit(cache=True, nogil=True)
def _single_at(orbit, oexp, eps_bits, tab, tabe, j, k):
    """Level 0's entry j written to row k (a block's scratch rows: bla_blocks.py)."""
    m = 1 + j
    zr = orbit[m, 0]
    zi = orbit[m, 1]
    tab[k, 0] = orbit[m, 2]
    tab[k, 1] = orbit[m, 3]
    tabe[k, 0] = oexp[m] + 1
    tab[k, 2] = 0.5
    tab[k, 3] = 0.0
    tabe[k, 1] = 1
    if zr * zr + zi * zi > 4.0 or oexp[m] == EZERO:
        tab[k, 4] = 0.0
        tabe[k, 2] = EZERO
    else:
        r, re_ = _rnorm(_mag(orbit[m, 2], orbit[m, 3]), oexp[m] + 1 - eps_bits)
        tab[k, 4] = r
        tabe[k, 2] = re_


@njit(cache=True, nogil=True)
def _merge(cm, ce, tab, tabe, x, k):
    """Entry k: the steps at x then x + 1 (one level down) merged."""
    y = x + 1
    axr, axi, axe = tab[x, 0], tab[x, 1], tabe[x, 0]
    bxr, bxi, bxe = tab[x, 2], tab[x, 3], tabe[x, 1]
    ayr, ayi, aye = tab[y, 0], tab[y, 1], tabe[y, 0]
    byr, byi, bye = tab[y, 2], tab[y, 3], tabe[y, 1]
    ar, ai, ae = _cmul(ayr, ayi, aye, axr, axi, axe)
    tr, ti, te = _cmul(ayr, ayi, aye, bxr, bxi, bxe)
    br, bi, be = _cadd(tr, ti, te, byr, byi, bye)
    # R = max(0, min(R_x, (R_y - |B_x| c) / |A_x|))
    bm, bme = _rnorm(_mag(bxr, bxi), bxe)
    bc, bce = _rnorm(bm * cm, bme + ce)
    num, nume = _rsub(tab[y, 4], tabe[y, 2], bc, bce)
    if num == 0.0:
        r, re_ = 0.0, EZERO
    else:
        am, ame = _rnorm(_mag(axr, axi), axe)
        if am == 0.0:
            r, re_ = tab[x, 4], tabe[x, 2]
        else:
            r, re_ = _rnorm(num / am, nume - ame)
            if _rlt(tab[x, 4], tabe[x, 2], r, re_):
                r, re_ = tab[x, 4], tabe[x, 2]
    tab[k, 0], tab[k, 1], tabe[k, 0] = ar, ai, ae
    tab[k, 2], tab[k, 3], tabe[k, 1] = br, bi, be
    tab[k, 4], tabe[k, 2] = r, re_


@njit(cache=True, nogil=True)
def _finish(tab, tabe, k):
    """Entry k's R / sqrt(2) and its float64 copies."""
    if tab[k, 4] != 0.0:
        r, re_ = _rnorm(tab[k, 4] * _INV_SQRT2, tabe[k, 2])
        tab[k, 4] = r
        tabe[k, 2] = re_
    e = _clamp(tabe[k, 0])
    tab[k, 5] = ldexp(tab[k, 0], e)
    tab[k, 6] = ldexp(tab[k, 1], e)
    tab[k, 7] = ldexp(tab[k, 4], _clamp(tabe[k, 2]))
    am = _mag(tab[k, 0], tab[k, 1])
    tab[k, 8] = am
    tab[k, 9] = ldexp(am, e)


@njit(cache=True, nogil=True)
def _build(orbit, oexp, cm, ce, eps_bits, offsets, counts, tab, tabe):
    """Fill every level on one thread. Column layout: see layout.T_* / layout.E_*; R is the true
    radius while the levels are built, scaled by 1/sqrt(2) at the end, with |A| filled in."""
    for j in range(counts[0]):
        _single(orbit, oexp, eps_bits, tab, tabe, j)
    for lv in range(1, counts.shape[0]):
        src = offsets[lv - 1]
        dst = offsets[lv]
        for j in range(counts[lv]):
            _merge(cm, ce, tab, tabe, src + 2 * j, dst + j)
    for k in range(tab.shape[0]):
        _finish(tab, tabe, k)


@njit(parallel=True, cache=True, nogil=True)
def _build_parallel(orbit, oexp, cm, ce, eps_bits, offsets, counts, tab, tabe):
    """_build on all the CPU's threads, the same table bit for bit (each entry by the same code).
    An entry of level k depends only on 2^k single steps, so the threads take blocks of
    2^CHUNK_LEVELS single steps and build every level of each block up to CHUNK_LEVELS in one
    parallel pass (one barrier, not one per level, and each block stays in cache); the few
    entries above are built after it on one thread."""
    nlev = counts.shape[0]
    top = min(CHUNK_LEVELS, nlev - 1)
    size = 1 << top
    nchunks = (counts[0] + size - 1) // size
    for c in prange(nchunks):
        for j in range(c * size, min((c + 1) * size, counts[0])):
            _single(orbit, oexp, eps_bits, tab, tabe, j)
        for lv in range(1, top + 1):
            src = offsets[lv - 1]
            dst = offsets[lv]
            span = size >> lv
            for j in range(c * span, min((c + 1) * span, counts[lv])):
                _merge(cm, ce, tab, tabe, src + 2 * j, dst + j)
        # levels below the block's top are read by nothing outside the block: finish them here
        for lv in range(top):
            span = size >> lv
            for j in range(c * span, min((c + 1) * span, counts[lv])):
                _finish(tab, tabe, offsets[lv] + j)
    for lv in range(top + 1, nlev):
        for j in range(counts[lv]):
            _merge(cm, ce, tab, tabe, offsets[lv - 1] + 2 * j, offsets[lv] + j)
    for k in range(offsets[top], tab.shape[0]):
        _finish(tab, tabe, k)


def threadsafe_layer() -> bool:
    """Whether numba's threading layer lets two threads run parallel code at once (tbb, omp). The
    GPU worker threads call build_table while a CPU backend's worker may run its own parallel
    kernels; under workqueue (no OpenMP or TBB on the machine) that aborts the process, so there
    the table is built on one thread."""
    global _THREADSAFE
    if _THREADSAFE is None:
        try:
            layer = numba.threading_layer()
        except ValueError:          # not started yet: start it as the first parallel call would
            try:
                from numba.np.ufunc import parallel as _parallel
                _parallel._launch_threads()
                layer = numba.threading_layer()
            except Exception:       # numba's internals moved: the one-thread build is safe
                layer = "unknown"
        _THREADSAFE = layer in ("omp", "tbb")
    return _THREADSAFE


def level_counts(length: int) -> list[int]:
    """Entries per level for an orbit of `length` points: N-2 single steps, then halving."""
    counts = []
    c = max(0, length - 2)
    while c > 0:
        counts.append(c)
        c //= 2
    return counts


def build_table(orbit: np.ndarray, orbit_exp: np.ndarray, c_max: tuple[float, int],
                eps_bits: int = EPS_BITS, kmin: int = 0, parallel: bool = True):
    """(tab (E, 10) float64, tabe (E, 3) int32, levels (L, 2) int64 = (offset, count) of levels
    kmin, kmin+1, ...) for an orbit and a bound c_max = (mantissa, exponent) on the frame's |δc|.
    parallel: build each level on all the CPU's threads (the same table as on one thread), where
    numba's threading layer allows it (threadsafe_layer)."""
    counts = level_counts(orbit.shape[0])
    if len(counts) <= kmin:
        return empty_table()
    offsets = np.zeros(len(counts), dtype=np.int64)
    offsets[1:] = np.cumsum(counts[:-1])
    total = int(sum(counts))
    tab = np.empty((total, 10), dtype=np.float64)
    tabe = np.empty((total, 3), dtype=np.int32)
    cm, ce = c_max
    build = _build_parallel if (parallel and threadsafe_layer()) else _build
    with _BUILD_LOCK:
        build(orbit, orbit_exp, float(cm), int(ce), int(eps_bits), offsets,
              np.asarray(counts, dtype=np.int64), tab, tabe)
    first = int(offsets[kmin])
    levels = np.empty((len(counts) - kmin, 2), dtype=np.int64)
    levels[:, 0] = offsets[kmin:] - first
    levels[:, 1] = counts[kmin:]
    if first:
        tab, tabe = tab[first:].copy(), tabe[first:].copy()
    return tab, tabe, levels
