#!/usr/bin/env python3
"""Which pixels of a deep bench frame the accuracy guard redoes, and what their passes cost, on the
CPU (extended_loop.py's loop, pass by pass; perturbation frames run it compiled for their format,
perturbation_loop.KMIN_CODE, with the same counts): for every pixel (or every STRIDE-th row and
column) the first pass's perturbation + BLA steps and whether it is doubtful, and for the doubtful
ones the same for the pass at 2^-REDO_SHIFT and, if still doubtful, the last one. A redone pixel's
passes run one after the other on one GPU thread, so the longest chain bounds how long a frame
waits for its redo.

    .venv/bin/python tools/deep_redo_census.py [--width 1e-100] [--iters 50000] [--stride 1]

1920x1080 at stride 1 takes ~45 s on two cores (1e-100).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--width", default="1e-100")
    ap.add_argument("--iters", type=int, default=50_000)
    ap.add_argument("--stride", type=int, default=1)
    a = ap.parse_args()
    from numba import njit, prange

    from kernels.backend import resolve
    from kernels.mandelbrot.loops import extended_loop, guard, targets
    from kernels.mandelbrot.loops.step_helpers import make_offset
    from kernels.mandelbrot.benches.bench import _request
    from kernels.mandelbrot.deep.renderer import DeepRenderer, FrameGeometry

    req = _request(a.width, (1920, 1080), a.iters)
    r = DeepRenderer(resolve("cpu"))
    orbit, _ = r._reference(req, None, None)
    geo = FrameGeometry.of(req, orbit)
    (_, tab, tabe, levels), _ = r._table_for(orbit, geo, req.bla)
    orb, oexp = orbit.arrays()
    eps = math.ldexp(1.0, -r.eps_bits)
    ops = (targets.CPU_MUL, targets.CPU_ADD, targets.CPU_SQRT)
    one_pass = extended_loop.make_pixel(*ops, njit, req.format == "extended")[3]
    offset = make_offset(targets.CPU_MUL, targets.CPU_ADD, njit)
    redo_shift, last_shift = guard.REDO_SHIFT, guard.LAST_SHIFT

    @njit(parallel=True)
    def census(rows, cols, stride, d0r, d0i, step, cexp, hw, hh, orb, oexp, tab, tabe, levels,
               kmin, eps, max_iter):
        nr = (rows + stride - 1) // stride
        nc = (cols + stride - 1) // stride
        out = np.zeros((nr * nc, 5))       # first pass cost, doubtful, second, doubtful, last
        for ri in prange(nr):
            for ci in range(nc):
                cmr, cmi = offset(ri * stride, ci * stride, d0r, d0i, step, hw, hh)
                k = ri * nc + ci
                _, a, b, _, _, d = one_pass(cmr, cmi, cexp, orb, oexp, tab, tabe, levels, kmin,
                                            eps, max_iter, 0)
                out[k, 0] = a + b
                if d:
                    out[k, 1] = 1
                    _, a, b, _, _, d = one_pass(cmr, cmi, cexp, orb, oexp, tab, tabe, levels,
                                                kmin, eps, max_iter, redo_shift)
                    out[k, 2] = a + b
                    if d:
                        out[k, 3] = 1
                        _, a, b, _, _, d = one_pass(cmr, cmi, cexp, orb, oexp, tab, tabe, levels,
                                                    kmin, eps, max_iter, last_shift)
                        out[k, 4] = a + b
        return out

    t = time.perf_counter()
    out = census(1080, 1920, a.stride, geo.d0r, geo.d0i, geo.step, geo.cexp, geo.half_w,
                 geo.half_h, orb, oexp, tab, tabe, levels, r.kmin, eps, a.iters)
    first, doubt, second, doubt2, last = out.T
    d = doubt == 1
    chain = first + second + last
    print(f"{a.width} at 1920x1080, stride {a.stride}, {a.iters:,} iterations, "
          f"{time.perf_counter() - t:.1f} s: {out.shape[0]:,} pixels")
    print(f"first pass (perturbation + BLA steps): mean {first.mean():.0f}, "
          f"p99 {np.percentile(first, 99):.0f}, max {first.max():.0f}")
    print(f"doubtful after the first pass: {int(d.sum()):,} ({100 * d.mean():.2f} %), "
          f"after the second: {int(doubt2.sum()):,}")
    if d.any():
        print(f"second pass of those: mean {second[d].mean():.0f}, max {second[d].max():.0f}; "
              f"last pass: max {last.max():.0f}")
        print(f"longest chain of passes: {chain.max():.0f} steps; the ten longest: "
              f"{', '.join(f'{v:.0f}' for v in np.sort(chain)[-10:])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
