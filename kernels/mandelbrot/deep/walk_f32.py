"""The float32-delta perturbation loop with fewer instructions that are not its arithmetic:
perturbation_loop.make_walk's walk and passes (the same float32 operations in the same order, so
the same values and counts) with

- the orbit position, the iteration count, the table indices and the step counters in int32 and
  the arrays read through uint32 indices: make_walk's integers are numba's int64, and a 64-bit
  add, compare or index costs the GPU two instructions, beside a float32 step of about twenty;
- an orbit row (Z_m and the radius of the single step from m) read with one 16-byte load, and
  carried from the load that tests the bailout to the next step, which read it again: a
  perturbation step makes one load where make_walk's makes five; a BLA step reads A and B with
  one 16-byte load from table rows padded to 32 bytes (`pad_table`).

Each load of a warp whose pixels sit at different orbit positions is a gather over as many cache
lines, so the loads, more than the float32 arithmetic, are what a step waits on.

The float32 arrays fit 32-bit indices wherever float32 deltas apply (perturbation_f32.flat_tables32
refuses longer ones).
"""
from __future__ import annotations

import math

import numpy as np

from ..escape import BAILOUT2
from .guard import ERR_TOL2, LAST_SHIFT, REDO_SHIFT
from .perturbation_loop import B_AA, B_AI, B_AR, B_BI, B_BR, B_R, BW, Z_IM, Z_R0, Z_RE, ZW
from .step_helpers import make_step_helpers

i32 = np.int32
u32 = np.uint32
# the largest flattened array the uint32 indices reach
MAX_FLAT = 2 ** 32 - 1

# make_walk32's table rows: perturbation_loop's six numbers, padded to eight so that a row starts
# on a 16-byte boundary and A, B come in one 16-byte load (`pad_table`); the orbit's rows of four
# (Re Z, Im Z, radius of the single step, unused) are 16 bytes already
BW32 = 8
assert (B_AR, B_AI, B_BR, B_BI) == (0, 1, 2, 3) and (Z_RE, Z_IM, Z_R0) == (0, 1, 2) and ZW == 4


def pad_table(bt32: np.ndarray) -> np.ndarray:
    """flat float32 table rows of BW numbers as make_walk32 reads them: rows of BW32."""
    rows = bt32.reshape(-1, BW)
    out = np.zeros((rows.shape[0], BW32), np.float32)
    out[:, :BW] = rows
    return out.reshape(-1)


def make_walk32(mul, add, sqrt, load4, jit, loop_jit, limits):
    """(walk, passes) as perturbation_loop.make_walk(mul, add, sqrt, jit, loop_jit, limits), the
    integers in 32 bits, over zo's rows and `pad_table`'s; load4(arr, i): arr[i:i + 4] as a tuple
    (one 16-byte load on the GPU: kernels/wide_access.load16)."""
    loop = loop_jit or jit
    zw, bw = i32(ZW), i32(BW32)
    g_lo, g_hi, tiny2, scale, zero, one = limits
    smooth, closer_to_zero = make_step_helpers(mul, add, jit, tiny2, scale)

    @jit
    def walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj):
        last = i32(zo.shape[0] // ZW - 1)
        nlev = i32(levels.shape[0])
        mi = i32(max_iter)
        # row m of the orbit (Z_m, the single step's radius), carried from the load that tests
        # the bailout to the next step; row 0 is where a rebased pixel starts again
        z0r, z0i, z0rad, _ = load4(zo, u32(0))
        zr = z0r
        zi = z0i
        zrad = z0rad
        dr = zero
        di = zero
        er = zero
        g2 = one
        r2 = zero
        m = i32(0)
        n = i32(0)
        steps = i32(0)
        bla = i32(0)
        skipped = i32(0)
        rebases = i32(0)
        while n < mi:
            dms = mul(max(abs(dr), abs(di)), sf)
            if dms < zrad:
                j0 = i32(m - 1)
                best = j0
                length = i32(1)
                k = i32(1)
                while k < nlev and (j0 & i32(i32(i32(1) << k) - 1)) == 0:
                    j = i32(j0 >> k)
                    if j >= i32(levels[k, 1]) or n + i32(i32(1) << k) > mi:
                        break
                    idx = i32(i32(levels[k, 0]) + j)
                    if not dms < bt[u32(bw * idx + B_R)]:
                        break
                    best = idx
                    length = i32(i32(1) << k)
                    k = i32(k + 1)
                e = u32(bw * best)
                adr, adi, bbr, bbi = load4(bt, e)
                bdr = add(mul(bbr, cdr), -mul(bbi, cdi))
                bdi = add(mul(bbr, cdi), mul(bbi, cdr))
                ndr = add(add(mul(adr, dr), -mul(adi, di)), bdr)
                di = add(add(mul(adr, di), mul(adi, dr)), bdi)
                dr = ndr
                er = add(mul(bt[u32(e + B_AA)], mul(er, sqrt(g2))),
                         mul(inj, max(abs(dr), abs(di))))
                g2 = one
                m = i32(m + length)
                n = i32(n + length)
                bla = i32(bla + 1)
                skipped = i32(skipped + length)
            else:
                g2 = mul(g2, mul(r2, 4.0))
                if g2 > g_hi or g2 < g_lo:
                    er = mul(er, sqrt(g2))
                    g2 = one
                tr = add(add(zr, zr), dr)
                ti = add(add(zi, zi), di)
                ndr = add(add(mul(tr, dr), -mul(ti, di)), cdr)
                di = add(add(mul(tr, di), mul(ti, dr)), cdi)
                dr = ndr
                m = i32(m + 1)
                n = i32(n + 1)
                steps = i32(steps + 1)
            zr, zi, zrad, _ = load4(zo, u32(zw * m))
            xr = add(zr, dr)
            xi = add(zi, di)
            r2 = add(mul(xr, xr), mul(xi, xi))
            if r2 > BAILOUT2:
                er = mul(er, sqrt(g2))
                doubt = not (mul(er, er) <= mul(r2, ERR_TOL2))
                return smooth(r2, n), steps, bla, skipped, rebases, doubt
            if m == last or closer_to_zero(xr, xi, r2, dr, di):
                dr = xr
                di = xi
                m = i32(0)
                zr = z0r
                zi = z0i
                zrad = z0rad
                rebases = i32(rebases + 1)
        er = mul(er, sqrt(g2))
        return float(max_iter), steps, bla, skipped, rebases, not (mul(er, er) <= mul(r2, ERR_TOL2))

    @loop
    def passes(cdr, cdi, zo, bt, levels, eps, max_iter, shift):
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
