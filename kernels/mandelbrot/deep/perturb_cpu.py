"""The loop of perturbation-format frames on both targets (`make_walk`: the CPU twin here, the GPU
in perturb_gpu.py): the operations of perturb._make_pixel(extended=False), in the same order and
with the same roundings (so the counts and the stats are the same bit for bit), over its own layout
of the orbit and table (`cpu_tables`). First laid out for a CPU core; the same layout cut the
GPU's 1e-100 re-render from 22.0 to 15.2 ms (perturb_gpu.py says why).

Where the shared loop spends its time on a CPU, and what this one does instead (1e-30 frame of
docs/FRACTALSHADES.md at 320x180, one thread: 718 perturbation and 198 BLA steps per pixel,
20.7 µs of CPU per pixel with the shared loop, 9.2 µs here):

* B·δc of a BLA step: the shared loop multiplies in floatexp (a frexp and four ldexp, library calls
  here) because its B can exceed float64's range. In a valid step |B·δc| stays below the radius
  of the step that follows it (bla.py's merge rule), so B of every entry a pixel can take is a
  plain double, and so is δc in this format (spacings down to 2^-1000): the product of the
  doubles is the product of the mantissas scaled by an exact power of two, so the same number
  wherever it is a normal double (a product below 2^-1022 could differ in its last subnormal bit).
  `cpu_tables` stores B as a double per entry.
* The radius of the single step from m (table level 0) sits beside Z_m in one row (`zo`), so the
  test "does any BLA step hold δ here" - made before every step, and failing for most of a pixel's
  last few hundred iterations, where δ has outgrown every radius - reads the cache line that the
  perturbation step reads anyway.
* Level 0 only (kmin = 0, the renderer's default); other kmin go to the shared loop.

What is left is latency: a perturbation step is a chain of four dependent operations (~7 ns),
a BLA step ~23 ns with its table walk (tools/deep_steps.py counts where the steps go). Two pixels
in lockstep (escape.py's trick for float64) were tried and were 1.2-1.5x slower: between BLA
steps a pixel's runs of perturbation steps are too short for the interleaving to pay.
"""
from __future__ import annotations

import math
import operator

import numpy as np
from numba import njit, prange

from ..escape import BAILOUT2
from .perturb import (
    E_B,
    ERR_TOL2,
    G_HI,
    G_LO,
    LAST_SHIFT,
    REDO_SHIFT,
    T_AD,
    T_ADI,
    T_ADR,
    T_BI,
    T_BR,
    T_RD,
    make_step_helpers,
)

# zo columns: Re Z_m, Im Z_m, radius (max-norm) of the single BLA step from m (0: none), unused
Z_RE, Z_IM, Z_R0 = range(3)
# bt columns: A (double), B (double), radius (max-norm, double), |A| (double)
B_AR, B_AI, B_BR, B_BI, B_R, B_AA = range(6)
# the loop reads both flattened (`flat_tables`): row width of zo and bt
ZW, BW = 4, 6
_CLAMP = 4000


def cpu_tables(orbit: np.ndarray, tab: np.ndarray, tabe: np.ndarray, levels: np.ndarray):
    """(zo (N, 4), bt (E, 6)) float64 from the reference orbit and its table (bla.build_table with
    kmin = 0, or perturb.empty_table())."""
    n = orbit.shape[0]
    zo = np.zeros((n, 4), dtype=np.float64)
    zo[:, Z_RE] = orbit[:, 0]
    zo[:, Z_IM] = orbit[:, 1]
    if levels.shape[0]:
        # level 0's entry j is the single step from m = 1 + j
        off, count = int(levels[0, 0]), int(levels[0, 1])
        zo[1:1 + count, Z_R0] = tab[off:off + count, T_RD]
    bt = np.zeros((tab.shape[0], 6), dtype=np.float64)
    bt[:, B_AR] = tab[:, T_ADR]
    bt[:, B_AI] = tab[:, T_ADI]
    e = np.clip(tabe[:, E_B], -_CLAMP, _CLAMP)
    bt[:, B_BR] = np.ldexp(tab[:, T_BR], e)
    bt[:, B_BI] = np.ldexp(tab[:, T_BI], e)
    bt[:, B_R] = tab[:, T_RD]
    bt[:, B_AA] = tab[:, T_AD]
    return zo, bt


def make_walk(mul, add, sqrt, jit):
    """(walk, passes) over `cpu_tables`' arrays, compiled by `jit` with the target's `mul`, `add`
    and `sqrt` (plain operators on the CPU, libdevice's never-contracted ones on the GPU, as in
    perturb._make_pixel): the same operations in the same order on both targets.

    walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj): one pass over δc = cdr + i*cdi with radii
    tested against |δ|·sf and a BLA step's error inj·max(|Re δ|, |Im δ|): value, counts
    (perturbation steps, BLA steps, iterations skipped, rebases), whether doubtful (perturb.py,
    "Accuracy guard").
    passes(cdr, cdi, zo, bt, levels, eps, max_iter, shift): passes from radii 2^shift smaller on,
    as perturb's passes: value, summed counts, the last pass's shift."""

    smooth, closer_to_zero = make_step_helpers(mul, add, jit)

    @jit
    def walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj):
        last = zo.shape[0] // ZW - 1
        nlev = levels.shape[0]
        dr = 0.0
        di = 0.0
        er = 0.0
        g2 = 1.0
        r2 = 0.0
        m = 0
        n = 0
        steps = 0
        bla = 0
        skipped = 0
        rebases = 0
        while n < max_iter:
            dms = mul(max(abs(dr), abs(di)), sf)
            # zo and bt are read flattened through unsigned indices: no fix-up for negative ones
            # (on the GPU each two-dimensional read cost ~16 integer instructions)
            row = ZW * m
            if dms < zo[np.uint64(row + Z_R0)]:
                # the single step holds δ: climb while the longer aligned steps from m still do
                j0 = m - 1
                best = j0
                length = 1
                k = 1
                while k < nlev and (j0 & ((1 << k) - 1)) == 0:
                    j = j0 >> k
                    if j >= levels[k, 1] or n + (1 << k) > max_iter:
                        break
                    idx = levels[k, 0] + j
                    if not dms < bt[np.uint64(BW * idx + B_R)]:
                        break
                    best = idx
                    length = 1 << k
                    k += 1
                e = BW * best
                adr = bt[np.uint64(e + B_AR)]
                adi = bt[np.uint64(e + B_AI)]
                bbr = bt[np.uint64(e + B_BR)]
                bbi = bt[np.uint64(e + B_BI)]
                bdr = add(mul(bbr, cdr), -mul(bbi, cdi))
                bdi = add(mul(bbr, cdi), mul(bbi, cdr))
                ndr = add(add(mul(adr, dr), -mul(adi, di)), bdr)
                di = add(add(mul(adr, di), mul(adi, dr)), bdi)
                dr = ndr
                er = add(mul(bt[np.uint64(e + B_AA)], mul(er, sqrt(g2))),
                         mul(inj, max(abs(dr), abs(di))))
                g2 = 1.0
                m += length
                n += length
                bla += 1
                skipped += length
            else:
                g2 = mul(g2, mul(r2, 4.0))
                if g2 > G_HI or g2 < G_LO:
                    er = mul(er, sqrt(g2))
                    g2 = 1.0
                zr = zo[np.uint64(row + Z_RE)]
                zi = zo[np.uint64(row + Z_IM)]
                tr = add(add(zr, zr), dr)
                ti = add(add(zi, zi), di)
                ndr = add(add(mul(tr, dr), -mul(ti, di)), cdr)
                di = add(add(mul(tr, di), mul(ti, dr)), cdi)
                dr = ndr
                m += 1
                n += 1
                steps += 1
            row = ZW * m
            xr = add(zo[np.uint64(row + Z_RE)], dr)
            xi = add(zo[np.uint64(row + Z_IM)], di)
            r2 = add(mul(xr, xr), mul(xi, xi))
            if r2 > BAILOUT2:
                er = mul(er, sqrt(g2))
                doubt = not (mul(er, er) <= mul(r2, ERR_TOL2))
                return smooth(r2, n), steps, bla, skipped, rebases, doubt
            if m == last or closer_to_zero(xr, xi, r2, dr, di):
                dr = xr
                di = xi
                m = 0
                rebases += 1
        er = mul(er, sqrt(g2))
        return float(max_iter), steps, bla, skipped, rebases, not (mul(er, er) <= mul(r2, ERR_TOL2))

    @jit
    def passes(cdr, cdi, zo, bt, levels, eps, max_iter, shift):
        # one call of walk in a loop: the CPU inlines it, and every call inlines the whole loop
        # (perturb.passes says what four copies cost the CPU warm-up)
        steps = 0
        bla = 0
        skipped = 0
        rebases = 0
        while True:
            sf = math.ldexp(1.0, shift)
            inj = math.ldexp(eps, 1 - shift)
            v, a, b, sk, rb, doubt = walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj)
            steps += a
            bla += b
            skipped += sk
            rebases += rb
            if not doubt or shift >= LAST_SHIFT:
                return v, steps, bla, skipped, rebases, shift
            shift = REDO_SHIFT if shift < REDO_SHIFT else LAST_SHIFT

    return walk, passes


def flat_tables(orbit: np.ndarray, tab: np.ndarray, tabe: np.ndarray, levels: np.ndarray):
    """`cpu_tables`' arrays flattened (zo (N*ZW,), bt (E*BW,)), as the loop reads them."""
    zo, bt = cpu_tables(orbit, tab, tabe, levels)
    return zo.reshape(-1), bt.reshape(-1)


@njit(inline="always")
def _delta_c(row, col, d0r, d0i, step, cexp, half_w, half_h):
    """δc of pixel (row, col) as doubles: perturb's pixel_offset, fe_norm and fe_to_double."""
    gx = (float(col) + 0.5) + (-half_w)
    gy = (float(row) + 0.5) + (-half_h)
    cmr = d0r + gx * step
    cmi = d0i + (-(gy * step))
    a = max(abs(cmr), abs(cmi))
    if a == 0.0:
        return 0.0, 0.0
    _, k = math.frexp(a)
    e = max(-_CLAMP, min(_CLAMP, cexp + k))
    return math.ldexp(math.ldexp(cmr, -k), e), math.ldexp(math.ldexp(cmi, -k), e)


_walk, _passes = make_walk(operator.mul, operator.add, math.sqrt, njit(inline="always"))


@njit(parallel=True, cache=True)
def deep_rows_pert_cpu(values, stats, row0, nrows, stride, d0r, d0i, step, cexp, half_w, half_h,
                       zo, bt, levels, eps, max_iter):
    """perturb.deep_rows_cpu for the perturbation format, reading `flat_tables`' arrays."""
    cols = values.shape[1]
    for k in prange(nrows):
        r = row0 + (k * stride) % nrows
        s0 = 0
        s1 = 0
        s2 = 0
        s3 = 0
        s4 = 0
        for c in range(cols):
            cdr, cdi = _delta_c(r, c, d0r, d0i, step, cexp, half_w, half_h)
            v, a, b, sk, rb, shift = _passes(cdr, cdi, zo, bt, levels, eps, max_iter, 0)
            rd = 1 if shift > 0 else 0
            values[r, c] = v
            s0 += a
            s1 += b
            s2 += sk
            s3 += rb
            s4 += rd
        stats[r, 0] = s0
        stats[r, 1] = s1
        stats[r, 2] = s2
        stats[r, 3] = s3
        stats[r, 4] = s4
