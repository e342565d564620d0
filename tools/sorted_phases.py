#!/usr/bin/env python3
"""Where the sorted launch's time goes on the GPU, on the bench's seahorse frame (1920x1080, 2000
iterations), each kernel timed alone with CUDA events (median of --repeats):

* probe / count / scatter: escape_variants.py's sorted passes, then the warp kernel on their list;
* the warp kernel on hand-made lists: picture order (what the list costs), the exact counts'
  order, longest first (what a perfect prediction would give) and shortest first; and on no list
  (the warp launch);
* how well the samples predicted: the share of the frame's iterations in pixels of each class.

    python tools/sorted_phases.py [--repeats 10] [--sample 4] [--probe 256] [--warps 16]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--sample", type=int, default=4)
    ap.add_argument("--probe", type=int, default=256)
    ap.add_argument("--reach", type=int, default=2)
    ap.add_argument("--warps", default="16")
    ap.add_argument("--thresh", type=int, default=8)
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--iters", type=int, default=2000)
    a = ap.parse_args()
    from numba import cuda

    from kernels import backend as kb
    from kernels.launch import PreparedKernel
    from kernels.mandelbrot.loops import escape_gpu as mk
    from kernels.mandelbrot.benches import escape_variants as ev
    from kernels.mandelbrot.loops import escape_warp as ew
    from kernels.mandelbrot import renderer as m
    from kernels.mandelbrot.benches.escape_variants import variant
    from kernels.mandelbrot.bench import SEAHORSE

    be = kb.resolve("cuda")
    (cx, cy, width), iters = SEAHORSE, a.iters
    w, h = (int(v) for v in a.size.split("x"))
    req = m.MandelbrotRequest(cx, cy, width, (w, h), iters, want_values=True)
    cost = m.iteration_counts(m.Renderer(be, launch=variant("grid")).render(req).values, iters)
    grid = m.PixelGrid.of(req)
    args = (0, 0, grid.cx, grid.cy, grid.step, grid.half_w, grid.half_h, iters)
    s = cuda.stream()
    values = cuda.device_array((h, w), np.float64, stream=s)
    counts = cuda.device_array((h, w), np.int32, stream=s)
    counter = cuda.device_array(1, np.uint32, stream=s)
    nsr, nsc = ev.sample_shape(h, w, a.sample)
    est = cuda.device_array((nsr, nsc), np.int32, stream=s)
    order = cuda.device_array(h * w, np.int32, stream=s)
    meta = cuda.device_array(2 * ev.NCLASSES, np.int32, stream=s)
    hist, cursor = meta[:ev.NCLASSES], meta[ev.NCLASSES:]
    no_hist = cuda.device_array(0, np.int32, stream=s)
    bx, by = block = (8, 8) if be.simulated else (32, 8)
    blocks = ((w + bx - 1) // bx, (h + by - 1) // by)
    sblocks = ((nsc + bx - 1) // bx, (nsr + by - 1) // by)

    launchers = {}

    def k(dispatcher, grid, blk):
        """Prepared launches, as the renderer makes them: the host's argument conversion (~100 µs
        per numba launch) would otherwise sit between the events."""
        key = (dispatcher, grid, blk)
        if key not in launchers:
            launchers[key] = PreparedKernel(dispatcher, grid, blk, s)
        return launchers[key]

    def timed(fn):
        out = []
        for k in range(a.repeats + 2):
            t0, t1 = cuda.event(), cuda.event()
            t0.record(s)
            fn()
            t1.record(s)
            t1.synchronize()
            if k >= 2:
                out.append(t0.elapsed_time(t1) if not be.simulated else 0.0)
        return statistics.median(out)

    def probe():
        k(mk.zero_kernel, 1, 2 * ev.NCLASSES)(meta)
        k(ev.probe_kernel, sblocks, block)(values, counts, est, a.sample, a.probe, 0, h, *args)

    def count():
        k(ev.count_kernel, blocks, block)(est, a.sample, a.reach, hist, h, w)

    def first_passes():
        probe()
        count()
        k(ev.scatter_kernel, blocks, block)(est, a.sample, a.reach, hist, cursor, order, h, w)

    for _ in range(2):              # compile, then prepare
        first_passes()
    cuda.synchronize()
    for wps in (int(v) for v in a.warps.split(",")):
        r = m.Renderer(be, launch="warp", warps_per_sm=wps)
        r.render(req)
        nblocks, threads = r.target.launch.grid(r.target)

        def warp(order_arr, hist_arr):
            k(mk.zero_kernel, 1, 32)(counter)
            k(ew.escape_warp_kernel, nblocks, threads)(values, counts, counter, order_arr, hist_arr,
                                                       a.thresh, 0, h, *args)

        print(f"== {wps} warps/SM ({nblocks} warps), thresh {a.thresh}, sample {a.sample}, "
              f"probe {a.probe}, reach {a.reach}")
        print(f"zero+probe          {timed(probe):.4f} ms")
        print(f"count               {timed(count):.4f} ms")
        first_passes()
        print(f"all first passes    {timed(first_passes):.4f} ms")
        first_passes()
        print(f"warp on the list    {timed(lambda: warp(order, hist)):.4f} ms  ({int(hist.copy_to_host().sum())} pixels listed)")
        print(f"warp, no list       {timed(lambda: warp(order, no_hist)):.4f} ms")
        for name, idx in (("picture order", np.arange(h * w)),
                          ("longest first", np.argsort(-cost.ravel(), kind="stable")),
                          ("shortest first", np.argsort(cost.ravel(), kind="stable"))):
            dorder = cuda.to_device(idx.astype(np.int32), stream=s)
            hh = np.zeros(ev.NCLASSES, np.int32)
            hh[-1] = h * w
            dh = cuda.to_device(hh, stream=s)
            print(f"warp, {name:14s} {timed(lambda: warp(dorder, dh)):.4f} ms")
        first_passes()
    est_h = est.copy_to_host()
    cls = np.empty((h, w), np.int64)
    order_h = order.copy_to_host()
    n = int(hist.copy_to_host().sum())
    listed = order_h[:n]
    # class of each listed pixel, by its position in the list (the list is sorted by class)
    hist_h = hist.copy_to_host()
    bounds = np.cumsum(hist_h[::-1])
    klass = np.empty(n, np.int64)
    start = 0
    for j, k in enumerate(range(ev.NCLASSES - 1, -1, -1)):
        klass[start:bounds[j]] = k
        start = bounds[j]
    cls[:] = -1
    cls.ravel()[listed] = klass
    flat = cost.ravel()
    print("class: pixels, their iterations (share of the frame's), largest count, median count")
    total = flat.sum()
    for k in range(ev.NCLASSES - 1, -1, -1):
        sel = cls.ravel() == k
        if sel.any():
            print(f"  {k:2d}: {int(sel.sum()):8d} px {flat[sel].sum() / total:6.1%} "
                  f"max {int(flat[sel].max()):5d} median {int(np.median(flat[sel])):5d}")
    print(f"samples finished in the probe: {int((cls == -1).sum())}, est grid {est_h.shape}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
