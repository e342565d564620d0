"""The float32-delta perturbation loop with 32-bit integer work: perturbation_loop.make_walk's
walk and passes (the same float32 operations in the same order, so the same values and counts)
with the orbit position, the iteration count, the table indices and the step counters held in
int32 and the flattened orbit and table read through uint32 indices.

Why: make_walk's integers are numba's int64, and a 64-bit add, compare or index costs the GPU two
instructions, beside a float32 perturbation step of about twenty: float64's loop hides them under
its slower arithmetic, float32's pays them. The float32 arrays fit 32-bit indices wherever float32
deltas apply (perturbation_f32.flat_tables32 refuses longer ones).
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


def make_walk32(mul, add, sqrt, jit, loop_jit, limits):
    """(walk, passes) as perturbation_loop.make_walk(mul, add, sqrt, jit, loop_jit, limits), the
    integers in 32 bits."""
    loop = loop_jit or jit
    g_lo, g_hi, tiny2, scale, zero, one = limits
    smooth, closer_to_zero = make_step_helpers(mul, add, jit, tiny2, scale)
    zw, bw = i32(ZW), i32(BW)

    @jit
    def walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj):
        last = i32(zo.shape[0] // ZW - 1)
        nlev = i32(levels.shape[0])
        mi = i32(max_iter)
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
            row = u32(zw * m)
            if dms < zo[u32(row + Z_R0)]:
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
                adr = bt[u32(e + B_AR)]
                adi = bt[u32(e + B_AI)]
                bbr = bt[u32(e + B_BR)]
                bbi = bt[u32(e + B_BI)]
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
                zr = zo[u32(row + Z_RE)]
                zi = zo[u32(row + Z_IM)]
                tr = add(add(zr, zr), dr)
                ti = add(add(zi, zi), di)
                ndr = add(add(mul(tr, dr), -mul(ti, di)), cdr)
                di = add(add(mul(tr, di), mul(ti, dr)), cdi)
                dr = ndr
                m = i32(m + 1)
                n = i32(n + 1)
                steps = i32(steps + 1)
            row = u32(zw * m)
            xr = add(zo[u32(row + Z_RE)], dr)
            xi = add(zo[u32(row + Z_IM)], di)
            r2 = add(mul(xr, xr), mul(xi, xi))
            if r2 > BAILOUT2:
                er = mul(er, sqrt(g2))
                doubt = not (mul(er, er) <= mul(r2, ERR_TOL2))
                return smooth(r2, n), steps, bla, skipped, rebases, doubt
            if m == last or closer_to_zero(xr, xi, r2, dr, di):
                dr = xr
                di = xi
                m = i32(0)
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
