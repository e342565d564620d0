"""The per-pixel loop of perturbation-format frames, written once (`make_walk`) and compiled for
the CPU (numba, prange over rows: `deep_rows_pert_cpu`) and the GPU (numba.cuda, persistent
threads: `deep_kernel_flat`, `deep_redo_flat`), like escape.py, once per key: float64 deltas
(`CODE`, its overlays' twin `CODE.layers`, the Burning Ship's `SHIP_CODE`), float32 deltas
(`CODE32`), tables without single steps (`KMIN_CODE`).

A pixel c = C + δc follows the reference orbit Z_m of the centre C through its delta δ:
    δ ← (2·Z_m + δ)·δ + δc,   m ← m + 1,   z = Z_m + δ.
Rebasing (Zhuoran, fractalforums.org, 2021): when |z| < |δ| — the pixel passes closer to 0 than
to the reference — or when m reaches the orbit's last point, δ ← z and m ← 0: the pixel carries
on along the start of the same orbit. One reference then serves the whole frame, without glitches.
The bilinear approximation (BLA) replaces l = 2^k steps by δ ← A·δ + B·δc while |δ| < R
(see bla.py); a pixel at m takes the longest aligned step from m whose radius holds its δ. Each
pixel carries a bound on its error and is done again with tighter radii when its count is
doubtful (guard.py). The extended format (extended_loop.py) runs the same method with δ in
floatexp while it is tiny.

Value convention (escape.py's, with its constants): n = the first iteration with |z_n|^2 > BAILOUT2,
value = (n - 1) + f with f = 1 - log2(log|z_n|^2 / log BAILOUT2) clamped to [0, 1); points still
bounded after max_iter iterations get max_iter.

The loop reads its own layout of the orbit and table (flat_build.loop_tables, `flat_tables`),
made for the test "does any BLA step hold δ here", which comes before every step and fails for most
of a pixel's last few hundred iterations, where δ has outgrown every radius:

* The radius of the single step from m (table level 0) sits beside Z_m in one row (`zo`), so the
  test reads the cache line that the perturbation step reads anyway.
* B·δc of a BLA step is a product of doubles. In a valid step |B·δc| stays below the radius of the
  step that follows it (bla.py's merge rule), so B of every entry a pixel can take is a plain
  double, and so is δc in this format (spacings down to 2^-1000): the product of the doubles is the
  product of the mantissas scaled by an exact power of two, so the same number as floatexp gives
  wherever it is a normal double (a product below 2^-1022 could differ in its last subnormal bit).
* Both arrays are read flattened through unsigned indices: no fix-up for negative indices, whose
  integer work bound the GPU kernels of the table-walking loop (docs/PERFORMANCE.md, "Deep zoom";
  the profile in docs/notes/experiments.md).
* Level 0 only (kmin = 0, the renderer's default); a table without it runs `KMIN_CODE`:
  extended_loop.make_pixel's walk compiled for doubles (extended=False), the same counts.

It performs the operations of extended_loop.make_pixel(extended=False) in the same order and with
the same roundings, so counts and stats are the same bit for bit (tests/kernels/test_deep.py). What
is left is latency: a perturbation step is a chain of four dependent operations (docs/
FRACTALSHADES.md, "Cost per operation"; tools/deep_steps.py counts where the steps go). Two pixels
in lockstep (escape.py's trick for float64) were slower: between BLA steps a pixel's runs of
perturbation steps are too short for the interleaving to pay (same place in the docs).

Float32 deltas (`CODE32`): a delta keeps 24 bits relative to its own size, which shrinks with the
frame, so the rounding per step stays a fixed fraction of a pixel at any depth; δc must stay a
normal float32 with room for the loop's squares, down to a spacing of 2^-100 (number_type.py).
δc is rounded from float64, every step is float32 (`LIMITS32`) over flat_build.flat_tables32, in
make_walk's compact walk; GPU_EXPLORER_F32_DEEP_INT=64 builds its 64-bit walk, for a bench (kept
out of numba's disk cache, which keys on the source and would hand the next run the other loop).
"""
from __future__ import annotations

import math
import os

import numpy as np
from numba import njit

from .escape import BAILOUT2
from .formula_twins import named, twin
from ..requests.formulas import BURNING_SHIP, MANDELBROT
from . import extended_loop
from ..tables.bla_ship import B_PAR, B_QI, B_QR, SHIP_BW
from ..tables.flat_build import B_AA, B_AI, B_AR, B_BI, B_BR, B_R, BW, BW32, Z_IM, Z_R0, Z_RE, ZW
from ..tables.flat_build import flat_tables32 as _flat_tables32
from .guard import ERR_TOL2, G_HI, G_LO, LAST_SHIFT, REDO_SHIFT, ROUND_INJ, ROUND_STEP
from .rows_cpu import loop_rows, make_row, rows_of
from .step_helpers import make_delta_c, make_ship_steps, make_step_helpers
from .targets import (CPU_ADD, CPU_ADD32, CPU_MUL, CPU_MUL32, CPU_SQRT, CPU_SQRT32, LoopCode,
                      cpu_jit, cpu_load4, cpu_loop_jit, gpu_getattr, loop_codes)

f32, i32, u32 = np.float32, np.int32, np.uint32
# "64": make_walk's 64-bit loop for float32 deltas instead of the compact one, to bench the two
WALK_INT64 = os.environ.get("GPU_EXPLORER_F32_DEEP_INT") == "64"
# make_walk's limits for float32: the guard folds its product of |2z|^2 (a factor is at most
# 2^18) into the error bound outside [2^-60, 2^60]; |z|^2 and |δ|^2 below 2^-100 are compared
# scaled by 2^50; the loop's variables start as float32
LIMITS32 = (2.0 ** -60, 2.0 ** 60, 2.0 ** -100, 2.0 ** 50, np.float32(0.0), np.float32(1.0))
# numba's disk cache keys this file's kernels by this file alone: they inline step_helpers'
# pixel_offset, so a change there (the log-polar grid and its angle, issue 37) must touch this too


def flat_tables32(orbit, tab, tabe, levels):
    """flat_build.flat_tables32's arrays as this module's float32 loop reads them."""
    return _flat_tables32(orbit, tab, tabe, levels, padded=not WALK_INT64)


def make_walk(mul, add, sqrt, jit, loop_jit=None, limits=None, formula=MANDELBROT, load4=None):
    """(walk, passes) over `flat_tables`' arrays, compiled by `jit` with the target's `mul`, `add`
    and `sqrt` (targets.py): the same operations in the same order on both targets.

    walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj): one pass over δc = cdr + i*cdi with radii
    tested against |δ|·sf and a BLA step's error inj·max(|Re δ|, |Im δ|): value, counts
    (perturbation steps, BLA steps, iterations skipped, rebases), whether doubtful (guard.py).
    passes(cdr, cdi, zo, bt, levels, eps, max_iter, shift): passes from radii 2^shift smaller on:
    while one is doubtful, the next with radii 2^REDO_SHIFT, then 2^LAST_SHIFT smaller, whose
    result stands, as guard.untrusted(value) when still doubtful. Value, summed counts, the last
    pass's shift. `loop_jit` (default `jit`) compiles passes, with walk inlined into it
    (targets.py). `limits`: (G_LO, G_HI, tiny2, scale, zero, one) for a narrower type than
    float64 (`LIMITS32`; zero and one of that type start its variables), default guard.py's and
    step_helpers'. `formula` (formulas.py): the perturbation step's, a constant of the compiled
    code; the Burning Ship's table is bla_ship.py's (rows of SHIP_BW: B has a conjugate part, A a
    parity). Its step's derivative has the Mandelbrot's norm, 2|z| (the folds are isometries), so
    the guard holds.

    `load4(arr, i)` -> arr[i:i + 4] (targets.cpu_load4; wide_access.load16 on the GPU) makes the
    compact walk of float32 deltas, the same values and counts with fewer instructions that are
    not its arithmetic: integers in 32 bits and uint32 indices (a 64-bit add, compare or index
    costs the GPU two instructions, beside a float32 step of about twenty); an orbit row read in
    one 16-byte load, carried from the bailout test to the next step (one load a step, not five),
    A and B in one load from rows padded to BW32 (flat_build.pad_table): a warp's loads at
    different orbit positions gather over as many cache lines. Its last pass's result stands."""
    loop = loop_jit or jit
    g_lo, g_hi, tiny2, scale, zero, one = limits or (G_LO, G_HI, None, None, 0.0, 1.0)
    ship = formula == BURNING_SHIP
    # constants of the compiled code: the compact walk's, or the 64-bit one's (int(): a no-op)
    carry, fetch = load4 is not None, load4 is None
    ix, ex, ux = (i32, u32, u32) if carry else (int, int, np.uint64)
    # bt's row width (bla_ship.py's rows are longer, pad_table's padded) and zo's, as the walk's
    bw = i32(BW32) if carry else SHIP_BW if ship else BW
    zw = i32(ZW)
    # names of the key's own (formula_twins.named): the code of these two depends on it
    sfx = ("_ship" if ship else "") + ("_32" if carry else "")
    step_jit, loop = named(jit, sfx), named(loop, sfx)

    smooth, closer_to_zero = make_step_helpers(mul, add, jit, tiny2, scale)
    ship_im = make_ship_steps(mul, add, jit)[0]

    @step_jit
    def walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj):
        last = ix(zo.shape[0] // ZW - 1)
        nlev = ix(levels.shape[0])
        mi = ix(max_iter)
        if carry:   # row 0 of the orbit, where a rebased pixel starts again
            z0r, z0i, z0rad, _ = load4(zo, ux(0))
            zr = z0r
            zi = z0i
            zrad = z0rad
        dr = zero
        di = zero
        # error bound of z (times sqrt(g2), guard.py)
        er = zero
        g2 = one
        r2 = zero
        m = ix(0)
        n = ix(0)
        steps = ix(0)
        bla = ix(0)
        skipped = ix(0)
        rebases = ix(0)
        while n < mi:
            dms = mul(max(abs(dr), abs(di)), sf)
            if fetch:
                row = ZW * m
                zrad = zo[ux(row + Z_R0)]
            if dms < zrad:
                # the single step holds δ: climb while the longer aligned steps from m still do
                j0 = ix(m - 1)
                best = j0
                length = ix(1)
                k = ix(1)
                while k < nlev and (j0 & ix(ix(ix(1) << k) - 1)) == 0:
                    j = ix(j0 >> k)
                    if j >= ix(levels[k, 1]) or n + ix(ix(1) << k) > mi:
                        break
                    idx = ix(ix(levels[k, 0]) + j)
                    if not dms < bt[ux(bw * idx + B_R)]:
                        break
                    best = idx
                    length = ix(ix(1) << k)
                    k = ix(k + 1)
                e = ex(bw * best)
                if carry:
                    adr, adi, bbr, bbi = load4(bt, e)
                else:
                    adr = bt[ux(e + B_AR)]
                    adi = bt[ux(e + B_AI)]
                    bbr = bt[ux(e + B_BR)]
                    bbi = bt[ux(e + B_BI)]
                bdr = add(mul(bbr, cdr), -mul(bbi, cdi))
                bdi = add(mul(bbr, cdi), mul(bbi, cdr))
                if ship:    # B(δc) = b·δc + b'·conj(δc); A conjugates δ first where odd
                    qr = bt[ux(e + B_QR)]
                    qi = bt[ux(e + B_QI)]
                    bdr = add(bdr, add(mul(qr, cdr), mul(qi, cdi)))
                    bdi = add(bdi, add(mul(qi, cdr), -mul(qr, cdi)))
                    if bt[ux(e + B_PAR)] != 0.0:
                        di = -di
                ndr = add(add(mul(adr, dr), -mul(adi, di)), bdr)
                di = add(add(mul(adr, di), mul(adi, dr)), bdi)
                dr = ndr
                er = add(mul(bt[ux(e + B_AA)], mul(er, sqrt(g2))),
                         mul(inj, max(abs(dr), abs(di))))
                g2 = one
                m = ix(m + length)
                n = ix(n + length)
                bla = ix(bla + 1)
                skipped = ix(skipped + length)
            else:
                g2 = mul(g2, mul(r2, 4.0))
                if g2 > g_hi or g2 < g_lo:
                    er = mul(er, sqrt(g2))
                    g2 = one
                if fetch:
                    zr = zo[ux(row + Z_RE)]
                    zi = zo[ux(row + Z_IM)]
                tr = add(add(zr, zr), dr)
                ti = add(add(zi, zi), di)
                if ship:    # this step's round-off joins the bound (guard.ROUND_STEP)
                    er = add(mul(er, sqrt(g2)), mul(ROUND_STEP, add(
                        mul(2.0, mul(max(abs(tr), abs(ti)), max(abs(dr), abs(di)))),
                        max(abs(cdr), abs(cdi)))))
                    g2 = one
                ndr = add(add(mul(tr, dr), -mul(ti, di)), cdr)
                if ship:
                    di = ship_im(zr, zi, dr, di, cdi)
                else:
                    di = add(add(mul(tr, di), mul(ti, dr)), cdi)
                dr = ndr
                m = ix(m + 1)
                n = ix(n + 1)
                steps = ix(steps + 1)
            if carry:   # row m, carried to the next step
                zr, zi, zrad, _ = load4(zo, ux(zw * m))
                xr = add(zr, dr)
                xi = add(zi, di)
            else:
                row = ZW * m
                xr = add(zo[ux(row + Z_RE)], dr)
                xi = add(zo[ux(row + Z_IM)], di)
            r2 = add(mul(xr, xr), mul(xi, xi))
            if r2 > BAILOUT2:
                er = mul(er, sqrt(g2))
                doubt = not (mul(er, er) <= mul(r2, ERR_TOL2))
                return smooth(r2, n), steps, bla, skipped, rebases, doubt
            if m == last or closer_to_zero(xr, xi, r2, dr, di):
                dr = xr
                di = xi
                m = ix(0)
                if carry:
                    zr = z0r
                    zi = z0i
                    zrad = z0rad
                rebases = ix(rebases + 1)
        er = mul(er, sqrt(g2))
        return float(max_iter), steps, bla, skipped, rebases, not (mul(er, er) <= mul(r2, ERR_TOL2))

    @loop
    def passes(cdr, cdi, zo, bt, levels, eps, max_iter, shift):
        # one call of walk in a loop: the CPU inlines it, and every call would inline the whole
        # loop again (the CPU warm-up's compile time grows with each copy)
        steps = 0
        bla = 0
        skipped = 0
        rebases = 0
        while True:
            sf = math.ldexp(1.0, shift)
            inj = math.ldexp(eps, 1 - shift)
            if fetch and shift >= LAST_SHIFT:   # the last pass's bound counts round-off (guard.py)
                inj = max(inj, ROUND_INJ)
            v, a, b, sk, rb, doubt = walk(cdr, cdi, zo, bt, levels, max_iter, sf, inj)
            steps += a
            bla += b
            skipped += sk
            rebases += rb
            if not doubt or (carry and shift >= LAST_SHIFT):
                return v, steps, bla, skipped, rebases, shift
            if fetch and shift >= LAST_SHIFT:   # unplaced in float64: handed back, exact redo
                return -one - v, steps, bla, skipped, rebases, shift
            shift = REDO_SHIFT if shift < REDO_SHIFT else LAST_SHIFT

    return walk, passes


# ---------------------------------------------------------------- CPU (numba, parallel)

_passes_cpu = make_walk(CPU_MUL, CPU_ADD, CPU_SQRT, cpu_jit(), cpu_loop_jit())[1]
_ship_passes_cpu = make_walk(CPU_MUL, CPU_ADD, CPU_SQRT, cpu_jit(), cpu_loop_jit(),
                             formula=BURNING_SHIP)[1]
_passes_cpu32 = make_walk(CPU_MUL32, CPU_ADD32, CPU_SQRT32, cpu_jit(), cpu_loop_jit(), LIMITS32,
                          load4=None if WALK_INT64 else cpu_load4)[1]
delta_c_cpu = make_delta_c(CPU_MUL, CPU_ADD, cpu_jit())


def _pixel_of(passes, suffix="", narrow=float):
    """rows_cpu's pixel function of this loop with `passes` (a key's, named with `suffix`:
    formula_twins.named), δc made `narrow` first (float: as it is; f32 for CODE32);
    loop = (zo, bt, levels, eps, max_iter)."""
    @named(njit(inline="always"), suffix)
    def pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop):
        zo, bt, levels, eps, max_iter = loop
        cdr, cdi = delta_c_cpu(r, c, d0r, d0i, step, cexp, half_w, half_h)
        v, a, b, sk, rb, shift = passes(narrow(cdr), narrow(cdi), zo, bt, levels, eps, max_iter,
                                        0)
        return v, a, b, sk, rb, 1 if shift > 0 else 0
    return pixel


# row r of the perturbation loop's frame (the layers where `counting`), the Burning Ship's (no
# layers: overlays are the Mandelbrot's), and their parallel rows (rows_cpu.loop_rows)
pert_row, ship_row, deep_rows_pert_cpu, deep_rows_pert_layers_cpu, deep_rows_ship_cpu = loop_rows(
    _pixel_of, (_passes_cpu, _ship_passes_cpu),
    ("deep_rows_pert_cpu", "deep_rows_pert_layers_cpu", "deep_rows_ship_cpu"), __file__)
# float32 deltas over flat_tables32's arrays (not kept in the disk cache at WALK_INT64)
deep_rows_pert_cpu32 = rows_of(make_row(_pixel_of(_passes_cpu32, "_32", f32), "_32"),
                               "deep_rows_pert_cpu32", __file__, cache=not WALK_INT64)


# a table without single steps (kmin > 0, an experiment's setting): extended_loop's walk over
# bla.py's table compiled for doubles, names of its own ("_pert"), cached as extended_loop.py's
# code (which it is)
_kmin_row = make_row(extended_loop._pixel_of(extended_loop.make_pixel(
    CPU_MUL, CPU_ADD, CPU_SQRT, cpu_jit(), False, cpu_loop_jit())[0], "_pert"), "_pert")
deep_rows_shared_cpu = rows_of(_kmin_row, "deep_rows_shared_cpu", extended_loop.__file__)


# ---------------------------------------------------------------- GPU (numba-cuda)

def _build_gpu():
    """This module's GPU code, made at the first use of one of its names (the module's
    __getattr__): a CPU frame never imports numba.cuda. Module-level names still, so numba's
    disk cache keys the kernels by this file as before."""
    global cuda, FIRST_JIT, GPU_ADD, GPU_MUL, GPU_SQRT, gpu_jit, _walk_gpu, _passes_gpu
    global _delta_c_gpu, FLAT_MAX_REGISTERS, _FLAT_JIT, make_first, make_redo, make_pixels
    global _same, _first_pixel, _redo_pixel, _first, _first_layers, _redo, _redo_layers
    global deep_kernel_flat, deep_redo_flat, deep_kernel_flat_layers, deep_redo_flat_layers
    global _ship_first, _ship_redo, deep_kernel_flat_ship, deep_redo_flat_ship
    global _first_sectors, _redo_sectors, deep_kernel_flat_sectors, deep_redo_flat_sectors
    global deep_kernel_pert, deep_redo_pert, _narrow, _walk_gpu32, _passes_gpu32
    global deep_kernel_flat32, deep_redo_flat32
    from . import targets
    cuda = targets.cuda
    if cuda is None:  # pragma: no cover - only where numba-cuda is broken
        deep_kernel_flat = deep_redo_flat = deep_kernel_flat_layers = deep_redo_flat_layers = None
        deep_kernel_flat_ship = deep_redo_flat_ship = deep_kernel_flat32 = deep_redo_flat32 = None
        deep_kernel_flat_sectors = deep_redo_flat_sectors = deep_kernel_pert = deep_redo_pert = None
        return
    from .targets import FIRST_JIT, GPU_ADD, GPU_MUL, GPU_SQRT, gpu_jit

    _walk_gpu, _passes_gpu = make_walk(GPU_MUL, GPU_ADD, GPU_SQRT, gpu_jit())
    _delta_c_gpu = make_delta_c(GPU_MUL, GPU_ADD, gpu_jit())

    # Registers per thread of the first-pass kernel (targets.MAX_REGISTERS says why a cap pays;
    # the caps tried are in docs/notes/experiments.md, "Deep zoom")
    FLAT_MAX_REGISTERS = 56
    _FLAT_JIT = dict(FIRST_JIT)
    if "max_registers" in _FLAT_JIT:
        _FLAT_JIT["max_registers"] = FLAT_MAX_REGISTERS

    from .passes_gpu import make_first, make_redo

    def make_pixels(walk, passes, narrow):
        """The first pass's and the redo's pixel functions (passes_gpu.py) of this loop with the
        walk and passes given, the deltas made `narrow` first (`_narrow`: float32 deltas).
        loop = (zo, bt, levels, eps, max_iter)."""
        @cuda.jit(device=True)
        def first_pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop):
            zo, bt, levels, eps, max_iter = loop
            cdr, cdi = _delta_c_gpu(r, c, d0r, d0i, step, cexp, half_w, half_h)
            return walk(narrow(cdr), narrow(cdi), zo, bt, levels, max_iter, 1.0,
                        math.ldexp(eps, 1))

        @cuda.jit(device=True)
        def redo_pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop):
            zo, bt, levels, eps, max_iter = loop
            cdr, cdi = _delta_c_gpu(r, c, d0r, d0i, step, cexp, half_w, half_h)
            v, a, b, sk, rb, _ = passes(narrow(cdr), narrow(cdi), zo, bt, levels, eps, max_iter,
                                        REDO_SHIFT)
            return v, a, b, sk, rb
        return first_pixel, redo_pixel

    @cuda.jit(device=True, inline="always")
    def _same(x):
        return x

    @cuda.jit(device=True, inline="always")
    def _narrow(x):
        return f32(x)

    _first_pixel, _redo_pixel = make_pixels(_walk_gpu, _passes_gpu, _same)
    _first, _first_layers = make_first(_first_pixel, False), make_first(_first_pixel, True)
    _redo, _redo_layers = make_redo(_redo_pixel, False), make_redo(_redo_pixel, True)

    @cuda.jit(**_FLAT_JIT)
    def deep_kernel_flat(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, half_w,
                         half_h, zo, bt, levels, eps, max_iter, stats, redo, nredo):
        """The first pass of pixels [p0, p1), the doubtful ones listed in redo[:nredo[0]]."""
        _first(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, (half_w, half_h),
               (zo, bt, levels, eps, max_iter), max_iter, stats, stats, redo, nredo)

    @cuda.jit(cache=True)
    def deep_redo_flat(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, zo, bt,
                       levels, eps, max_iter, stats, redo, nredo):
        """The pixels deep_kernel_flat listed in redo[:nredo[0]], passes from REDO_SHIFT on,
        taken from counters[slot]."""
        _redo(values, counters, slot, d0r, d0i, step, cexp, (half_w, half_h),
              (zo, bt, levels, eps, max_iter), max_iter, stats, stats, redo, nredo)

    @cuda.jit(**_FLAT_JIT)
    def deep_kernel_flat_layers(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp,
                                half_w, half_h, zo, bt, levels, eps, max_iter, layers, stats,
                                redo, nredo):
        """deep_kernel_flat, each pixel's first-pass counts into layers."""
        _first_layers(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp,
                      (half_w, half_h), (zo, bt, levels, eps, max_iter), max_iter, layers, stats,
                      redo, nredo)

    @cuda.jit(cache=True)
    def deep_redo_flat_layers(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, zo,
                              bt, levels, eps, max_iter, layers, stats, redo, nredo):
        """deep_redo_flat, its passes' counts added into layers."""
        _redo_layers(values, counters, slot, d0r, d0i, step, cexp, (half_w, half_h),
                     (zo, bt, levels, eps, max_iter), max_iter, layers, stats, redo, nredo)

    # a keyframe's sectors in one first-pass and one redo launch (passes_gpu.py, sectors=True);
    # module globals, as above: numba's disk cache never serves a kernel that closes over a local
    _first_sectors, _redo_sectors = (make_first(_first_pixel, False, True),
                                     make_redo(_redo_pixel, False, True))

    @cuda.jit(**_FLAT_JIT)
    def deep_kernel_flat_sectors(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp,
                                 offs, cols, half_ws, half_hs, zo, bt, levels, eps, max_iter,
                                 stats, redo, nredo):
        """deep_kernel_flat over several log-polar grids packed in values[0, :]."""
        _first_sectors(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp,
                       (offs, cols, half_ws, half_hs), (zo, bt, levels, eps, max_iter), max_iter,
                       stats, stats, redo, nredo)

    @cuda.jit(cache=True)
    def deep_redo_flat_sectors(values, counters, slot, d0r, d0i, step, cexp, offs, cols,
                               half_ws, half_hs, zo, bt, levels, eps, max_iter, stats, redo,
                               nredo):
        """deep_redo_flat over deep_kernel_flat_sectors' redo list."""
        _redo_sectors(values, counters, slot, d0r, d0i, step, cexp, (offs, cols, half_ws, half_hs),
                      (zo, bt, levels, eps, max_iter), max_iter, stats, stats, redo, nredo)

    # the Burning Ship's: twins of the Mandelbrot's kernels around its walk (kernels/twins.py: a
    # global swapped, not a closure, so numba's disk cache serves them)
    ship_first_pixel, ship_redo_pixel = make_pixels(
        *make_walk(GPU_MUL, GPU_ADD, GPU_SQRT, gpu_jit(), formula=BURNING_SHIP), _same)
    _ship_first, _ship_redo = make_first(ship_first_pixel, False), make_redo(ship_redo_pixel, False)
    deep_kernel_flat_ship = cuda.jit(**_FLAT_JIT)(
        twin(deep_kernel_flat.py_func, "deep_kernel_flat_ship", _first=_ship_first))
    deep_redo_flat_ship = cuda.jit(cache=True)(
        twin(deep_redo_flat.py_func, "deep_redo_flat_ship", _redo=_ship_redo))

    # float32 deltas: twins of the Mandelbrot's kernels around the compact walk (WALK_INT64: the
    # 64-bit one, not kept in the disk cache)
    from ...wide_access import load16
    from .targets import GPU_ADD32, GPU_MUL32, GPU_SQRT32
    _walk_gpu32, _passes_gpu32 = make_walk(GPU_MUL32, GPU_ADD32, GPU_SQRT32, gpu_jit(), None,
                                           LIMITS32, load4=None if WALK_INT64 else load16)
    first_px, redo_px = make_pixels(_walk_gpu32, _passes_gpu32, _narrow)
    deep_kernel_flat32 = cuda.jit(**dict(FIRST_JIT, cache=not WALK_INT64))(twin(
        deep_kernel_flat.py_func, "deep_kernel_flat32", _first=make_first(first_px, False)))
    deep_redo_flat32 = cuda.jit(cache=not WALK_INT64)(twin(
        deep_redo_flat.py_func, "deep_redo_flat32", _redo=make_redo(redo_px, False)))

    # the kmin > 0 loop's: twins of extended_loop's kernels over its walk for doubles
    _, first_fn, redo_fn, _ = extended_loop.make_pixel(GPU_MUL, GPU_ADD, GPU_SQRT, gpu_jit(), False)
    first_px, redo_px = extended_loop.make_pixels(first_fn, redo_fn)
    deep_kernel_pert = cuda.jit(**FIRST_JIT)(twin(extended_loop.deep_kernel_ext.py_func,
                                                  "deep_kernel_pert",
                                                  _first=make_first(first_px, False)))
    deep_redo_pert = cuda.jit(cache=True)(twin(
        extended_loop.deep_redo_ext.py_func, "deep_redo_pert", _redo=make_redo(redo_px, False)))


_GPU_NAMES = frozenset({"FIRST_JIT", "GPU_ADD", "GPU_MUL", "GPU_SQRT", "gpu_jit", "_walk_gpu",
                        "_passes_gpu", "_delta_c_gpu", "FLAT_MAX_REGISTERS", "_FLAT_JIT",
                        "make_first", "make_redo", "make_pixels", "_same", "_first_pixel",
                        "_redo_pixel", "_first", "_first_layers", "_redo", "_redo_layers",
                        "deep_kernel_flat", "deep_redo_flat", "deep_kernel_flat_layers",
                        "deep_redo_flat_layers", "_ship_first", "_ship_redo",
                        "deep_kernel_flat_ship", "deep_redo_flat_ship",
                        "_first_sectors", "_redo_sectors", "deep_kernel_flat_sectors",
                        "deep_redo_flat_sectors", "deep_kernel_pert", "deep_redo_pert",
                        "_narrow", "_walk_gpu32", "_passes_gpu32", "deep_kernel_flat32",
                        "deep_redo_flat32"})
__getattr__ = gpu_getattr(globals(), _build_gpu, _GPU_NAMES)

CODE, SHIP_CODE = loop_codes("flat", deep_rows_pert_cpu, deep_rows_pert_layers_cpu,
                             deep_rows_ship_cpu, __name__)
KMIN_CODE = LoopCode(deep_rows_shared_cpu, "deep_kernel_pert", "deep_redo_pert", module=__name__)
CODE32 = LoopCode(deep_rows_pert_cpu32, "deep_kernel_flat32", "deep_redo_flat32", module=__name__)
