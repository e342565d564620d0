"""How a zoom movie's frame pixel is sampled from its exponential-map keyframes, written once for
the CPU twin (expmap_assemble.py) and the GPU (expmap_assemble_gpu.py).

One description (`make_sample`) compiled for both targets. Pixel (row, col) of a frame 2^lw wide
sits at u = ((col + 0.5 − Wpx/2) − i(row + 0.5 − Hpx/2))/Wpx − a widths from p, so at log radius
lw + log2|u| and angle arg u, in the sector of that angle (expmap.py): a continuous place in its
keyframes laid side by side, outermost first (sample g of the sector's strip: keyframe g // W,
column W − 1 − g mod W; row θ·W/ln2 − 0.5 − first row). Its value is the bilinear mean of the
four samples around it (a sector's rows reach one beyond its edges); where the nearest of them is
inside the set (a count at or above the frame's limit) the pixel is inside, else the inside ones
are left out of the mean (their count is no count). Inside the innermost keyframe loaded for the
frame (the disc below a quarter pixel around p) the nearest sample stands.
"""
from __future__ import annotations

import math

TWO_PI = 2.0 * math.pi
LN2 = math.log(2.0)
# the kernels that inline this (expmap_assemble, expmap_assemble_gpu) sit in numba's disk cache
# keyed by their own files: a change here must touch them too


def make_sample(jit):
    """value(row, col, hpx, wpx, stack, slot_of, sec, ax, ay, lw, limit, outer, first, last)
    compiled by `jit`: the frame pixel's smooth count as the module docstring says. stack
    (slots, samples): keyframes packed as ExpMap.sectors says, which `sec` (S, 4) int64 holds."""

    @jit
    def fetch(stack, slot_of, g, i, cols, off):
        k = g // cols
        return stack[slot_of[k], off + i * cols + cols - 1 - (g - k * cols)]

    @jit
    def value(row, col, hpx, wpx, stack, slot_of, sec, ax, ay, lw, limit, outer, first, last):
        ux = (float(col) + 0.5 - 0.5 * wpx) / wpx - ax
        uy = (0.5 * hpx - float(row) - 0.5) / wpx - ay
        m2 = ux * ux + uy * uy
        theta = math.atan2(uy, ux)
        if theta < 0.0:
            theta += TWO_PI
        nsec = sec.shape[0]
        sc = min(nsec - 1, int(theta * nsec / TWO_PI))
        cols = sec[sc, 0]
        rows = sec[sc, 2]
        off = sec[sc, 3]
        g_lo = first * cols
        g_hi = (last + 1) * cols - 1
        s = float(g_hi) if m2 == 0.0 else (outer - lw - 0.5 * math.log2(m2)) * cols - 0.5
        if s <= g_lo:
            g0, fs = g_lo, 0.0
        elif s >= g_hi:
            g0, fs = g_hi, 0.0
        else:
            g0 = int(math.floor(s))
            fs = s - g0
        t = theta * cols / LN2 - 0.5 - sec[sc, 1]
        i0 = int(math.floor(t))
        ft = t - i0
        if i0 < 0:              # the edge rows hold these; kept inside in any case
            i0, ft = 0, 0.0
        elif i0 > rows - 2:
            i0, ft = rows - 2, 1.0
        i1 = i0 + 1
        g1 = g0 + 1 if fs > 0.0 else g0
        v00 = fetch(stack, slot_of, g0, i0, cols, off)
        v10 = fetch(stack, slot_of, g1, i0, cols, off)
        v01 = fetch(stack, slot_of, g0, i1, cols, off)
        v11 = fetch(stack, slot_of, g1, i1, cols, off)
        w00 = (1.0 - fs) * (1.0 - ft)
        w10 = fs * (1.0 - ft)
        w01 = (1.0 - fs) * ft
        w11 = fs * ft
        # the nearest sample decides inside or out
        near, wn = v00, w00
        if w10 > wn:
            near, wn = v10, w10
        if w01 > wn:
            near, wn = v01, w01
        if w11 > wn:
            near, wn = v11, w11
        if near >= limit:
            return float(limit)
        acc = 0.0
        wsum = 0.0
        if v00 < limit:
            acc += w00 * v00
            wsum += w00
        if v10 < limit:
            acc += w10 * v10
            wsum += w10
        if v01 < limit:
            acc += w01 * v01
            wsum += w01
        if v11 < limit:
            acc += w11 * v11
            wsum += w11
        v = acc / wsum
        return v if v < limit else float(limit)

    return value
