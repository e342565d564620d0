"""Perturbation with rebasing and the bilinear approximation: the per-pixel loop, written once
(`_make_pixel`) and compiled for the GPU (numba.cuda, persistent threads) and the CPU (numba,
prange over rows), like escape.py.

A pixel c = C + δc follows the reference orbit Z_m of the centre C through its delta δ:
    δ ← (2·Z_m + δ)·δ + δc,   m ← m + 1,   z = Z_m + δ.
Rebasing (Zhuoran, fractalforums.org, 2021): when |z| < |δ| — the pixel passes closer to 0 than
to the reference — or when m reaches the orbit's last point, δ ← z and m ← 0: the pixel carries
on along the start of the same orbit. One reference then serves the whole frame, without glitches.
The bilinear approximation (BLA) replaces l = 2^k steps by δ ← A·δ + B·δc while |δ| < R
(see bla.py); a pixel walks the table's tree from the longest step its position allows down to
the first one whose radius holds its δ.

Number formats. "perturbation": δ, δc and the table in float64. "extended": while |δ| < 2^-500 the
pixel keeps δ as floatexp (floatexp.py), the orbit and table likewise; above it δ is a plain double
(δc's own float64 value is then far below δ's last digit, so losing it costs nothing); below
2^-510 it returns to floatexp. Extended frames thus spend only their first iterations, or passages
near 0, in the slower arithmetic.

Accuracy guard. A BLA step drops δ², up to ε of the step's linear part (bla.py), and the pixel's
later steps carry that error along like any other change of δ: for most pixels it stays far below
|z|, but a pixel whose count hangs on a tiny move of c (ill-conditioned: seahorse valley just past
float64 has 2-3 % of them, where 1e-9 of a pixel moves the count by tens to hundreds of iterations)
ends on the wrong count. So each pixel also carries a bound e on the error of its z: a BLA step adds
2ε'·max(|Re δ|, |Im δ|) to it and multiplies what was there by |A|, a perturbation step multiplies it
by |2z| (the step's derivative, so the bound follows the pixel through its passes near 0; gathered
as a product of |2z|^2 and square-rooted once in a while, see G_HI). If at the
end e > |z|, the count is doubtful and the pixel is done again from the start with the radii tested
against |δ|·2^REDO_SHIFT (ε' = ε·2^-REDO_SHIFT), and if still doubtful, against |δ|·2^(2·REDO_SHIFT)
(ε' = 2^-64 by default: the dropped δ² is then below the round-off of the step's linear part, so the
pass is as exact as plain perturbation, while it still skips the pixel's long linear stretch; a pass
with no BLA at all would, on the GPU, leave one thread iterating a deep pixel's 10^4-10^6 steps one
by one while the frame waits for it). Measured (docs/PERFORMANCE.md, "BLA accuracy"): the guard
catches every pixel that BLA got wrong in the seahorse-valley frames.

Value convention (escape.py's, with its constants): n = the first iteration with |z_n|^2 > BAILOUT2,
value = (n - 1) + f with f = 1 - log2(log|z_n|^2 / log BAILOUT2) clamped to [0, 1); points still
bounded after max_iter iterations get max_iter.

Same counts on both targets: the GPU uses libdevice's dmul_rn / dadd_rn, which are never
contracted into FMAs, so it performs exactly the CPU's operations in the same order.
"""
from __future__ import annotations

import math
import operator

import numpy as np
from numba import njit, prange

from ...backend import simulator_enabled
from ..escape import BAILOUT2, _make_escape  # the same smoothing as escape.py
from .floatexp import make_floatexp
from .reference import EZERO

# δ leaves floatexp above 2^UP_EXP and returns to it below 2^DOWN_EXP (max-norm)
UP_EXP = -500
DOWN = 2.0 ** -510
# squares of numbers below this underflow: compare |z| and |δ| scaled up instead
_TINY2 = 2.0 ** -900
_SCALE = 2.0 ** 500

# stats columns the kernels count: perturbation steps, BLA steps, iterations the BLA steps
# skipped, rebases (steps of every pass of a pixel done again included), pixels done again
STAT_STEPS, STAT_BLA, STAT_BLA_ITERS, STAT_REBASES, STAT_REDONE = range(5)
N_STATS = 5

# table columns (bla.py): A mantissa, B mantissa, R/sqrt2 mantissa, A as double, R/sqrt2 as double,
# |A| mantissa (exponent E_A), |A| as double
T_AR, T_AI, T_BR, T_BI, T_RM, T_ADR, T_ADI, T_RD, T_AM, T_AD = range(10)
N_TAB = 10

# accuracy guard: a doubtful pixel is done again with radii tested against |δ|·2^REDO_SHIFT, then
# |δ|·2^LAST_SHIFT, whose result stands; doubtful = error bound e with e^2 > ERR_TOL2·|z|^2 at the
# end. Every pixel BLA got wrong in the measured frames had e > 24|z|, so ERR_TOL2 = 1 leaves a
# margin (a lower tolerance only redoes more pixels).
REDO_SHIFT = 16
LAST_SHIFT = 2 * REDO_SHIFT
# while δ is a double the bound's growth |2z|^2 is multiplied up in g2 and folded into e (one sqrt)
# only at BLA steps, at the end, or when g2 leaves [G_LO, G_HI]: a sqrt per step cost the GPU ~40 %
# (a factor is at most 4·BAILOUT2 = 2^18, so g2 cannot overflow between two checks)
G_HI = 2.0 ** 600
G_LO = 2.0 ** -600
ERR_TOL2 = 1.0
# exponent columns: A, B, R/sqrt2
E_A, E_B, E_R = range(3)


def _make_offset(mul, add, jit):
    @jit
    def pixel_offset(row, col, d0r, d0i, step, half_w, half_h):
        """δc mantissa of pixel (row, col): offset of the frame centre from the reference plus
        the pixel's place, both in units of 2**cexp (row 0 = top = largest imaginary part)."""
        gx = add(float(col) + 0.5, -half_w)
        gy = add(float(row) + 0.5, -half_h)
        return add(d0r, mul(gx, step)), add(d0i, -mul(gy, step))

    return pixel_offset


def make_step_helpers(mul, add, jit):
    """(smooth, closer_to_zero) of both deep loops (`_make_pixel`'s and perturb_cpu's), compiled by
    `jit` with the target's `mul` and `add`: escape.py's smooth value from |z_n|^2 and n, and
    whether |z|^2 < |δ|^2 for doubles, exact in sign where the squares would underflow."""
    smooth = _make_escape(mul, add, jit)[4]

    @jit
    def closer_to_zero(xr, xi, r2, dr, di):
        dd = add(mul(dr, dr), mul(di, di))
        if r2 >= _TINY2 and dd >= _TINY2:
            return r2 < dd
        xr, xi = mul(xr, _SCALE), mul(xi, _SCALE)
        dr, di = mul(dr, _SCALE), mul(di, _SCALE)
        return add(mul(xr, xr), mul(xi, xi)) < add(mul(dr, dr), mul(di, di))

    return smooth, closer_to_zero


def _make_pixel(mul, add, sqrt, jit, extended):
    """The per-pixel loop compiled by `jit` with the target's `mul`, `add` and `sqrt` (correctly
    rounded on both targets), for one number format: `extended` is a constant of the compiled code,
    so the perturbation-format loop carries none of the floatexp paths (fewer registers on the
    GPU)."""
    fe_norm, fe_add, fe_mul, fe_to_double, fe_norm2_lt = make_floatexp(mul, add, jit)

    smooth, closer_to_zero = make_step_helpers(mul, add, jit)

    @jit
    def doubtful(er, de, fe, r2):
        """Whether the error bound reached |z| (er in units of 2**de while δ is floatexp)."""
        e = er
        if fe:
            e, _ = fe_to_double(er, 0.0, de)
        return not (mul(e, e) <= mul(r2, ERR_TOL2))

    @jit
    def walk(cnr, cni, cne, cdr, cdi, orbit, oexp, tab, tabe, levels, kmin, max_iter, eps, shift):
        """One pass over the pixel δc = (cnr + i*cni) * 2**cne (cdr + i*cdi as doubles), its BLA
        radii tested against |δ|·2^shift: smooth escape value, counts
        (perturbation steps, BLA steps, iterations skipped by BLA, rebases), whether doubtful."""
        last = orbit.shape[0] - 1
        nlev = levels.shape[0]
        top = kmin + nlev - 1
        low_mask = (1 << kmin) - 1
        sf = math.ldexp(1.0, shift)
        # a BLA step's error: up to ε·2^-shift of |δ| <= sqrt(2)·max(|Re δ|, |Im δ|); 2 for sqrt(2)
        inj = math.ldexp(eps, 1 - shift)
        fe = extended
        dr = 0.0
        di = 0.0
        de = EZERO
        # error bound of z: absolute while δ is a double (times sqrt(g2)), in units of 2**de while it
        # is floatexp (g2 = 1 then)
        er = 0.0
        g2 = 1.0
        r2 = 0.0
        # z_m as floatexp, for the bound's growth while δ is floatexp
        zr = 0.0
        zi = 0.0
        ze = EZERO
        m = 0
        n = 0
        steps = 0
        bla = 0
        skipped = 0
        rebases = 0
        while n < max_iter:
            took = False
            if nlev > 0 and m > 0 and ((m - 1) & low_mask) == 0:
                # Radii shrink as steps merge (R_k <= R_{k-1} at one start), so the shortest step
                # decides whether any applies: one table read where none does (the common case once
                # a pixel has left the reference), then climb while the longer steps still hold δ.
                j0 = m - 1
                dm = max(abs(dr), abs(di))
                dms = mul(dm, sf)
                dse = de + shift
                best = -1
                length = 0
                k = kmin
                while True:
                    li = k - kmin
                    j = j0 >> k
                    if j >= levels[li, 1] or n + (1 << k) > max_iter:
                        break
                    idx = levels[li, 0] + j
                    if fe:
                        re_ = tabe[idx, E_R]
                        ok = dse < re_ or (dse == re_ and dm < tab[idx, T_RM])
                    else:
                        ok = dms < tab[idx, T_RD]
                    if not ok:
                        break
                    best = idx
                    length = 1 << k
                    k += 1
                    if k > top or ((j0 >> k) << k) != j0:
                        break
                if best >= 0:
                    idx = best
                    br, bi, be = fe_mul(tab[idx, T_BR], tab[idx, T_BI], tabe[idx, E_B],
                                        cnr, cni, cne)
                    if fe:
                        d0 = de
                        ar, ai, ae = fe_mul(tab[idx, T_AR], tab[idx, T_AI], tabe[idx, E_A],
                                            dr, di, de)
                        dr, di, de = fe_add(ar, ai, ae, br, bi, be)
                        carried, _ = fe_to_double(mul(tab[idx, T_AM], er), 0.0,
                                                  tabe[idx, E_A] + d0 - de)
                        er = add(carried, mul(inj, max(abs(dr), abs(di))))
                    else:
                        bdr, bdi = fe_to_double(br, bi, be)
                        adr = tab[idx, T_ADR]
                        adi = tab[idx, T_ADI]
                        ndr = add(add(mul(adr, dr), -mul(adi, di)), bdr)
                        di = add(add(mul(adr, di), mul(adi, dr)), bdi)
                        dr = ndr
                        er = add(mul(tab[idx, T_AD], mul(er, sqrt(g2))),
                                 mul(inj, max(abs(dr), abs(di))))
                        g2 = 1.0
                    m += length
                    n += length
                    bla += 1
                    skipped += length
                    took = True
            if not took:
                if fe:
                    # δ ← (2 Z_m + δ) δ + δc in floatexp; the bound grows by |2 z_m|
                    d0 = de
                    tr, ti, te = fe_add(orbit[m, 2], orbit[m, 3], oexp[m] + 1, dr, di, de)
                    ur, ui, ue = fe_mul(tr, ti, te, dr, di, de)
                    dr, di, de = fe_add(ur, ui, ue, cnr, cni, cne)
                    grown = mul(er, sqrt(mul(add(mul(zr, zr), mul(zi, zi)), 4.0)))
                    er, _ = fe_to_double(grown, 0.0, ze + d0 - de)
                else:
                    g2 = mul(g2, mul(r2, 4.0))
                    if g2 > G_HI or g2 < G_LO:
                        er = mul(er, sqrt(g2))
                        g2 = 1.0
                    tr = add(add(orbit[m, 0], orbit[m, 0]), dr)
                    ti = add(add(orbit[m, 1], orbit[m, 1]), di)
                    ndr = add(add(mul(tr, dr), -mul(ti, di)), cdr)
                    di = add(add(mul(tr, di), mul(ti, dr)), cdi)
                    dr = ndr
                m += 1
                n += 1
                steps += 1
            if fe:
                zr, zi, ze = fe_add(orbit[m, 2], orbit[m, 3], oexp[m], dr, di, de)
                xr, xi = fe_to_double(zr, zi, ze)
                r2 = add(mul(xr, xr), mul(xi, xi))
                if r2 > BAILOUT2:
                    er = mul(er, sqrt(g2))
                    return smooth(r2, n), steps, bla, skipped, rebases, doubtful(er, de, fe, r2)
                if m == last or fe_norm2_lt(zr, zi, ze, dr, di, de):
                    er, _ = fe_to_double(er, 0.0, de - ze)
                    dr, di, de = zr, zi, ze
                    m = 0
                    rebases += 1
                if de > UP_EXP:
                    dr, di = fe_to_double(dr, di, de)
                    er, _ = fe_to_double(er, 0.0, de)
                    fe = False
            else:
                xr = add(orbit[m, 0], dr)
                xi = add(orbit[m, 1], di)
                r2 = add(mul(xr, xr), mul(xi, xi))
                if r2 > BAILOUT2:
                    er = mul(er, sqrt(g2))
                    return smooth(r2, n), steps, bla, skipped, rebases, doubtful(er, de, fe, r2)
                if m == last or closer_to_zero(xr, xi, r2, dr, di):
                    dr = xr
                    di = xi
                    m = 0
                    rebases += 1
                if extended and max(abs(dr), abs(di)) < DOWN:
                    dr, di, de = fe_norm(dr, di, 0)
                    er, _ = fe_to_double(mul(er, sqrt(g2)), 0.0, -de)
                    g2 = 1.0
                    zr, zi, ze = fe_norm(xr, xi, 0)
                    fe = True
        er = mul(er, sqrt(g2))
        return float(max_iter), steps, bla, skipped, rebases, doubtful(er, de, fe, r2)

    @jit
    def one_pass(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, shift):
        """One pass over the pixel δc = (cmr + i*cmi) * 2**cexp with radii tested against
        |δ|·2^shift: value, counts, whether doubtful."""
        cnr, cni, cne = fe_norm(cmr, cmi, cexp)
        cdr, cdi = fe_to_double(cnr, cni, cne)
        return walk(cnr, cni, cne, cdr, cdi, orbit, oexp, tab, tabe, levels, kmin, max_iter, eps,
                    shift)

    @jit
    def passes(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, shift):
        """Passes from radii 2^shift smaller on: while one is doubtful, the next with radii
        2^REDO_SHIFT, then 2^LAST_SHIFT smaller, whose result stands. Value, summed counts, and
        the last pass's shift. One call of the pass in a loop: the CPU twin inlines `pixel`, and
        each call of the pass inlines the whole of it; with four copies in deep_rows_cpu (first
        pass, then the later ones, per format) the CPU warm-up took 827 s to compile on the
        2-core machine (beside a CI run), with one 196 s (alone)."""
        steps = 0
        bla = 0
        skipped = 0
        rebases = 0
        while True:
            v, a, b, sk, rb, doubt = one_pass(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels,
                                              kmin, eps, max_iter, shift)
            steps += a
            bla += b
            skipped += sk
            rebases += rb
            if not doubt or shift >= LAST_SHIFT:
                return v, steps, bla, skipped, rebases, shift
            shift = REDO_SHIFT if shift < REDO_SHIFT else LAST_SHIFT

    @jit
    def first_pass(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter):
        """`pixel`'s first pass alone: value, counts, and whether the pixel must be redone."""
        return one_pass(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, 0)

    @jit
    def redo(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter):
        """`pixel`'s later passes for a pixel whose first pass was doubtful: value and counts."""
        v, steps, bla, skipped, rebases, _ = passes(cmr, cmi, cexp, orbit, oexp, tab, tabe,
                                                    levels, kmin, eps, max_iter, REDO_SHIFT)
        return v, steps, bla, skipped, rebases

    @jit
    def pixel(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter):
        """Smooth escape value of the pixel δc = (cmr + i*cmi) * 2**cexp, and its counts
        (perturbation steps, BLA steps, iterations skipped by BLA, rebases, 1 if done again):
        with the table's radii; if doubtful, again with radii 2^REDO_SHIFT smaller; if still
        doubtful, again with radii 2^LAST_SHIFT smaller."""
        v, steps, bla, skipped, rebases, shift = passes(cmr, cmi, cexp, orbit, oexp, tab, tabe,
                                                        levels, kmin, eps, max_iter, 0)
        return v, steps, bla, skipped, rebases, 1 if shift > 0 else 0

    return pixel, first_pass, redo, one_pass


# ---------------------------------------------------------------- CPU twin (numba, parallel)

@njit(inline="always")
def _cpu_mul(a, b):
    return a * b


@njit(inline="always")
def _cpu_add(a, b):
    return a + b


_offset_cpu = _make_offset(_cpu_mul, _cpu_add, njit(inline="always"))
@njit(inline="always")
def _cpu_sqrt(a):
    return math.sqrt(a)


_pixel_pert_cpu = _make_pixel(_cpu_mul, _cpu_add, _cpu_sqrt, njit(inline="always"), False)[0]
_pixel_ext_cpu = _make_pixel(_cpu_mul, _cpu_add, _cpu_sqrt, njit(inline="always"), True)[0]


@njit(parallel=True, cache=True)
def deep_rows_cpu(values, stats, row0, nrows, stride, d0r, d0i, step, cexp, half_w, half_h,
                  orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, extended):
    """Fill values[row0 : row0 + nrows] and stats[row] (counts summed over the row). Rows are
    visited in the order (k * stride) % nrows so each thread's share mixes cheap and dear rows."""
    cols = values.shape[1]
    for k in prange(nrows):
        r = row0 + (k * stride) % nrows
        s0 = 0
        s1 = 0
        s2 = 0
        s3 = 0
        s4 = 0
        for c in range(cols):
            cmr, cmi = _offset_cpu(r, c, d0r, d0i, step, half_w, half_h)
            if extended:
                v, a, b, sk, rb, rd = _pixel_ext_cpu(cmr, cmi, cexp, orbit, oexp, tab, tabe,
                                                     levels, kmin, eps, max_iter)
            else:
                v, a, b, sk, rb, rd = _pixel_pert_cpu(cmr, cmi, cexp, orbit, oexp, tab, tabe,
                                                      levels, kmin, eps, max_iter)
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


# ---------------------------------------------------------------- GPU (numba-cuda)

GPU_IMPORT_ERROR = None
try:
    from numba import cuda
except Exception as exc:  # the CPU path must work where numba-cuda does not import
    cuda = None
    GPU_IMPORT_ERROR = exc

if cuda is not None:
    if simulator_enabled():
        _gpu_mul, _gpu_add, _gpu_sqrt = operator.mul, operator.add, math.sqrt
    else:
        from numba.cuda import libdevice
        _gpu_mul, _gpu_add, _gpu_sqrt = libdevice.dmul_rn, libdevice.dadd_rn, libdevice.dsqrt_rn

    _offset_gpu = _make_offset(_gpu_mul, _gpu_add, cuda.jit(device=True))
    _, _first_pert_gpu, _redo_pert_gpu, _ = _make_pixel(_gpu_mul, _gpu_add, _gpu_sqrt,
                                                        cuda.jit(device=True), False)
    _, _first_ext_gpu, _redo_ext_gpu, _ = _make_pixel(_gpu_mul, _gpu_add, _gpu_sqrt,
                                                      cuda.jit(device=True), True)

    # Registers per thread of the first-pass kernels. ptxas gives them 82 (perturbation) and 94
    # (extended), i.e. 6 and 5 resident blocks of 128 threads per SM; the kernels wait on memory
    # (the orbit and table reads of each step) more than on arithmetic, so more resident threads
    # beat the spills a cap causes. Measured (H100, 1e-100 / 1e-1000 bench re-render): no cap
    # 24.3 / 28.9 ms, 72: 22.5 / 26.8 ms, 64: 22.0 / 26.6 ms. The redo kernels keep theirs: a
    # redone pixel's passes are one long chain of dependent steps, which spills would lengthen.
    # The simulator's jit takes no such option.
    MAX_REGISTERS = 64
    _FIRST_JIT = {"cache": True} if simulator_enabled() else {"cache": True,
                                                              "max_registers": MAX_REGISTERS}

    # One kernel per number format (written out twice rather than made by a factory: numba's
    # disk cache keys kernels by name, and two closures of one factory would share a name).
    # Perturbation-format frames with the renderer's default kmin = 0 run perturb_gpu's kernels
    # (perturb_cpu's loop, faster on the GPU too); deep_kernel_pert serves other kmin.
    # dynamic=True: persistent threads, each taking the next pixel index of [p0, p1) from
    # counters[slot] when its last pixel is done, so threads whose pixels escape early keep working
    # instead of idling until the slowest pixel of the frame finishes. dynamic=False: pixel
    # p0 + thread, then strides of the whole grid (launched with one thread per pixel, a plain
    # grid). Counts are summed per thread and added once.
    # The accuracy guard's later passes run in a kernel of their own (deep_redo_*): the first
    # kernel lists its doubtful pixels in `redo` (nredo[0] of them) and the second redoes them.
    # Redone inside the first kernel, a pixel held its warp's other 31 lanes idle for 2-3 pixels'
    # time and the loop around the passes took ~25 more registers: the 1e-100 bench frame's kernel
    # went from 15.6 to 29.8 ms on an H200, against 15.8 ms for the first pass alone.

    @cuda.jit(**_FIRST_JIT)
    def deep_kernel_pert(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, half_w,
                         half_h, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, stats,
                         redo, nredo):
        cols = values.shape[1]
        stride = cuda.gridsize(1)
        i = cuda.atomic.add(counters, slot, 1) + p0 if dynamic else p0 + cuda.grid(1)
        s0 = s1 = s2 = s3 = 0
        while i < p1:
            r = i // cols
            c = i - r * cols
            cmr, cmi = _offset_gpu(r, c, d0r, d0i, step, half_w, half_h)
            v, a, b, sk, rb, doubt = _first_pert_gpu(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels,
                                                  kmin, eps, max_iter)
            values[r, c] = v
            if doubt:
                redo[cuda.atomic.add(nredo, 0, 1)] = i
            s0 += a
            s1 += b
            s2 += sk
            s3 += rb
            i = cuda.atomic.add(counters, slot, 1) + p0 if dynamic else i + stride
        cuda.atomic.add(stats, 0, s0)
        cuda.atomic.add(stats, 1, s1)
        cuda.atomic.add(stats, 2, s2)
        cuda.atomic.add(stats, 3, s3)

    @cuda.jit(cache=True)
    def deep_redo_pert(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, orbit, oexp,
                       tab, tabe, levels, kmin, eps, max_iter, stats, redo, nredo):
        """The pixels deep_kernel_pert listed in redo[:nredo[0]], taken from counters[slot]."""
        cols = values.shape[1]
        k = cuda.atomic.add(counters, slot, 1)
        s0 = s1 = s2 = s3 = s4 = 0
        while k < nredo[0]:
            i = redo[k]
            r = i // cols
            c = i - r * cols
            cmr, cmi = _offset_gpu(r, c, d0r, d0i, step, half_w, half_h)
            v, a, b, sk, rb = _redo_pert_gpu(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin,
                                           eps, max_iter)
            values[r, c] = v
            s0 += a
            s1 += b
            s2 += sk
            s3 += rb
            s4 += 1
            k = cuda.atomic.add(counters, slot, 1)
        cuda.atomic.add(stats, 0, s0)
        cuda.atomic.add(stats, 1, s1)
        cuda.atomic.add(stats, 2, s2)
        cuda.atomic.add(stats, 3, s3)
        cuda.atomic.add(stats, 4, s4)

    @cuda.jit(**_FIRST_JIT)
    def deep_kernel_ext(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, half_w,
                         half_h, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, stats,
                         redo, nredo):
        cols = values.shape[1]
        stride = cuda.gridsize(1)
        i = cuda.atomic.add(counters, slot, 1) + p0 if dynamic else p0 + cuda.grid(1)
        s0 = s1 = s2 = s3 = 0
        while i < p1:
            r = i // cols
            c = i - r * cols
            cmr, cmi = _offset_gpu(r, c, d0r, d0i, step, half_w, half_h)
            v, a, b, sk, rb, doubt = _first_ext_gpu(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels,
                                                  kmin, eps, max_iter)
            values[r, c] = v
            if doubt:
                redo[cuda.atomic.add(nredo, 0, 1)] = i
            s0 += a
            s1 += b
            s2 += sk
            s3 += rb
            i = cuda.atomic.add(counters, slot, 1) + p0 if dynamic else i + stride
        cuda.atomic.add(stats, 0, s0)
        cuda.atomic.add(stats, 1, s1)
        cuda.atomic.add(stats, 2, s2)
        cuda.atomic.add(stats, 3, s3)

    @cuda.jit(cache=True)
    def deep_redo_ext(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, orbit, oexp,
                       tab, tabe, levels, kmin, eps, max_iter, stats, redo, nredo):
        """The pixels deep_kernel_ext listed in redo[:nredo[0]], taken from counters[slot]."""
        cols = values.shape[1]
        k = cuda.atomic.add(counters, slot, 1)
        s0 = s1 = s2 = s3 = s4 = 0
        while k < nredo[0]:
            i = redo[k]
            r = i // cols
            c = i - r * cols
            cmr, cmi = _offset_gpu(r, c, d0r, d0i, step, half_w, half_h)
            v, a, b, sk, rb = _redo_ext_gpu(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin,
                                           eps, max_iter)
            values[r, c] = v
            s0 += a
            s1 += b
            s2 += sk
            s3 += rb
            s4 += 1
            k = cuda.atomic.add(counters, slot, 1)
        cuda.atomic.add(stats, 0, s0)
        cuda.atomic.add(stats, 1, s1)
        cuda.atomic.add(stats, 2, s2)
        cuda.atomic.add(stats, 3, s3)
        cuda.atomic.add(stats, 4, s4)

    @cuda.jit(cache=True)
    def zero_kernel(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = 0
else:  # pragma: no cover - only where numba-cuda is broken
    deep_kernel_pert = deep_kernel_ext = deep_redo_pert = deep_redo_ext = zero_kernel = None


def empty_table():
    """A table with no levels (BLA off): the kernels then take perturbation steps only."""
    return (np.zeros((1, N_TAB), dtype=np.float64), np.zeros((1, 3), dtype=np.int32),
            np.zeros((0, 2), dtype=np.int64))
