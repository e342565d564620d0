"""The per-pixel loop of extended-format frames (below 1e-290), written once (`make_pixel`) and
compiled for the CPU (`deep_rows_ext_cpu`; `deep_rows_ext_layers_cpu` with the overlays' layers)
and the GPU (`deep_kernel_ext`, `deep_redo_ext` and their twins), like escape.py.

The method is perturbation_loop.py's (rebasing, BLA, guard.py's accuracy guard). The number
format: while |δ| < 2^-500 the pixel keeps δ as floatexp (floatexp.py), the orbit and table
likewise; above it δ is a plain double (δc's own float64 value is then far below δ's last digit);
below 2^-510 it returns to floatexp, so only first iterations or passages near 0 pay for it.
The loop reads the orbit and table as bla.py and reference.py lay them out, walking the table's
tree from the longest step its position allows down to the first whose radius holds its δ; B·δc
is multiplied in floatexp (B can exceed float64's range). The Burning Ship's table is
bla_ship.ext_ship_tables' (B' and A's parity after bla.py's columns; its radii keep the signs of
the reference's X and Y), applied as perturbation_loop applies its own. `extended` is a constant of the code:
with extended=False it runs perturbation-format frames (perturbation_loop.KMIN_CODE).
"""
from __future__ import annotations

import math

from numba import njit

from .escape import BAILOUT2
from .formula_twins import named, twin
from ..requests.formulas import BURNING_SHIP, MANDELBROT
from ..numbers.floatexp import make_floatexp
from .guard import ERR_TOL2, G_HI, G_LO, LAST_SHIFT, REDO_SHIFT, ROUND_INJ, ROUND_STEP
from ..tables.bla_ship import E_Q, T_PAR, T_QI, T_QR
from ..tables.layout import E_A, E_B, E_R, T_AD, T_ADI, T_ADR, T_AM, T_AR, T_AI, T_BI, T_BR, T_RD, T_RM
from .rows_cpu import loop_rows
from ..numbers.orbit_format import EZERO
from .step_helpers import make_offset, make_ship_steps, make_step_helpers
from .targets import (CPU_ADD, CPU_MUL, CPU_SQRT, cpu_jit, cpu_loop_jit, gpu_getattr,
                      loop_codes)

# δ leaves floatexp above 2^UP_EXP and returns to it below 2^DOWN_EXP (max-norm)
UP_EXP = -500
DOWN = 2.0 ** -510
# the Burning Ship's: its mini-ships' inner pixels keep |δ| near 2^-500 for thousands of
# iterations, where floatexp steps cost it most; a double holds δ down to 2^-900 with 120 bits
# above the subnormals, the terms it drops there (δ², Z·δ for a tiny Z) being far below δc's
SHIP_UP_EXP = -900
SHIP_DOWN = 2.0 ** -910
# numba's disk cache keys this file's kernels by this file alone: they inline step_helpers'
# pixel_offset, so a change there (the log-polar grid and its angle, issue 37) must touch this too


def make_pixel(mul, add, sqrt, jit, extended, loop_jit=None, formula=MANDELBROT):
    """(pixel, first_pass, redo, one_pass) compiled by `jit` with the target's `mul`, `add` and
    `sqrt` (targets.py), for one number format: `extended` is a constant of the compiled code, so
    compiled with extended=False (perturbation_loop.KMIN_CODE) it has none of the floatexp paths.
    `loop_jit` (default `jit`) compiles the functions that hold or call the loop (targets.py).
    `formula` (formulas.py): the perturbation step's, a constant of the compiled code
    (perturbation_loop.make_walk says what changes for the Burning Ship)."""
    ship = formula == BURNING_SHIP
    # names of their own (formula_twins.named) where the code differs from the app's extended
    # Mandelbrot loop: another formula's, and the perturbation format's (KMIN_CODE)
    loop = named(loop_jit or jit, ("_ship" if ship else "") + ("" if extended else "_pert"))
    fe_norm, fe_add, fe_mul, fe_to_double, fe_norm2_lt = make_floatexp(mul, add, jit)
    ship_im, fe_ship_im = make_ship_steps(mul, add, jit)
    up_exp, down = (SHIP_UP_EXP, SHIP_DOWN) if ship else (UP_EXP, DOWN)
    smooth, closer_to_zero = make_step_helpers(mul, add, jit)

    @jit
    def doubtful(er, de, fe, r2):
        """Whether the error bound reached |z| (er in units of 2**de while δ is floatexp)."""
        e = er
        if fe:
            e, _ = fe_to_double(er, 0.0, de)
        return not (mul(e, e) <= mul(r2, ERR_TOL2))

    @loop
    def walk(cnr, cni, cne, cdr, cdi, orbit, oexp, tab, tabe, levels, kmin, max_iter, eps, shift):
        """One pass over the pixel δc = (cnr + i*cni) * 2**cne (cdr + i*cdi as doubles), its BLA
        radii tested against |δ|·2^shift: smooth escape value, counts
        (perturbation steps, BLA steps, iterations skipped by BLA, rebases), whether doubtful."""
        last = orbit.shape[0] - 1
        nlev = levels.shape[0]
        top = kmin + nlev - 1
        low_mask = (1 << kmin) - 1
        sf = math.ldexp(1.0, shift)
        # a BLA step's error: up to ε·2^-shift of |δ| <= sqrt(2)·max(|Re δ|, |Im δ|); 2 for sqrt(2)
        inj = math.ldexp(eps, 1 - shift)
        if shift >= LAST_SHIFT:     # the last pass's bound counts round-off (guard.py)
            inj = max(inj, ROUND_INJ)
        fe = extended
        dr = 0.0
        di = 0.0
        de = EZERO
        # error bound of z: absolute while δ is a double (times sqrt(g2)), in units of 2**de while it
        # is floatexp (g2 = 1 then)
        er = 0.0
        g2 = 1.0
        r2 = 0.0
        # z_m as floatexp, for the bound's growth while δ is floatexp
        zr = 0.0
        zi = 0.0
        ze = EZERO
        m = 0
        n = 0
        steps = 0
        bla = 0
        skipped = 0
        rebases = 0
        while n < max_iter:
            took = False
            if nlev > 0 and m > 0 and ((m - 1) & low_mask) == 0:
                # Radii shrink as steps merge (R_k <= R_{k-1} at one start), so the shortest step
                # decides whether any applies: one table read where none does (the common case once
                # a pixel has left the reference), then climb while the longer steps still hold δ.
                j0 = m - 1
                dm = max(abs(dr), abs(di))
                dms = mul(dm, sf)
                dse = de + shift
                best = -1
                length = 0
                k = kmin
                while True:
                    li = k - kmin
                    j = j0 >> k
                    if j >= levels[li, 1] or n + (1 << k) > max_iter:
                        break
                    idx = levels[li, 0] + j
                    if fe:
                        re_ = tabe[idx, E_R]
                        ok = dse < re_ or (dse == re_ and dm < tab[idx, T_RM])
                    else:
                        ok = dms < tab[idx, T_RD]
                    if not ok:
                        break
                    best = idx
                    length = 1 << k
                    k += 1
                    if k > top or ((j0 >> k) << k) != j0:
                        break
                if best >= 0:
                    idx = best
                    br, bi, be = fe_mul(tab[idx, T_BR], tab[idx, T_BI], tabe[idx, E_B],
                                        cnr, cni, cne)
                    if ship:    # B(δc) = b·δc + b'·conj(δc); A conjugates δ first where odd
                        qr, qi, qe = fe_mul(tab[idx, T_QR], tab[idx, T_QI], tabe[idx, E_Q],
                                            cnr, -cni, cne)
                        br, bi, be = fe_add(br, bi, be, qr, qi, qe)
                        if tab[idx, T_PAR] != 0.0:
                            di = -di
                    if fe:
                        d0 = de
                        ar, ai, ae = fe_mul(tab[idx, T_AR], tab[idx, T_AI], tabe[idx, E_A],
                                            dr, di, de)
                        dr, di, de = fe_add(ar, ai, ae, br, bi, be)
                        carried, _ = fe_to_double(mul(tab[idx, T_AM], er), 0.0,
                                                  tabe[idx, E_A] + d0 - de)
                        er = add(carried, mul(inj, max(abs(dr), abs(di))))
                    else:
                        bdr, bdi = fe_to_double(br, bi, be)
                        adr = tab[idx, T_ADR]
                        adi = tab[idx, T_ADI]
                        ndr = add(add(mul(adr, dr), -mul(adi, di)), bdr)
                        di = add(add(mul(adr, di), mul(adi, dr)), bdi)
                        dr = ndr
                        er = add(mul(tab[idx, T_AD], mul(er, sqrt(g2))),
                                 mul(inj, max(abs(dr), abs(di))))
                        g2 = 1.0
                    m += length
                    n += length
                    bla += 1
                    skipped += length
                    took = True
            if not took:
                if fe:
                    # δ ← (2 Z_m + δ) δ + δc in floatexp; the bound grows by |2 z_m|
                    d0 = de
                    tr, ti, te = fe_add(orbit[m, 2], orbit[m, 3], oexp[m] + 1, dr, di, de)
                    ur, ui, ue = fe_mul(tr, ti, te, dr, di, de)
                    if ship:    # the real part as above; the imaginary one folded
                        # this step's round-off (guard.ROUND_STEP): its terms' size, 2|t||δ|
                        rnd = mul(2.0, mul(max(abs(tr), abs(ti)), max(abs(dr), abs(di))))
                        qm, qe = fe_ship_im(orbit[m, 2], orbit[m, 3], oexp[m], dr, di, de, cni,
                                            cne)
                        pr, _, pe = fe_add(ur, 0.0, ue, cnr, 0.0, cne)
                        dr, di, de = fe_add(pr, 0.0, pe, 0.0, qm, qe)
                    else:
                        dr, di, de = fe_add(ur, ui, ue, cnr, cni, cne)
                    grown = mul(er, sqrt(mul(add(mul(zr, zr), mul(zi, zi)), 4.0)))
                    er, _ = fe_to_double(grown, 0.0, ze + d0 - de)
                    if ship:    # ... and |δc|, in units of 2^de (nothing from a δ of 0)
                        rnd = add(fe_to_double(rnd, 0.0, te + d0 - de)[0],
                                  fe_to_double(max(abs(cnr), abs(cni)), 0.0, cne - de)[0])
                        er = add(er, mul(ROUND_STEP, rnd))
                else:
                    g2 = mul(g2, mul(r2, 4.0))
                    if g2 > G_HI or g2 < G_LO:
                        er = mul(er, sqrt(g2))
                        g2 = 1.0
                    tr = add(add(orbit[m, 0], orbit[m, 0]), dr)
                    ti = add(add(orbit[m, 1], orbit[m, 1]), di)
                    if ship:    # this step's round-off joins the bound (guard.ROUND_STEP)
                        er = add(mul(er, sqrt(g2)), mul(ROUND_STEP, add(
                            mul(2.0, mul(max(abs(tr), abs(ti)), max(abs(dr), abs(di)))),
                            max(abs(cdr), abs(cdi)))))
                        g2 = 1.0
                    ndr = add(add(mul(tr, dr), -mul(ti, di)), cdr)
                    if ship:
                        di = ship_im(orbit[m, 0], orbit[m, 1], dr, di, cdi)
                    else:
                        di = add(add(mul(tr, di), mul(ti, dr)), cdi)
                    dr = ndr
                m += 1
                n += 1
                steps += 1
            if fe:
                zr, zi, ze = fe_add(orbit[m, 2], orbit[m, 3], oexp[m], dr, di, de)
                xr, xi = fe_to_double(zr, zi, ze)
                r2 = add(mul(xr, xr), mul(xi, xi))
                if r2 > BAILOUT2:
                    er = mul(er, sqrt(g2))
                    return smooth(r2, n), steps, bla, skipped, rebases, doubtful(er, de, fe, r2)
                if m == last or fe_norm2_lt(zr, zi, ze, dr, di, de):
                    er, _ = fe_to_double(er, 0.0, de - ze)
                    dr, di, de = zr, zi, ze
                    m = 0
                    rebases += 1
                if de > up_exp:
                    dr, di = fe_to_double(dr, di, de)
                    er, _ = fe_to_double(er, 0.0, de)
                    fe = False
            else:
                xr = add(orbit[m, 0], dr)
                xi = add(orbit[m, 1], di)
                r2 = add(mul(xr, xr), mul(xi, xi))
                if r2 > BAILOUT2:
                    er = mul(er, sqrt(g2))
                    return smooth(r2, n), steps, bla, skipped, rebases, doubtful(er, de, fe, r2)
                if m == last or closer_to_zero(xr, xi, r2, dr, di):
                    dr = xr
                    di = xi
                    m = 0
                    rebases += 1
                if extended and max(abs(dr), abs(di)) < down:
                    dr, di, de = fe_norm(dr, di, 0)
                    er, _ = fe_to_double(mul(er, sqrt(g2)), 0.0, -de)
                    g2 = 1.0
                    zr, zi, ze = fe_norm(xr, xi, 0)
                    fe = True
        er = mul(er, sqrt(g2))
        return float(max_iter), steps, bla, skipped, rebases, doubtful(er, de, fe, r2)

    @loop
    def one_pass(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, shift):
        """One pass over the pixel δc = (cmr + i*cmi) * 2**cexp with radii tested against
        |δ|·2^shift: value, counts, whether doubtful."""
        cnr, cni, cne = fe_norm(cmr, cmi, cexp)
        cdr, cdi = fe_to_double(cnr, cni, cne)
        return walk(cnr, cni, cne, cdr, cdi, orbit, oexp, tab, tabe, levels, kmin, max_iter, eps,
                    shift)

    @loop
    def passes(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, shift):
        """Passes from radii 2^shift smaller on: while one is doubtful, the next with radii
        2^REDO_SHIFT, then 2^LAST_SHIFT smaller, whose result stands. Value, summed counts, and
        the last pass's shift. One call of the pass in a loop: the CPU inlines `pixel`, and each
        call of the pass would inline the whole of it again (the CPU warm-up's compile time grows
        with each copy)."""
        steps = 0
        bla = 0
        skipped = 0
        rebases = 0
        while True:
            v, a, b, sk, rb, doubt = one_pass(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels,
                                              kmin, eps, max_iter, shift)
            steps += a
            bla += b
            skipped += sk
            rebases += rb
            if not doubt:
                return v, steps, bla, skipped, rebases, shift
            if shift >= LAST_SHIFT:     # float64 cannot place it: handed back for an exact redo
                return -1.0 - v, steps, bla, skipped, rebases, shift
            shift = REDO_SHIFT if shift < REDO_SHIFT else LAST_SHIFT

    @loop
    def first_pass(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter):
        """`pixel`'s first pass alone: value, counts, and whether the pixel must be redone."""
        return one_pass(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, 0)

    @loop
    def redo(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter):
        """`pixel`'s later passes for a pixel whose first pass was doubtful: value and counts."""
        v, steps, bla, skipped, rebases, _ = passes(cmr, cmi, cexp, orbit, oexp, tab, tabe,
                                                    levels, kmin, eps, max_iter, REDO_SHIFT)
        return v, steps, bla, skipped, rebases

    @loop
    def pixel(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter):
        """Smooth escape value of the pixel δc = (cmr + i*cmi) * 2**cexp, and its counts
        (perturbation steps, BLA steps, iterations skipped by BLA, rebases, 1 if done again):
        with the table's radii; if doubtful, again with radii 2^REDO_SHIFT smaller; if still
        doubtful, again with radii 2^LAST_SHIFT smaller."""
        # int(0), not 0: a literal 0 has the CPU compile the whole pass twice (for the literal,
        # then for the int64 that later passes take)
        v, steps, bla, skipped, rebases, shift = passes(cmr, cmi, cexp, orbit, oexp, tab, tabe,
                                                        levels, kmin, eps, max_iter, int(0))
        return v, steps, bla, skipped, rebases, 1 if shift > 0 else 0

    return pixel, first_pass, redo, one_pass


# ---------------------------------------------------------------- CPU (numba, parallel)

_pixel_ext_cpu = make_pixel(CPU_MUL, CPU_ADD, CPU_SQRT, cpu_jit(), True, cpu_loop_jit())[0]
_pixel_ship_cpu = make_pixel(CPU_MUL, CPU_ADD, CPU_SQRT, cpu_jit(), True, cpu_loop_jit(),
                             formula=BURNING_SHIP)[0]
offset_cpu = make_offset(CPU_MUL, CPU_ADD, cpu_jit())


def _pixel_of(pixel_fn, suffix=""):
    """rows_cpu's pixel function of this loop with `pixel_fn` (a formula's, named with `suffix`:
    targets.named); loop = (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter)."""
    @named(njit(inline="always"), suffix)
    def pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop):
        orbit, oexp, tab, tabe, levels, kmin, eps, max_iter = loop
        cmr, cmi = offset_cpu(r, c, d0r, d0i, step, half_w, half_h)
        return pixel_fn(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter)
    return pixel


# row r of the frame (the layers where `counting`), the Ship's (no layers), and their parallel
# rows (rows_cpu.loop_rows)
ext_row, ship_row, deep_rows_ext_cpu, deep_rows_ext_layers_cpu, deep_rows_ship_ext_cpu = loop_rows(
    _pixel_of, (_pixel_ext_cpu, _pixel_ship_cpu),
    ("deep_rows_ext_cpu", "deep_rows_ext_layers_cpu", "deep_rows_ship_ext_cpu"), __file__)


# ---------------------------------------------------------------- GPU (numba-cuda)

def _build_gpu():
    """This module's GPU code, made at the first use of one of its names (the module's
    __getattr__): a CPU frame never imports numba.cuda. Module-level names, so numba's disk
    cache keys the kernels by this file."""
    global cuda, FIRST_JIT, GPU_ADD, GPU_MUL, GPU_SQRT, gpu_jit, offset_gpu
    global _first_ext_gpu, _redo_ext_gpu, make_first, make_redo, make_pixels, _first_pixel
    global _redo_pixel, _first, _first_layers, _redo, _redo_layers, deep_kernel_ext
    global deep_redo_ext, deep_kernel_ext_layers, deep_redo_ext_layers
    global _ship_first, _ship_redo, deep_kernel_ext_ship, deep_redo_ext_ship
    global _first_sectors, _redo_sectors, deep_kernel_ext_sectors, deep_redo_ext_sectors
    from . import targets
    cuda = targets.cuda
    if cuda is None:  # pragma: no cover - only where numba-cuda is broken
        offset_gpu = deep_kernel_ext = deep_redo_ext = deep_kernel_ext_layers = None
        deep_redo_ext_layers = deep_kernel_ext_ship = deep_redo_ext_ship = None
        deep_kernel_ext_sectors = deep_redo_ext_sectors = None
        return
    from .targets import FIRST_JIT, GPU_ADD, GPU_MUL, GPU_SQRT, gpu_jit

    offset_gpu = make_offset(GPU_MUL, GPU_ADD, gpu_jit())
    _, _first_ext_gpu, _redo_ext_gpu, _ = make_pixel(GPU_MUL, GPU_ADD, GPU_SQRT, gpu_jit(), True)

    from .passes_gpu import make_first, make_redo

    def make_pixels(first_fn, redo_fn):
        """The first pass's and the redo's pixel functions (passes_gpu.py) with these per-pixel
        functions (this loop's, perturbation_loop.KMIN_CODE's); loop = (orbit, oexp, tab, tabe,
        levels, kmin, eps, max_iter)."""
        @cuda.jit(device=True)
        def first_pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop):
            orbit, oexp, tab, tabe, levels, kmin, eps, max_iter = loop
            cmr, cmi = offset_gpu(r, c, d0r, d0i, step, half_w, half_h)
            return first_fn(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter)

        @cuda.jit(device=True)
        def redo_pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop):
            orbit, oexp, tab, tabe, levels, kmin, eps, max_iter = loop
            cmr, cmi = offset_gpu(r, c, d0r, d0i, step, half_w, half_h)
            return redo_fn(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter)
        return first_pixel, redo_pixel

    # the launch scheme is gpu_pixels.py's, the passes passes_gpu.py's
    _first_pixel, _redo_pixel = make_pixels(_first_ext_gpu, _redo_ext_gpu)
    _first, _first_layers = make_first(_first_pixel, False), make_first(_first_pixel, True)
    _redo, _redo_layers = make_redo(_redo_pixel, False), make_redo(_redo_pixel, True)

    @cuda.jit(**FIRST_JIT)
    def deep_kernel_ext(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, half_w,
                        half_h, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, stats,
                        redo, nredo):
        """The first pass of pixels [p0, p1), the doubtful ones listed in redo[:nredo[0]]."""
        _first(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, (half_w, half_h),
               (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter), max_iter, stats, stats,
               redo, nredo)

    @cuda.jit(cache=True)
    def deep_redo_ext(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, orbit, oexp,
                      tab, tabe, levels, kmin, eps, max_iter, stats, redo, nredo):
        """The pixels deep_kernel_ext listed in redo[:nredo[0]], taken from counters[slot]."""
        _redo(values, counters, slot, d0r, d0i, step, cexp, (half_w, half_h),
              (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter), max_iter, stats, stats,
              redo, nredo)

    @cuda.jit(**FIRST_JIT)
    def deep_kernel_ext_layers(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp,
                               half_w, half_h, orbit, oexp, tab, tabe, levels, kmin, eps,
                               max_iter, layers, stats, redo, nredo):
        """deep_kernel_ext, each pixel's first-pass counts into layers."""
        _first_layers(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp,
                      (half_w, half_h), (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter),
                      max_iter, layers, stats, redo, nredo)

    @cuda.jit(cache=True)
    def deep_redo_ext_layers(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, orbit,
                             oexp, tab, tabe, levels, kmin, eps, max_iter, layers, stats, redo,
                             nredo):
        """deep_redo_ext, its passes' counts added into layers."""
        _redo_layers(values, counters, slot, d0r, d0i, step, cexp, (half_w, half_h),
                     (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter), max_iter, layers,
                     stats, redo, nredo)

    # a keyframe's sectors in one first-pass and one redo launch (passes_gpu.py, sectors=True);
    # module globals, as above: numba's disk cache never serves a kernel that closes over a local
    _first_sectors, _redo_sectors = (make_first(_first_pixel, False, True),
                                     make_redo(_redo_pixel, False, True))

    @cuda.jit(**FIRST_JIT)
    def deep_kernel_ext_sectors(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp,
                                offs, cols, half_ws, half_hs, orbit, oexp, tab, tabe, levels,
                                kmin, eps, max_iter, stats, redo, nredo):
        """deep_kernel_ext over several log-polar grids packed in values[0, :]."""
        _first_sectors(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp,
                       (offs, cols, half_ws, half_hs),
                       (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter), max_iter, stats,
                       stats, redo, nredo)

    @cuda.jit(cache=True)
    def deep_redo_ext_sectors(values, counters, slot, d0r, d0i, step, cexp, offs, cols, half_ws,
                              half_hs, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter,
                              stats, redo, nredo):
        """deep_redo_ext over deep_kernel_ext_sectors' redo list."""
        _redo_sectors(values, counters, slot, d0r, d0i, step, cexp, (offs, cols, half_ws, half_hs),
                      (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter), max_iter, stats,
                      stats, redo, nredo)

    # the Burning Ship's: twins of the Mandelbrot's kernels around its loop (kernels/twins.py: a
    # global swapped, not a closure, so numba's disk cache serves them)
    _, ship_first_fn, ship_redo_fn, _ = make_pixel(GPU_MUL, GPU_ADD, GPU_SQRT, gpu_jit(), True,
                                                   formula=BURNING_SHIP)
    ship_first_pixel, ship_redo_pixel = make_pixels(ship_first_fn, ship_redo_fn)
    _ship_first, _ship_redo = make_first(ship_first_pixel, False), make_redo(ship_redo_pixel, False)
    deep_kernel_ext_ship = cuda.jit(**FIRST_JIT)(
        twin(deep_kernel_ext.py_func, "deep_kernel_ext_ship", _first=_ship_first))
    deep_redo_ext_ship = cuda.jit(cache=True)(
        twin(deep_redo_ext.py_func, "deep_redo_ext_ship", _redo=_ship_redo))


_GPU_NAMES = frozenset({"FIRST_JIT", "GPU_ADD", "GPU_MUL", "GPU_SQRT", "gpu_jit", "offset_gpu",
                        "_first_ext_gpu", "_redo_ext_gpu", "make_first", "make_redo",
                        "make_pixels", "_first_pixel", "_redo_pixel", "_first", "_first_layers",
                        "_redo", "_redo_layers", "deep_kernel_ext", "deep_redo_ext",
                        "deep_kernel_ext_layers", "deep_redo_ext_layers", "_ship_first",
                        "_ship_redo", "deep_kernel_ext_ship", "deep_redo_ext_ship",
                        "_first_sectors", "_redo_sectors", "deep_kernel_ext_sectors",
                        "deep_redo_ext_sectors"})
__getattr__ = gpu_getattr(globals(), _build_gpu, _GPU_NAMES)

CODE, SHIP_CODE = loop_codes("ext", deep_rows_ext_cpu, deep_rows_ext_layers_cpu,
                             deep_rows_ship_ext_cpu, __name__)
