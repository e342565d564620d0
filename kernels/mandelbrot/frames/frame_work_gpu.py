"""The GPU half of frame_work.py: the frame's work counted on the device (count_kernel), imported
by frame_work.start_count at the first GPU count, so a CPU frame never imports numba.cuda.
"""
from __future__ import annotations

from ..loops.escape import pixel_count
from ..loops.escape_gpu import cuda    # by this name: the simulator swaps the module its kernels call
from ..loops.formula_twins import twin
from .gpu_target import WARP_THREADS as LANES

MAX_SEGMENTS = 16              # row segments (warps) per block of the GPU count
SIM_SEGMENTS = 2               # the simulator runs a Python thread per CUDA thread

if cuda is not None:
    from numba import int32, int64

    from ..loops.escape_gpu import _gpu_add, _gpu_mul, _shortcut_gpu, _shortcut_ship_gpu
    _pixel_count_gpu = cuda.jit(device=True)(pixel_count.py_func)

    @cuda.jit(cache=True)
    def count_kernel(values, out, grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter):
        """Blocks of (32, ≤ MAX_SEGMENTS) threads, each warp one 32-pixel row segment, reading
        the values coalesced: out[0] += the block's useful iterations, out[1] += 32 × each
        segment's slowest pixel's, one pair of atomics per block."""
        counts = cuda.shared.array((MAX_SEGMENTS, LANES), int32)
        sums = cuda.shared.array(MAX_SEGMENTS, int64)
        tops = cuda.shared.array(MAX_SEGMENTS, int64)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        rows, cols = values.shape
        c = cuda.blockIdx.x * LANES + tx
        r = cuda.blockIdx.y * cuda.blockDim.y + ty
        n = 0
        if r < rows and c < cols:
            gx = float(grid_col0 + c) + 0.5 - half_w
            gy = float(grid_row0 + r) + 0.5 - half_h
            px = _gpu_add(cx, _gpu_mul(gx, step))
            py = _gpu_add(cy, -_gpu_mul(gy, step))
            n = _pixel_count_gpu(values[r, c], _shortcut_gpu(px, py), max_iter)
        counts[ty, tx] = n
        cuda.syncthreads()
        if tx == 0:
            total = 0
            top = 0
            for k in range(LANES):
                v = counts[ty, k]
                total += v
                top = max(top, v)
            sums[ty] = total
            tops[ty] = top
        cuda.syncthreads()
        if tx == 0 and ty == 0:
            total = 0
            lanes = 0
            for k in range(cuda.blockDim.y):
                total += sums[k]
                lanes += LANES * tops[k]
            cuda.atomic.add(out, 0, total)
            cuda.atomic.add(out, 1, lanes)

    # a Burning Ship frame's count: count_kernel's code with its shortcut (formula_twins.py)
    count_kernel_ship = cuda.jit(cache=True)(
        twin(count_kernel.py_func, "count_kernel_ship", _shortcut_gpu=_shortcut_ship_gpu))
else:  # pragma: no cover - only where numba-cuda is broken
    count_kernel = count_kernel_ship = None
