"""Where a deep frame's per-pixel work goes: an instrumented copy of the CPU twin's
perturbation-format loop (kernels/mandelbrot/loops/perturbation_loop.py) that records every operation of
every pixel of a frame (or of every `--every`-th row and column) and sums them up:

* perturbation steps by why no BLA step was taken: m = 0 (just after a rebase, where the table
  has no entry), the single step's radius is 0 (|Z_m| > 2, or no entry), or δ had outgrown it;
* the same steps by how far before the pixel's escape they came (powers of two);
* the perturbation steps by m (the reference iteration they start from), in bins;
* BLA steps by level (length 2^k);
* rebases.

The totals are checked against the renderer's own counts for the same pixels.

  .venv/bin/python tools/deep_steps.py --width 1e-30 --size 640x360 --max-iter 100000 --every 3
"""
from __future__ import annotations

import argparse
import operator
import os
import sys

import numpy as np
from numba import njit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kernels.mandelbrot.tables.flat_build import (
    B_AI,
    B_AR,
    B_BI,
    B_BR,
    B_R,
    Z_IM,
    Z_R0,
    Z_RE,
    loop_tables,
)
from kernels.mandelbrot.loops.perturbation_loop import delta_c_cpu
from kernels.mandelbrot.loops.step_helpers import make_step_helpers
from kernels.mandelbrot.loops.escape import BAILOUT2

_closer_to_zero = make_step_helpers(operator.mul, operator.add, njit(inline="always"))[1]

# why a perturbation step was taken
AFTER_REBASE, NO_RADIUS, OUTGROWN = range(3)
REASONS = ("m = 0 (after a rebase)", "radius 0 (|Z_m| > 2 or no entry)", "δ outgrew the radius")
M_BIN = 256
DIST_BINS = 16


@njit
def _pixel(cdr, cdi, zo, bt, levels, max_iter, why, dist, by_m, by_level, log):
    """The perturbation loop for one pixel, logging (n, kind, m) per operation: kind < 0 is a
    perturbation step (-1 - reason), kind >= 0 a BLA step of level kind. Returns (n, rebases)."""
    last = zo.shape[0] - 1
    nlev = levels.shape[0]
    dr = 0.0
    di = 0.0
    m = 0
    n = 0
    rebases = 0
    ops = 0
    while n < max_iter:
        dm = max(abs(dr), abs(di))
        if dm < zo[m, Z_R0]:
            j0 = m - 1
            best = j0
            length = 1
            k = 1
            while k < nlev and (j0 & ((1 << k) - 1)) == 0:
                j = j0 >> k
                if j >= levels[k, 1] or n + (1 << k) > max_iter:
                    break
                idx = levels[k, 0] + j
                if not dm < bt[idx, B_R]:
                    break
                best = idx
                length = 1 << k
                k += 1
            by_level[k - 1] += 1
            bdr = bt[best, B_BR] * cdr - bt[best, B_BI] * cdi
            bdi = bt[best, B_BR] * cdi + bt[best, B_BI] * cdr
            ndr = (bt[best, B_AR] * dr - bt[best, B_AI] * di) + bdr
            di = (bt[best, B_AR] * di + bt[best, B_AI] * dr) + bdi
            dr = ndr
            m += length
            n += length
        else:
            reason = AFTER_REBASE if m == 0 else (NO_RADIUS if zo[m, Z_R0] == 0.0 else OUTGROWN)
            log[ops, 0] = n
            log[ops, 1] = reason
            log[ops, 2] = m
            ops += 1
            tr = (zo[m, Z_RE] + zo[m, Z_RE]) + dr
            ti = (zo[m, Z_IM] + zo[m, Z_IM]) + di
            ndr = (tr * dr - ti * di) + cdr
            di = (tr * di + ti * dr) + cdi
            dr = ndr
            m += 1
            n += 1
        xr = zo[m, Z_RE] + dr
        xi = zo[m, Z_IM] + di
        r2 = xr * xr + xi * xi
        if r2 > BAILOUT2:
            break
        if m == last or _closer_to_zero(xr, xi, r2, dr, di):
            dr = xr
            di = xi
            m = 0
            rebases += 1
    for i in range(ops):
        why[log[i, 1]] += 1
        d = n - log[i, 0]
        b = 0
        while b < DIST_BINS - 1 and d >= (1 << (b + 1)):
            b += 1
        dist[b] += 1
        by_m[min(log[i, 2] // M_BIN, by_m.shape[0] - 1)] += 1
    return n, rebases


@njit
def _frame(rows, cols, geo, zo, bt, levels, max_iter, why, dist, by_m, by_level):
    d0r, d0i, step, cexp, half_w, half_h = geo
    log = np.empty((max_iter + 1, 3), dtype=np.int64)
    total = 0
    rebases = 0
    for r in rows:
        for c in cols:
            cdr, cdi = delta_c_cpu(r, c, d0r, d0i, step, cexp, half_w, half_h)
            n, rb = _pixel(cdr, cdi, zo, bt, levels, max_iter, why, dist, by_m, by_level, log)
            total += n
            rebases += rb
    return total, rebases


def main(argv=None) -> int:
    from kernels.backend import resolve
    from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP
    from kernels.mandelbrot.deep.renderer import DeepRenderer, FrameGeometry
    from kernels.mandelbrot.requests.deep_request import DeepRequest

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--width", default="1e-30")
    p.add_argument("--size", default="640x360")
    p.add_argument("--max-iter", type=int, default=100_000)
    p.add_argument("--every", type=int, default=1, help="every n-th row and column only")
    args = p.parse_args(argv)
    w, h = (int(s) for s in args.size.split("x"))
    loc = KORMANYOS_VERY_DEEP
    req = DeepRequest(loc.center_re, loc.center_im, args.width, (w, h), args.max_iter,
                      number_format="perturbation")
    r = DeepRenderer(resolve("cpu"))
    res = r.render_values(req)
    orb, _ = res.reference.arrays()
    _, tab, tabe, levels = r._table
    zo, bt = loop_tables(orb, tab, tabe, levels)
    geo = FrameGeometry.of(req, res.reference)
    rows = np.arange(0, h, args.every, dtype=np.int64)
    cols = np.arange(0, w, args.every, dtype=np.int64)
    why = np.zeros(3, dtype=np.int64)
    dist = np.zeros(DIST_BINS, dtype=np.int64)
    by_m = np.zeros(orb.shape[0] // M_BIN + 1, dtype=np.int64)
    by_level = np.zeros(max(1, levels.shape[0]), dtype=np.int64)
    total, rebases = _frame(rows, cols, (geo.d0r, geo.d0i, geo.step, geo.cexp, geo.half_w, geo.half_h),
                            zo, bt, levels, args.max_iter, why, dist, by_m, by_level)
    px = len(rows) * len(cols)
    print(f"frame {args.width} {w}x{h}, {args.max_iter:,} iterations, {px:,} pixels "
          f"(every {args.every}), reference {orb.shape[0]:,} points, {levels.shape[0]} levels")
    steps, bla = int(why.sum()), int(by_level.sum())
    print(f"per pixel: {total / px:.1f} iterations, {steps / px:.1f} perturbation steps, "
          f"{bla / px:.1f} BLA steps, {rebases / px:.2f} rebases")
    if args.every == 1:
        st = res.stats
        same = (steps, bla, rebases) == (st["perturbation_steps"], st["bla_steps"], st["rebases"])
        print(f"same totals as the renderer's counts: {same}")
    print("perturbation steps per pixel, by why no BLA step:")
    for name, v in zip(REASONS, why):
        print(f"  {name}: {v / px:.1f}")
    print("perturbation steps per pixel, by iterations before the pixel's escape:")
    for b in range(DIST_BINS):
        if dist[b]:
            lo, hi = (0 if b == 0 else 1 << b), (1 << (b + 1)) - 1
            print(f"  {lo}-{hi}: {dist[b] / px:.1f}")
    print(f"perturbation steps per pixel, by reference iteration m (bins of {M_BIN}):")
    for i, v in enumerate(by_m):
        if v / px >= 0.5:
            print(f"  m {i * M_BIN}-{(i + 1) * M_BIN - 1}: {v / px:.1f}")
    print("BLA steps per pixel by length: " + ", ".join(
        f"{1 << k}: {v / px:.1f}" for k, v in enumerate(by_level) if v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
