"""The app's warp launch with the lane-efficiency overlay: escape_warp.escape_warp_overlay_kernel,
escape_warp_kernel's loop (one loop, escape_warp._make_warp_loop) with its accounting switched on
at compile time, so the frame without overlays runs a kernel with none of it (the same PTX and
registers as before the two were one: tools/ptx_fingerprint.py). It adds the lane-iterations of
every pixel (overlays.py's F_SLOTS layer) and of the frame; tests/kernels/test_overlays.py checks
that the values and counts are the plain kernel's bit for bit. The iterations layer needs no twin:
it follows from the frame's values (overlay_device.py).

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

from .escape_gpu import cuda
from .gpu_target import WarpLaunch

if cuda is not None:
    from .escape_warp import escape_warp_overlay_kernel
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
