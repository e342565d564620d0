"""Perturbation-format frames with float32 deltas: perturbation_loop.py's loop (`make_walk`, the
same BLA steps, rebasing and accuracy guard), generated with float32 multiplies, adds and square
roots, over the same orbit and table rounded to float32 (`flat_tables32`), with its CPU twin and
GPU kernels (first pass, redo) in perturbation_loop's launch scheme: a drop-in `CODE` for the
deep renderer's perturbation loop.

Why float32 works for deltas where it fails for coordinates: a delta keeps 24 bits relative to
its own size, which shrinks with the frame, so the rounding per step stays a fixed fraction of a
pixel at any depth (the reason deep zoomers run float32 mantissas on GeForce cards). What ends it
is float32's range: δc must stay a normal float32 with room for the loop's squares, so the deltas
apply down to a pixel spacing of 2^-100, about 8e-31 (number_type.DELTAS_MIN_SPACING_LOG2,
where the rule that chooses them lives); deeper frames need float32
mantissas with an exponent of their own (not here: extended_loop.py's floatexp is float64).

The pixel's δc is computed in float64 as perturbation_loop computes it (once per pixel) and
rounded to float32; everything the loop does per step is float32 (`LIMITS` keeps the guard's
bookkeeping and the rebasing test within float32's range), so the GPU runs it at float32's rate.
The loop is walk_f32.make_walk32: make_walk's with its integers in 32 bits and an orbit row in
one load, carried to the next step (the same counts); GPU_EXPLORER_F32_DEEP_INT=64 builds
make_walk's own instead, over the unpadded table, for a bench beside it (kernels built so are
not kept in numba's on-disk cache, which keys on the source and would hand the next run the
other loop).
"""
from __future__ import annotations

import math
import operator
import os

import numpy as np
from numba import njit, prange

from ...backend import simulator_enabled
from ...cpu_chunks import WORKERS, claim, enter, leave, reset
from .perturbation_loop import B_R, BW, Z_R0, ZW, delta_c_cpu, flat_tables, make_walk
from .rows_cpu import make_row
from .targets import LoopCode, cpu_jit, cpu_loop_jit, gpu_getattr
from .walk_f32 import MAX_FLAT, make_walk32, pad_table

f32 = np.float32
# "64": make_walk's loop (64-bit integers) instead of make_walk32's, to bench the two
WALK_INT64 = os.environ.get("GPU_EXPLORER_F32_DEEP_INT") == "64"
# numba's disk cache keys this file's kernels by this file alone: they inline step_helpers'
# pixel_offset, so a change there (the log-polar grid and its angle, issue 37) must touch this too


def _make(mul, add, sqrt, load4, jit, loop_jit, limits):
    if WALK_INT64:
        return make_walk(mul, add, sqrt, jit, loop_jit, limits)
    return make_walk32(mul, add, sqrt, load4, jit, loop_jit, limits)


# make_walk's limits for float32: the guard folds its product of |2z|^2 (a factor is at most
# 2^18) into the error bound outside [2^-60, 2^60]; |z|^2 and |δ|^2 below 2^-100 are compared
# scaled by 2^50; the loop's variables start as float32
LIMITS = (2.0 ** -60, 2.0 ** 60, 2.0 ** -100, 2.0 ** 50, np.float32(0.0), np.float32(1.0))


def _round_down(a: np.ndarray) -> np.ndarray:
    """float32 no larger than `a` (a radius must never grow when it is rounded)."""
    r = a.astype(np.float32)
    up = r.astype(np.float64) > a
    r[up] = np.nextafter(r[up], np.float32(0))
    return r


def flat_tables32(orbit, tab, tabe, levels):
    """perturbation_loop.flat_tables' arrays rounded to float32, the radii rounded down, as the
    loop reads them (the table's rows padded to 8 numbers: walk_f32.pad_table; as they are for
    make_walk's loop, GPU_EXPLORER_F32_DEEP_INT=64)."""
    zo, bt = flat_tables(orbit, tab, tabe, levels)
    with np.errstate(over="ignore"):
        zo32 = zo.astype(np.float32)
        bt32 = bt.astype(np.float32)
    zo32[Z_R0::ZW] = _round_down(zo[Z_R0::ZW])
    bt32[B_R::BW] = _round_down(bt[B_R::BW])
    # a step whose coefficients leave float32's range is never taken (radius 0)
    rows = bt32.reshape(-1, BW)
    rows[~np.isfinite(rows).all(axis=1), B_R] = 0.0
    if max(zo32.size, bt32.size) > MAX_FLAT:
        raise ValueError(f"an orbit of {zo32.size // 4} points is too long for the float32 loop's "
                         "32-bit indices")
    return (zo32, bt32) if WALK_INT64 else (zo32, pad_table(bt32))


# ---------------------------------------------------------------- CPU twin

@cpu_jit()
def _mul_cpu(a, b):
    return f32(a) * f32(b)


@cpu_jit()
def _add_cpu(a, b):
    return f32(a) + f32(b)


@cpu_jit()
def _sqrt_cpu(a):
    return f32(math.sqrt(f32(a)))


@cpu_jit()
def _load4_cpu(arr, i):
    return arr[i], arr[i + 1], arr[i + 2], arr[i + 3]


_passes_cpu = _make(_mul_cpu, _add_cpu, _sqrt_cpu, _load4_cpu, cpu_jit(), cpu_loop_jit(),
                    LIMITS)[1]


@njit(inline="always")
def _pixel32(r, c, d0r, d0i, step, cexp, half_w, half_h, loop):
    """rows_cpu's pixel function with float32 deltas; loop = (zo, bt, levels, eps, max_iter)."""
    zo, bt, levels, eps, max_iter = loop
    cdr, cdi = delta_c_cpu(r, c, d0r, d0i, step, cexp, half_w, half_h)
    v, a, b, sk, rb, shift = _passes_cpu(f32(cdr), f32(cdi), zo, bt, levels, eps, max_iter, 0)
    return v, a, b, sk, rb, 1 if shift > 0 else 0


_row32 = make_row(_pixel32)


@njit(parallel=True, cache=not WALK_INT64)
def deep_rows_pert_cpu32(values, stats, row0, nrows, stride, d0r, d0i, step, cexp, half_w,
                         half_h, zo, bt, levels, eps, max_iter, ctl):
    """perturbation_loop.deep_rows_pert_cpu with float32 deltas over flat_tables32's arrays."""
    reset(ctl)               # every call claims its rows from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        k = claim(ctl)
        while k < nrows:
            ran = True
            _row32(values, stats, row0 + (k * stride) % nrows, d0r, d0i, step, cexp, half_w,
                   half_h, (zo, bt, levels, eps, max_iter), max_iter, stats, False)
            k = claim(ctl)
        leave(ctl, clocks, ran)


# ---------------------------------------------------------------- GPU

def _build_gpu():
    """This module's GPU code, made at the first use of one of its names (the module's
    __getattr__): a CPU frame never imports numba.cuda. Module-level names still, so numba's
    disk cache keys the kernels by this file as before."""
    global cuda, load16, make_first, make_redo, make_pixels, FIRST_JIT, gpu_jit, _mul_gpu
    global _add_gpu, _sqrt_gpu, libdevice, _walk_gpu, _passes_gpu, _FIRST32, _narrow
    global _first32, _redo32, deep_kernel_flat32, deep_redo_flat32
    from . import targets
    cuda = targets.cuda
    if cuda is None:  # pragma: no cover - only where numba-cuda is broken
        deep_kernel_flat32 = deep_redo_flat32 = None
        _mul_gpu = _add_gpu = operator.mul
        return
    from ...wide_access import load16
    from .passes_gpu import make_first, make_redo
    from .perturbation_loop import make_pixels
    from .targets import FIRST_JIT, gpu_jit

    if simulator_enabled():
        def _mul_gpu(a, b):
            return f32(a) * f32(b)

        def _add_gpu(a, b):
            return f32(a) + f32(b)

        def _sqrt_gpu(a):
            return f32(math.sqrt(f32(a)))
    else:
        from numba.cuda import libdevice

        @cuda.jit(device=True, inline="always")
        def _mul_gpu(a, b):
            return libdevice.fmul_rn(f32(a), f32(b))

        @cuda.jit(device=True, inline="always")
        def _add_gpu(a, b):
            return libdevice.fadd_rn(f32(a), f32(b))

        @cuda.jit(device=True, inline="always")
        def _sqrt_gpu(a):
            return libdevice.fsqrt_rn(f32(a))

    _walk_gpu, _passes_gpu = _make(_mul_gpu, _add_gpu, _sqrt_gpu, load16, gpu_jit(), None,
                                   LIMITS)
    _FIRST32 = dict(FIRST_JIT, cache=not WALK_INT64)

    @cuda.jit(device=True, inline="always")
    def _narrow(x):
        return f32(x)

    # perturbation_loop's pixel functions with this walk, passes_gpu's passes (numba's disk
    # cache keys a kernel by its own file: an edit of either must touch this file too)
    _first32 = make_first(make_pixels(_walk_gpu, _passes_gpu, _narrow)[0], False)
    _redo32 = make_redo(make_pixels(_walk_gpu, _passes_gpu, _narrow)[1], False)

    @cuda.jit(**_FIRST32)
    def deep_kernel_flat32(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp,
                           half_w, half_h, zo, bt, levels, eps, max_iter, stats, redo, nredo):
        """perturbation_loop.deep_kernel_flat with float32 deltas."""
        _first32(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, half_w, half_h,
                 (zo, bt, levels, eps, max_iter), max_iter, stats, stats, redo, nredo)

    @cuda.jit(cache=not WALK_INT64)
    def deep_redo_flat32(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, zo, bt,
                         levels, eps, max_iter, stats, redo, nredo):
        """perturbation_loop.deep_redo_flat with float32 deltas."""
        _redo32(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h,
                (zo, bt, levels, eps, max_iter), max_iter, stats, stats, redo, nredo)


_GPU_NAMES = frozenset({"load16", "make_first", "make_redo", "make_pixels", "FIRST_JIT",
                        "gpu_jit", "_mul_gpu", "_add_gpu", "_sqrt_gpu", "libdevice", "_walk_gpu",
                        "_passes_gpu", "_FIRST32", "_narrow", "_first32", "_redo32",
                        "deep_kernel_flat32", "deep_redo_flat32"})
__getattr__ = gpu_getattr(globals(), _build_gpu, _GPU_NAMES)

CODE = LoopCode(deep_rows_pert_cpu32, "deep_kernel_flat32", "deep_redo_flat32", module=__name__)
