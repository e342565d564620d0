"""The GPU half of escape.py: the escape arithmetic of both number types compiled for numba.cuda,
the sliced and the finishing kernels. GPU code imports them from here, and only GPU code imports
this module: a CPU frame never imports numba.cuda (~0.17 s of a 256² CPU render on the 2-core
machine).
"""
from __future__ import annotations

import operator

from ...backend import simulator_enabled
import numpy as np

from ..requests import formulas
from .escape import _add32, _make_escape, _mul32
from .formula_twins import twin

GPU_IMPORT_ERROR = None
try:
    from numba import cuda
except Exception as exc:  # the CPU path must work even where numba-cuda does not import
    cuda = None
    GPU_IMPORT_ERROR = exc
_gpu_mul = _gpu_add = None      # the rounded multiply and add of GPU code (colour_gpu's too)


def _sim_lane_values(value):
    """Every lane's `value`, by lane, for the CUDA simulator, which has no warp vote or shuffle:
    its thread block must be one warp of 32 threads that all call this together (the barrier is
    the block's)."""
    import threading
    t = threading.current_thread()
    store = t._manager.__dict__.setdefault("_lane_values", {})
    store[t.thread_id] = value
    t.syncthreads()
    got = [store[i] for i in range(32)]
    t.syncthreads()
    return got


def _sim_ballot(mask, pred):
    return sum(1 << i for i, v in enumerate(_sim_lane_values(bool(pred))) if v)


def _sim_shfl(mask, value, src):
    return _sim_lane_values(value)[src]


def _sim_lanemask_lt():
    import threading
    return (1 << (threading.current_thread().thread_id % 32)) - 1


if cuda is not None:
    if simulator_enabled():
        _gpu_mul, _gpu_add = operator.mul, operator.add
    else:
        from numba.cuda import libdevice
        _gpu_mul, _gpu_add = libdevice.dmul_rn, libdevice.dadd_rn

    @cuda.jit(device=True, inline="always")
    def _point_gpu(row, col, grid_row0, grid_col0, cx, cy, step, half_w, half_h):
        """c = x + iy of picture pixel (grid_row0 + row, grid_col0 + col): the CPU's pixel_axes'
        operations, in their order."""
        gx = float(grid_col0 + col) + 0.5 - half_w
        gy = float(grid_row0 + row) + 0.5 - half_h
        return _gpu_add(cx, _gpu_mul(gx, step)), _gpu_add(cy, -_gpu_mul(gy, step))

    _escape_gpu, _, _advance_gpu, _shortcut_gpu, _smooth_gpu, _zstep_gpu, _step_gpu = \
        _make_escape(_gpu_mul, _gpu_add, cuda.jit(device=True),
                     cuda.jit(device=True, inline="always"))

    # float32's multiply and add (escape.py says why rounded so), and its arithmetic
    if simulator_enabled():
        _mul32_gpu, _add32_gpu = _mul32.py_func, _add32.py_func
    else:
        @cuda.jit(device=True, inline="always")
        def _mul32_gpu(a, b):
            return libdevice.fmul_rn(np.float32(a), np.float32(b))

        @cuda.jit(device=True, inline="always")
        def _add32_gpu(a, b):
            return libdevice.fadd_rn(np.float32(a), np.float32(b))
    _, _, _advance32_gpu, _shortcut32_gpu, _, _zstep32_gpu, _step32_gpu = _make_escape(
        _mul32_gpu, _add32_gpu, cuda.jit(device=True), cuda.jit(device=True, inline="always"))

    @cuda.jit(device=True, inline="always")
    def _given(v, i):
        return v

    @cuda.jit(device=True, inline="always")
    def _item(a, i):
        return a[i]

    def _make_slice_pixel(advance, coord):
        """A sliced kernel's work on one pixel over `advance` (a number type's), its c's parts
        `coord`(x, column) and `coord`(y, row): given (float64), or read from axes (float32)."""
        @cuda.jit(device=True, inline="always")
        def slice_pixel(values, zx, zy, br, c, x, y, zero, n0, n1, max_iter):
            """Iterates n0+1 .. n1 of pixel (br, c) from z = 0 (n0 == 0) or zx, zy's; 1 where it
            still runs after them (z kept in zx, zy), else 0 (its value stored)."""
            zr = zero
            zi = zero
            if n0 > 0:
                zr = zx[br, c]
                zi = zy[br, c]
            v, zr, zi = advance(coord(x, c), coord(y, br), zr, zi, n0, n1, max_iter)
            values[br, c] = v
            if v < 0.0:
                zx[br, c] = zr
                zy[br, c] = zi
                return 1
            return 0
        return slice_pixel

    @cuda.jit(device=True, inline="always")
    def _count_running(alive, running):
        """alive[0] += the block's pixels still running: one atomic per block."""
        count = cuda.syncthreads_count(running)
        if count > 0 and cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
            cuda.atomic.add(alive, 0, count)

    _slice_pixel = _make_slice_pixel(_advance_gpu, _given)
    _slice_pixel32 = _make_slice_pixel(_advance32_gpu, _item)

    @cuda.jit(cache=True)
    def escape_slice_kernel(values, zx, zy, alive, band_row0, band_rows, grid_row0, grid_col0,
                            cx, cy, step, half_w, half_h, n0, n1, max_iter):
        """One thread per pixel, the work cut into iteration slices, for frames whose iteration
        count is too large for one launch: iterates n0+1 .. n1 of every pixel of the band still running
        (values < 0 after the previous slice; every pixel when n0 == 0), keeping z in zx, zy.
        Adds to alive[0] the number of pixels still running after this slice (one atomic per
        block), so the host knows when to stop and how long the next slice may be."""
        c, r = cuda.grid(2)
        running = 0
        if c < values.shape[1] and r < band_rows:
            br = band_row0 + r
            if n0 == 0 or values[br, c] < 0.0:
                x, y = _point_gpu(br, c, grid_row0, grid_col0, cx, cy, step, half_w, half_h)
                running = _slice_pixel(values, zx, zy, br, c, x, y, 0.0, n0, n1, max_iter)
        _count_running(alive, running)

    @cuda.jit(cache=True)
    def escape_slice_kernel32(values, zx, zy, alive, band_row0, band_rows, xs, ys, n0, n1,
                              max_iter):
        """escape_slice_kernel in float32 (z kept in float32 zx, zy), the pixel coordinates read
        from xs, ys (escape.pixel_axes)."""
        c, r = cuda.grid(2)
        running = 0
        if c < values.shape[1] and r < band_rows:
            br = band_row0 + r
            if n0 == 0 or values[br, c] < 0.0:
                running = _slice_pixel32(values, zx, zy, br, c, xs, ys, np.float32(0.0), n0, n1,
                                         max_iter)
        _count_running(alive, running)

    @cuda.jit(cache=True)
    def finish_kernel(values, counts, band_row0, band_rows):
        """The smooth value of every escaped pixel of the band (counts > 0): from |z_n|^2 and n."""
        c, r = cuda.grid(2)
        if c < values.shape[1] and r < band_rows:
            n = counts[band_row0 + r, c]
            if n > 0:
                values[band_row0 + r, c] = _smooth_gpu(values[band_row0 + r, c], n)

    @cuda.jit(cache=True)
    def zero_kernel(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = 0

    # Burning Ship's arithmetic and its sliced kernel, a twin of escape_slice_kernel's code
    # (formula_twins.py); finish_kernel's smooth value is every formula's
    _, _, _advance_ship_gpu, _shortcut_ship_gpu, _, _zstep_ship_gpu, _step_ship_gpu = _make_escape(
        _gpu_mul, _gpu_add, cuda.jit(device=True), cuda.jit(device=True, inline="always"),
        formula=formulas.BURNING_SHIP)
    escape_slice_kernel_ship = cuda.jit(cache=True)(twin(
        escape_slice_kernel.py_func, "escape_slice_kernel_ship",
        _slice_pixel=_make_slice_pixel(_advance_ship_gpu, _given)))

    # the warp launches' votes, shuffles and segment counter (escape_warp.py, escape_variants.py)
    if simulator_enabled():
        # the simulator has no warp vote or shuffle: stand-ins with the same names
        import types as _pytypes
        _warp = _pytypes.SimpleNamespace(ballot_sync=_sim_ballot, shfl_sync=_sim_shfl,
                                         lanemask_lt=_sim_lanemask_lt)
    else:
        _warp = cuda
    _FULL_MASK = 0xFFFFFFFF
    _TAKE_MAX = np.uint32(0x7FFFFFFF)   # atomic.inc wraps to 0 past this: never, in practice

    @cuda.jit(device=True)
    def _take(counter):
        """counter[0] += 1 (a uint32 counter), returning the old value. An atomic increment
        that wraps at _TAKE_MAX, not an atomic add: for an add (and for an increment wrapping at
        2^32, which is one) the compiler makes one lane do the warp's atomics and shuffles the
        answer to the others at once, so the warp would wait for the atomic right where it asks,
        while the answer is wanted only one segment later."""
        return cuda.atomic.inc(counter, 0, _TAKE_MAX)
else:  # pragma: no cover - only where numba-cuda is broken
    escape_slice_kernel = finish_kernel = zero_kernel = escape_slice_kernel_ship = None
    escape_slice_kernel32 = None


def slice_kernel(formula: str, number_type: str = "float64"):
    """The sliced kernel of `formula` (formulas.py's names) in `number_type` (float32: the
    Mandelbrot set's only, number_type.py keeps other formulas in float64)."""
    if number_type == "float32" and formulas.check(formula) == formulas.MANDELBROT:
        return escape_slice_kernel32
    if number_type != "float64":
        raise ValueError(f"no {number_type} sliced kernel of the {formula} formula")
    return {formulas.MANDELBROT: escape_slice_kernel,
            formulas.BURNING_SHIP: escape_slice_kernel_ship}[formulas.check(formula)]
