"""The app's warp launch with the lane-efficiency overlay: escape_warp.escape_warp_kernel's schedule
and arithmetic, plus the lane-iterations of every pixel (overlays.py's F_SLOTS layer) and of the
frame. The iterations layer needs no twin: it follows from the frame's values (overlay_device.py).

A kernel of its own, not a flag inside escape_warp_kernel: the frame without overlays must run
today's kernel unchanged (same PTX, same registers), and numba's disk cache keys kernels by name,
so two kernels made by one factory would share one cache entry. The schedule below is the same
as escape_warp_kernel's line for line (tests/kernels/test_overlays.py checks the values and counts
are the same bit for bit); only the accounting is added.

How lane-iterations are counted (the launch this kernel runs: one warp of 32 lanes per block,
refilling its idle lanes together, escape_warp.py): a warp executes the iteration body in step.
In one pass of its inner loop each live lane runs up to _STEPS bodies (fewer when its pixel
escapes: the lane leaves the loop while the others go on) or, near max_iter, one; the warp issues
max(bodies of the lanes in the _STEPS loop) + (1 if any lane took the single step) bodies, and
every body it issues occupies all 32 lanes. The warp keeps the running count W of bodies issued
(the same in every lane, from votes). A pixel's lane-iterations are W when its lane stores it
minus W when its lane took it: its own iterations plus the bodies its lane idled through, after
it escaped, until the warp refilled the lane. Its efficiency is iterations / lane-iterations. The
frame's lane-iterations are 32 W summed over the warps (`lanes`); they also count lanes
left without a pixel when the frame's segments ran out, which belong to no pixel. They are not
the roofline's "executed lane-iterations" (frame_work.py), a static model of 32 × the slowest
pixel of each 32-pixel row segment: that one assumes a warp per segment and no refills, this one
counts what this launch issued, lanes waiting for the refill threshold included.
"""
from __future__ import annotations

import numpy as np

from .escape import BAILOUT2
from .escape_gpu import cuda
from .gpu_target import WarpLaunch

if cuda is not None:
    from .escape_gpu import _gpu_add, _gpu_mul, _shortcut_gpu
    from .escape_warp import (_FULL_MASK, _STEPS, _segment_pixel, _segment_span, _take,
                              _warp)
    # _warp_max_bodies halves its way to the most bodies below _STEPS: exact for a power of two
    assert _STEPS & (_STEPS - 1) == 0

    @cuda.jit(device=True)
    def _warp_max_bodies(t, single):
        """Bodies the warp issued in this pass: the most any lane ran in the _STEPS loop (t),
        plus one when any lane took the single step. Votes only: uniform over the warp. The two
        common votes are cast before either is looked at, so the warp waits on them once; a pass
        where no lane ran all _STEPS finds the most by halving (three votes for _STEPS = 8)."""
        full = _warp.ballot_sync(_FULL_MASK, t >= _STEPS)
        extra = 0
        if _warp.ballot_sync(_FULL_MASK, single) != 0:
            extra = 1
        most = _STEPS
        if full == 0:
            most = 0
            half = _STEPS // 2
            while half > 0:
                if _warp.ballot_sync(_FULL_MASK, t >= most + half) != 0:
                    most += half
                half //= 2
        return most + extra

    @cuda.jit(cache=True)
    def escape_warp_overlay_kernel(values, counts, counter, order, hist, thresh, band_row0,
                                   band_rows, grid_row0, grid_col0, cx, cy, step, half_w, half_h,
                                   max_iter, slots, lanes):
        """escape_warp.escape_warp_kernel (same arguments first, same values and counts), which
        also writes slots[row, col] = the lane-iterations of every pixel it runs (int32) and adds
        its warp's lane-iterations to lanes[0] (int64), one atomic per warp."""
        cols = values.shape[1]
        listed = hist.shape[0] > 0
        inv_cols = 1.0 / float(cols)
        if listed:
            total = 0
            for k in range(hist.shape[0]):
                total += hist[k]
            segs = 1
            nseg = (total + 31) // 32
        else:
            total = band_rows * cols
            segs = (cols + 31) // 32
            nseg = band_rows * segs
        lane = cuda.laneid
        lt = _warp.lanemask_lt()
        nwarps = cuda.gridsize(1) // 32
        seg = cuda.grid(1) // 32
        inv_segs = np.float32(1.0) / np.float32(segs)
        pend = 0
        asker = 0
        if lane == 0:
            pend = _take(counter)
        more = seg < nseg
        sr, sc0, slen = _segment_span(seg, listed, segs, inv_segs, cols, total)
        used = 0
        live = False
        done = 0
        r = 0
        c = 0
        n = 0
        px = 0.0
        py = 0.0
        x = 0.0
        y = 0.0
        x2 = 0.0
        y2 = 0.0
        r2 = 0.0
        wsteps = 0              # bodies this warp issued so far (uniform)
        start = 0               # wsteps when this lane took its pixel
        while True:
            if done != 0:
                row = band_row0 + r
                if done == 2:
                    values[row, c] = r2
                    counts[row, c] = n
                else:
                    values[row, c] = float(max_iter)
                    counts[row, c] = 0
                slots[row, c] = wsteps - start
                done = 0
            while more:
                mask = _warp.ballot_sync(_FULL_MASK, not live)
                if mask == 0:
                    break
                k = int(cuda.popc(mask))
                rank = int(cuda.popc(mask & lt))
                avail = slen - used
                got = False
                if not live and rank < avail:
                    r, c = _segment_pixel(listed, order, sr, sc0 + used + rank, cols, inv_cols)
                    got = True
                if k < avail:
                    used += k
                else:
                    seg = nwarps + _warp.shfl_sync(_FULL_MASK, pend, asker)
                    asker = cuda.ffs(mask) - 1
                    if lane == asker:
                        pend = _take(counter)
                    more = seg < nseg
                    sr, sc0, slen = _segment_span(seg, listed, segs, inv_segs, cols, total)
                    used = min(k - avail, slen)
                    if more and not live and rank >= avail and rank - avail < slen:
                        r, c = _segment_pixel(listed, order, sr, sc0 + rank - avail, cols,
                                              inv_cols)
                        got = True
                if got:
                    gx = float(grid_col0 + c) + 0.5 - half_w
                    gy = float(grid_row0 + band_row0 + r) + 0.5 - half_h
                    px = _gpu_add(cx, _gpu_mul(gx, step))
                    py = _gpu_add(cy, -_gpu_mul(gy, step))
                    if _shortcut_gpu(px, py):
                        values[band_row0 + r, c] = float(max_iter)
                        counts[band_row0 + r, c] = 0
                        slots[band_row0 + r, c] = 0
                    else:
                        live = True
                        start = wsteps
                        n = 0
                        x = 0.0
                        y = 0.0
                        x2 = 0.0
                        y2 = 0.0
            need = thresh if more else 32
            idle = int(cuda.popc(_warp.ballot_sync(_FULL_MASK, not live)))
            if idle == 32:
                if not more:
                    break
                continue
            while idle < need:
                t = 0
                single = False
                if live:
                    if n + _STEPS <= max_iter:
                        n0 = n          # the loop's own counter only: t from n after it
                        for _ in range(_STEPS):
                            n += 1
                            y = _gpu_add(_gpu_mul(_gpu_add(x, x), y), py)
                            x = _gpu_add(_gpu_add(x2, -y2), px)
                            x2 = _gpu_mul(x, x)
                            y2 = _gpu_mul(y, y)
                            r2 = _gpu_add(x2, y2)
                            if r2 > BAILOUT2:
                                break
                        t = n - n0
                    else:
                        n += 1
                        single = True
                        y = _gpu_add(_gpu_mul(_gpu_add(x, x), y), py)
                        x = _gpu_add(_gpu_add(x2, -y2), px)
                        x2 = _gpu_mul(x, x)
                        y2 = _gpu_mul(y, y)
                        r2 = _gpu_add(x2, y2)
                    if r2 > BAILOUT2:
                        live = False
                        done = 2
                    elif n >= max_iter:
                        live = False
                        done = 3
                wsteps += _warp_max_bodies(t, single)
                idle = int(cuda.popc(_warp.ballot_sync(_FULL_MASK, not live)))
        if lane == 0:
            cuda.atomic.add(lanes, 0, 32 * wsteps)
else:  # pragma: no cover - only where numba-cuda is broken
    escape_warp_overlay_kernel = None


class OverlayWarpLaunch(WarpLaunch):
    """The warp launch (same thresh and warps per SM) running escape_warp_overlay_kernel into
    `slots` (H, W) int32 and `lanes` (1,) int64 on the device. `rows` counts the rows its
    launches covered, so the caller knows whether any band of the frame ran sliced instead."""

    def __init__(self, plain: WarpLaunch, slots, lanes):
        super().__init__(plain.thresh, plain.per_sm)
        self._empty = plain._empty
        self.slots, self.lanes = slots, lanes
        self.rows = 0

    def dispatcher(self):
        return escape_warp_overlay_kernel

    def escape(self, gpu, values, counts, counter, b0, n, args, grid, finish):
        order, hist = self.order(gpu, values, counts, b0, n, args, finish)
        gpu.kernel(escape_warp_overlay_kernel, *grid)(
            values, counts, counter, order, hist, self.thresh, b0, n, *args, self.slots,
            self.lanes)
        self.rows += n
