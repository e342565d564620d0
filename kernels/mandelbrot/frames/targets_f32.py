"""The renderer's targets for float32 frames: cpu_target.CpuTarget and gpu_target.GpuTarget with the
float32 kernels (escape.py's CPU twin, escape_gpu.py's sliced kernel, escape_warp.py's warp
kernel). The renderer hands them the float64 kernels' grid arguments; they turn those into the two
float32 coordinate arrays (escape.pixel_axes) and run the same pipeline: bands, slices and cancels
as for float64 frames, values and counts in the same buffers, so colouring, read-outs and
recolouring never ask which type made a frame.
"""
from __future__ import annotations

import numpy as np

from .cpu_target import CpuTarget
from ..loops.escape import pixel_axes
from ..requests.formulas import LABELS, MANDELBROT
from .gpu_target import GpuTarget, WarpLaunch

# idle lanes that make a float32 warp refill (float64's warp kernel: gpu_target.THRESH): a float32
# look is short beside the refill's fixed cost, so the warp waits for more idle lanes
THRESH = 16


def _mandelbrot_only(formula: str) -> None:
    """ValueError for another formula: the float32 kernels iterate z^2 + c only (number_type.py
    keeps other formulas' frames in float64)."""
    if formula != MANDELBROT:
        raise ValueError(f"float32 frames draw the Mandelbrot set only, not "
                         f"{LABELS.get(formula, formula)}: choose float64")


class CpuTarget32(CpuTarget):
    """Frames computed in host memory with the float32 arithmetic."""

    number_type = "float32"

    def formula_kernel(self, formula: str):
        _mandelbrot_only(formula)
        return super().formula_kernel(formula)


class GpuTarget32(GpuTarget):
    """Frames computed in device memory with the float32 kernels: the coordinate arrays are copied
    to the device before each escape pass (a few kB), into buffers kept for the next frame."""

    slice_dtype = np.float32

    def slice_kernel(self, formula: str = MANDELBROT):
        _mandelbrot_only(formula)
        from ..loops.escape_gpu import slice_kernel      # numba.cuda: GPU frames only
        return slice_kernel(formula, "float32")

    def kernel_args(self, values, args, timer, formula: str = MANDELBROT) -> tuple:
        """The float32 kernels' arguments: the two coordinate arrays of `values`' rows and
        columns, copied to the device, and max_iter."""
        _mandelbrot_only(formula)
        rows, cols = values.shape
        xs, ys = pixel_axes(args, rows, cols)
        dxs = self.pool.device("axis-x", (cols,), np.float32, stream=self.stream)
        dys = self.pool.device("axis-y", (rows,), np.float32, stream=self.stream)
        hx = self.pool.host("axis-x", (cols,), np.float32)
        hy = self.pool.host("axis-y", (rows,), np.float32)
        hx[:] = xs
        hy[:] = ys
        with timer.phase("h2d", gpu=True, nbytes=hx.nbytes + hy.nbytes):
            dxs.copy_to_device(hx, stream=self.stream)
            dys.copy_to_device(hy, stream=self.stream)
        return dxs, dys, int(args[-1])


class WarpLaunch32(WarpLaunch):
    """WarpLaunch's scheme in float32 (picture order) with escape_warp.escape_warp_kernel32 (a
    bench may set `kernel` to another before the first frame: escape_variants.warp_kernel32)."""

    def __init__(self, thresh, warps_per_sm, kernel=None):
        super().__init__(THRESH if thresh is None else thresh, warps_per_sm)
        if kernel is None:
            from ..loops.escape_warp import warp_kernel    # numba.cuda: GPU frames only
            kernel = warp_kernel(MANDELBROT, "float32")
        self.kernel = kernel

    def dispatcher(self):
        return self.kernel

    def escape(self, gpu, values, counts, counter, b0, n, args, grid, finish):
        gpu.kernel(self.kernel, *grid)(values, counts, counter, self.thresh, b0, n, *args)


def float32_target(backend, pool, launch: str, block, thresh: int, warps_per_sm: int, cuts):
    """The target a float32 Renderer runs on `backend`; ValueError for a launch other than the
    warp launch (the variants are float64 benches). `thresh` None: THRESH."""
    if launch != "warp":
        raise ValueError(f"float32 frames run the warp launch only, not {launch!r}")
    if backend.is_gpu:
        return GpuTarget32(backend, pool, WarpLaunch32(thresh, warps_per_sm), block, cuts)
    return CpuTarget32(backend, cuts)
