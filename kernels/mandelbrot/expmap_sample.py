"""How a zoom movie's frame pixel is sampled from its exponential-map keyframes, written once for
the CPU twin (expmap_assemble.py) and the GPU (expmap_assemble_gpu.py).

One description (`make_sample`) compiled for both targets. Pixel (row, col) of a frame 2^lw wide
sits at u = ((col + 0.5 − Wpx/2) − i(row + 0.5 − Hpx/2))/Wpx − a widths from p, so at log radius
lw + log2|u| and angle arg u: a continuous place in the keyframes laid side by side, outermost
first (sample g of the whole strip: keyframe g // W, column W − 1 − g mod W). Its value is the
bilinear mean of the four samples around it, angles wrapping round; where the nearest of them is
inside the set (a count at or above the frame's limit) the pixel is inside, else the inside ones
are left out of the mean (their count is no count). Inside the innermost keyframe loaded for the
frame (the disc below a quarter pixel around p) the nearest sample stands.
"""
from __future__ import annotations

import math

TWO_PI = 2.0 * math.pi
# the kernels that inline this (expmap_assemble, expmap_assemble_gpu) sit in numba's disk cache
# keyed by their own files: a change here must touch them too


def make_sample(jit):
    """value(row, col, hpx, wpx, stack, slot_of, ax, ay, lw, limit, outer, cols, rows, g_lo,
    g_hi) compiled by `jit`: the frame pixel's smooth count as the module docstring says."""

    @jit
    def fetch(stack, slot_of, g, i, cols):
        k = g // cols
        return stack[slot_of[k], i, cols - 1 - (g - k * cols)]

    @jit
    def value(row, col, hpx, wpx, stack, slot_of, ax, ay, lw, limit, outer, cols, rows, g_lo,
              g_hi):
        ux = (float(col) + 0.5 - 0.5 * wpx) / wpx - ax
        uy = (0.5 * hpx - float(row) - 0.5) / wpx - ay
        m2 = ux * ux + uy * uy
        s = float(g_hi) if m2 == 0.0 else (outer - lw - 0.5 * math.log2(m2)) * cols - 0.5
        theta = math.atan2(uy, ux)
        if theta < 0.0:
            theta += TWO_PI
        t = theta * rows / TWO_PI - 0.5
        if s <= g_lo:
            g0, fs = g_lo, 0.0
        elif s >= g_hi:
            g0, fs = g_hi, 0.0
        else:
            g0 = int(math.floor(s))
            fs = s - g0
        fi = math.floor(t)
        ft = t - fi
        i0 = (int(fi) + rows) % rows
        i1 = (i0 + 1) % rows
        g1 = g0 + 1 if fs > 0.0 else g0
        v00 = fetch(stack, slot_of, g0, i0, cols)
        v10 = fetch(stack, slot_of, g1, i0, cols)
        v01 = fetch(stack, slot_of, g0, i1, cols)
        v11 = fetch(stack, slot_of, g1, i1, cols)
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
