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
The loop is `make_walk32` (below): make_walk's with its integers in 32 bits and an orbit row in
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
from numba import njit

from ...backend import simulator_enabled
from ..escape import BAILOUT2
from .guard import ERR_TOL2, LAST_SHIFT, REDO_SHIFT
from .perturbation_loop import (B_AA, B_AI, B_AR, B_BI, B_BR, B_R, BW, Z_IM, Z_R0, Z_RE, ZW,
                                delta_c_cpu, flat_tables, make_walk)
from .rows_cpu import make_row, rows_of
from .step_helpers import make_step_helpers
from .targets import LoopCode, cpu_jit, cpu_loop_jit, gpu_getattr

f32 = np.float32
i32 = np.int32
u32 = np.uint32
# the largest flattened array make_walk32's uint32 indices reach
MAX_FLAT = 2 ** 32 - 1
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
    loop reads them (the table's rows padded to 8 numbers: `pad_table`; as they are for
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


# ---------------------------------------------------------------- the walk (32-bit integers)
# make_walk32's table rows: perturbation_loop's six numbers, padded to eight so that a row starts
# on a 16-byte boundary and A, B come in one 16-byte load (`pad_table`); the orbit's rows of four
# (Re Z, Im Z, radius of the single step, unused) are 16 bytes already
BW32 = 8
assert (B_AR, B_AI, B_BR, B_BI) == (0, 1, 2, 3) and (Z_RE, Z_IM, Z_R0) == (0, 1, 2) and ZW == 4


def pad_table(bt32: np.ndarray) -> np.ndarray:
    """flat float32 table rows of BW numbers as make_walk32 reads them: rows of BW32."""
    rows = bt32.reshape(-1, BW)
    out = np.zeros((rows.shape[0], BW32), np.float32)
    out[:, :BW] = rows
    return out.reshape(-1)


def make_walk32(mul, add, sqrt, load4, jit, loop_jit, limits):
    """(walk, passes) as perturbation_loop.make_walk(mul, add, sqrt, jit, loop_jit, limits), the
    integers in 32 bits, over zo's rows and `pad_table`'s; load4(arr, i): arr[i:i + 4] as a tuple
    (one 16-byte load on the GPU: kernels/wide_access.load16). The same float32 operations in the
    same order (the same values and counts), fewer instructions that are not its arithmetic:

    - the orbit position, the iteration count, the table indices and the step counters in int32,
      the arrays read through uint32 indices: a 64-bit add, compare or index costs the GPU two
      instructions, beside a float32 step of about twenty;
    - an orbit row (Z_m and the single step's radius) read with one 16-byte load, carried from the
      load that tests the bailout to the next step: a perturbation step makes one load where
      make_walk's makes five; a BLA step reads A and B with one 16-byte load (`pad_table`).

    Each load of a warp whose pixels sit at different orbit positions is a gather over as many
    cache lines, so the loads, more than the float32 arithmetic, are what a step waits on. The
    arrays fit 32-bit indices wherever float32 deltas apply (`flat_tables32` refuses longer
    ones)."""
    loop = loop_jit or jit
    zw, bw = i32(ZW), i32(BW32)
    g_lo, g_hi, tiny2, scale, zero, one = limits
    smooth, closer_to_zero = make_step_helpers(mul, add, jit, tiny2, scale)

    @jit
    def walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj):
        last = i32(zo.shape[0] // ZW - 1)
        nlev = i32(levels.shape[0])
        mi = i32(max_iter)
        # row m of the orbit (Z_m, the single step's radius), carried from the load that tests
        # the bailout to the next step; row 0 is where a rebased pixel starts again
        z0r, z0i, z0rad, _ = load4(zo, u32(0))
        zr = z0r
        zi = z0i
        zrad = z0rad
        dr = zero
        di = zero
        er = zero
        g2 = one
        r2 = zero
        m = i32(0)
        n = i32(0)
        steps = i32(0)
        bla = i32(0)
        skipped = i32(0)
        rebases = i32(0)
        while n < mi:
            dms = mul(max(abs(dr), abs(di)), sf)
            if dms < zrad:
                j0 = i32(m - 1)
                best = j0
                length = i32(1)
                k = i32(1)
                while k < nlev and (j0 & i32(i32(i32(1) << k) - 1)) == 0:
                    j = i32(j0 >> k)
                    if j >= i32(levels[k, 1]) or n + i32(i32(1) << k) > mi:
                        break
                    idx = i32(i32(levels[k, 0]) + j)
                    if not dms < bt[u32(bw * idx + B_R)]:
                        break
                    best = idx
                    length = i32(i32(1) << k)
                    k = i32(k + 1)
                e = u32(bw * best)
                adr, adi, bbr, bbi = load4(bt, e)
                bdr = add(mul(bbr, cdr), -mul(bbi, cdi))
                bdi = add(mul(bbr, cdi), mul(bbi, cdr))
                ndr = add(add(mul(adr, dr), -mul(adi, di)), bdr)
                di = add(add(mul(adr, di), mul(adi, dr)), bdi)
                dr = ndr
                er = add(mul(bt[u32(e + B_AA)], mul(er, sqrt(g2))),
                         mul(inj, max(abs(dr), abs(di))))
                g2 = one
                m = i32(m + length)
                n = i32(n + length)
                bla = i32(bla + 1)
                skipped = i32(skipped + length)
            else:
                g2 = mul(g2, mul(r2, 4.0))
                if g2 > g_hi or g2 < g_lo:
                    er = mul(er, sqrt(g2))
                    g2 = one
                tr = add(add(zr, zr), dr)
                ti = add(add(zi, zi), di)
                ndr = add(add(mul(tr, dr), -mul(ti, di)), cdr)
                di = add(add(mul(tr, di), mul(ti, dr)), cdi)
                dr = ndr
                m = i32(m + 1)
                n = i32(n + 1)
                steps = i32(steps + 1)
            zr, zi, zrad, _ = load4(zo, u32(zw * m))
            xr = add(zr, dr)
            xi = add(zi, di)
            r2 = add(mul(xr, xr), mul(xi, xi))
            if r2 > BAILOUT2:
                er = mul(er, sqrt(g2))
                doubt = not (mul(er, er) <= mul(r2, ERR_TOL2))
                return smooth(r2, n), steps, bla, skipped, rebases, doubt
            if m == last or closer_to_zero(xr, xi, r2, dr, di):
                dr = xr
                di = xi
                m = i32(0)
                zr = z0r
                zi = z0i
                zrad = z0rad
                rebases = i32(rebases + 1)
        er = mul(er, sqrt(g2))
        return float(max_iter), steps, bla, skipped, rebases, not (mul(er, er) <= mul(r2, ERR_TOL2))

    @loop
    def passes(cdr, cdi, zo, bt, levels, eps, max_iter, shift):
        steps = 0
        bla = 0
        skipped = 0
        rebases = 0
        while True:
            sf = math.ldexp(1.0, shift)
            inj = math.ldexp(eps, 1 - shift)
            v, a, b, sk, rb, doubt = walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj)
            steps += a
            bla += b
            skipped += sk
            rebases += rb
            if not doubt or shift >= LAST_SHIFT:
                return v, steps, bla, skipped, rebases, shift
            shift = REDO_SHIFT if shift < REDO_SHIFT else LAST_SHIFT

    return walk, passes


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


# perturbation_loop.deep_rows_pert_cpu with float32 deltas over flat_tables32's arrays
deep_rows_pert_cpu32 = rows_of(_row32, "deep_rows_pert_cpu32", __file__, cache=not WALK_INT64)


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
