"""The Mandelbrot escape-time arithmetic, its CPU twin and the GPU launches the app runs.

Both targets are built from ONE description of the per-pixel arithmetic (`_make_escape`),
instantiated with the multiply and add each target must use; its `zstep` is the one place a
formula is written (z^2 + c; Burning Ship's, formulas.py, the same with |2xy| for 2xy and no
cardioid/bulb shortcut): the CPU twin, every GPU launch and the float32 loops call it. The formula
is a choice of the build, never of a loop: each formula's kernels are functions of their own
(Burning Ship's twins of Mandelbrot's code, formula_twins.py; float64 only), so the Mandelbrot
kernels compile exactly as they did before there was a second formula.

* CPU: plain IEEE `a * b` and `a + b`. numba's CPU backend never contracts them into FMAs
  (it emits no `contract` flag without fastmath).
* GPU: libdevice's `dmul_rn` / `dadd_rn`. NVVM contracts a plain `x * x - y * y + c` into fused
  multiply-adds by default (numba-cuda passes no `-fma=0`), which rounds differently from the CPU
  and changes escape counts near the boundary. PTX arithmetic with an explicit rounding mode is
  never fused, so the GPU performs exactly the CPU's operations, in the same order, and both give
  bit-identical iterates and therefore identical escape counts. Only `log`/`log2` in the smooth
  fraction may differ in the last bit (libdevice vs libm), which moves the smooth value by ~1e-16.
* CUDA simulator: plain Python operators, i.e. the CPU's arithmetic.

The app's GPU frames run escape_warp.py's kernel (whole warps refill their idle lanes together),
whose escaped pixels keep |z|^2 and n until `finish_kernel` makes the smooth value, so the
logarithms stay out of the divergent loop; frames too long for one launch run
`escape_slice_kernel`, a slice of iterations at a time. Those two, and the arithmetic compiled
for the GPU, are in escape_gpu.py: a CPU frame never imports numba.cuda. The launches only
benches select (one thread per pixel, per-thread persistent, sorted) are in escape_variants.py.

The CPU twin iterates two neighbouring pixels in lockstep (`escape_pair`): one pixel's recurrence
is a chain of dependent operations that leaves a core waiting on latency, two independent chains
nearly double the throughput. Each pixel still sees exactly the operations `escape` performs.

Smooth count: with z_0 = 0, z_k = z_{k-1}^2 + c, n = the first k with |z_k|^2 > BAILOUT2, the value is
(n - 1) + f with f = 1 - log2(log|z_n|^2 / log BAILOUT2) in [0, 1). This is the usual renormalised
count n + 1 - log2(log|z_n|) shifted by a constant, so floor(value) + 1 == n exactly, escaped points
stay below max_iter, and points that never escape within max_iter iterations get max_iter exactly.
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np
from numba import njit, prange, types
from numba.core.extending import intrinsic

from ..cpu_chunks import WORKERS, claim, enter, leave, reset
from . import formulas
from .formula_twins import named, twin


# |z|^2 escape radius (R = 256): a large radius makes the fractional part smooth across bands
BAILOUT2 = 65536.0
_INV_LOG_BAILOUT2 = 1.0 / math.log(BAILOUT2)
# keeps floor(value) == n even when |z_n| overshoots R^2 or the fraction rounds up to 1
_FRAC_MAX = 1.0 - 2.0 ** -20


class EscapeCode(NamedTuple):
    """_make_escape's functions, compiled for one target."""
    escape: object
    pair: object
    advance: object
    shortcut: object
    smooth: object
    zstep: object       # the formula: every loop's step, the GPU launches' and the float32 ones too


def _mandelbrot_step(mul, add, jit, step_jit):
    """(zstep, shortcut) of z <- z^2 + c."""

    @(step_jit or jit)
    def zstep(x, y, x2, y2, cx, cy):
        """z^2 + c from z = x + iy (x2 = x*x, y2 = y*y): the formula's one step, as (x, y)."""
        ny = add(mul(add(x, x), y), cy)
        return add(add(x2, -y2), cx), ny

    @jit
    def shortcut(cx, cy):
        # main cardioid and period-2 bulb never escape: answer max_iter without iterating
        xq = add(cx, -0.25)
        cy2 = mul(cy, cy)
        q = add(mul(xq, xq), cy2)
        if mul(q, add(q, xq)) <= mul(0.25, cy2):
            return True
        xb = add(cx, 1.0)
        return add(mul(xb, xb), cy2) <= 0.0625

    return zstep, shortcut


def _ship_step(mul, add, jit, step_jit):
    """(zstep, shortcut) of Burning Ship, z <- (|Re z| + i|Im z|)^2 + c."""

    @(step_jit or jit)
    def zstep(x, y, x2, y2, cx, cy):
        """Mandelbrot's step with |2xy| for 2xy: the absolute value is exact, so the iterates
        are those of x' = x^2 - y^2 + cx, y' = 2|xy| + cy rounded as Mandelbrot's are."""
        ny = add(abs(mul(add(x, x), y)), cy)
        return add(add(x2, -y2), cx), ny

    @jit
    def shortcut(cx, cy):
        # the cardioid and bulb are Mandelbrot's: no point of this set is answered untried
        return False

    return zstep, shortcut


def _make_escape(mul, add, jit, step_jit=None, formula: str = formulas.MANDELBROT) -> EscapeCode:
    """Per-pixel escape value for c = cx + i*cy, written once for both targets; `jit` compiles
    the helpers for the target, `step_jit` (default `jit`) the step: the GPU's inlines it where
    the launches call it, so that their loops compile as they did with the step written out.
    `formula` (formulas.py's names) picks the step and the shortcut when this builds, so each
    formula gets functions of its own and no loop asks which formula it runs."""
    if formulas.check(formula) == formulas.BURNING_SHIP:
        zstep, shortcut = _ship_step(mul, add, jit, step_jit)
        jit = named(jit, "_" + formula.replace("-", "_"))   # formula_twins.named says why
    else:
        zstep, shortcut = _mandelbrot_step(mul, add, jit, step_jit)

    @jit
    def smooth(r2, n):
        # in float64 also where the iteration ran in float32 (escape_f32.py)
        f = 1.0 - math.log2(math.log(np.float64(r2)) * _INV_LOG_BAILOUT2)
        if f < 0.0:
            f = 0.0
        elif f > _FRAC_MAX:
            f = _FRAC_MAX
        return float(n - 1) + f

    @jit
    def resume(cx, cy, x, y, x2, y2, n0, max_iter):
        """Iterate on from iterate n0 (z_n0 = x + iy, x2 = x*x, y2 = y*y)."""
        for n in range(n0 + 1, max_iter + 1):
            x, y = zstep(x, y, x2, y2, cx, cy)
            x2 = mul(x, x)
            y2 = mul(y, y)
            r2 = add(x2, y2)
            if r2 > BAILOUT2:
                return smooth(r2, n)
        return float(max_iter)

    @jit
    def escape(cx, cy, max_iter):
        if shortcut(cx, cy):
            return float(max_iter)
        return resume(cx, cy, 0.0, 0.0, 0.0, 0.0, 0, max_iter)

    @jit
    def escape_pair(ax, bx, cy, max_iter):
        """Two points of one row in lockstep: two independent dependency chains keep a CPU core
        busy where one chain waits on its own latency. Same operations per point as escape()."""
        inside = float(max_iter)
        a_in = shortcut(ax, cy)
        b_in = shortcut(bx, cy)
        if a_in or b_in:
            va = inside if a_in else resume(ax, cy, 0.0, 0.0, 0.0, 0.0, 0, max_iter)
            vb = inside if b_in else resume(bx, cy, 0.0, 0.0, 0.0, 0.0, 0, max_iter)
            return va, vb
        xa = ya = x2a = y2a = 0.0
        xb = yb = x2b = y2b = 0.0
        for n in range(1, max_iter + 1):
            xa, ya = zstep(xa, ya, x2a, y2a, ax, cy)
            xb, yb = zstep(xb, yb, x2b, y2b, bx, cy)
            x2a = mul(xa, xa)
            y2a = mul(ya, ya)
            x2b = mul(xb, xb)
            y2b = mul(yb, yb)
            ra = add(x2a, y2a)
            rb = add(x2b, y2b)
            if ra > BAILOUT2:
                if rb > BAILOUT2:
                    return smooth(ra, n), smooth(rb, n)
                return smooth(ra, n), resume(bx, cy, xb, yb, x2b, y2b, n, max_iter)
            if rb > BAILOUT2:
                return resume(ax, cy, xa, ya, x2a, y2a, n, max_iter), smooth(rb, n)
        return inside, inside

    @jit
    def advance(cx, cy, x, y, n0, n1, max_iter):
        """A slice of the iteration, for work too long to run in one go: from iterate n0
        (z_n0 = x + iy; n0 = 0 is the start, where the shortcut applies) up to iterate n1.
        Returns (value, x, y): the pixel's value once it is known, else -1.0 and z_n1. Each step
        is the one resume() takes (x2, y2 are recomputed from x, y exactly as the loop computes
        them), so a pixel sliced any way ends with the value escape() gives it."""
        if n0 == 0 and shortcut(cx, cy):
            return float(max_iter), x, y
        x2 = mul(x, x)
        y2 = mul(y, y)
        for n in range(n0 + 1, n1 + 1):
            x, y = zstep(x, y, x2, y2, cx, cy)
            x2 = mul(x, x)
            y2 = mul(y, y)
            r2 = add(x2, y2)
            if r2 > BAILOUT2:
                return smooth(r2, n), x, y
        if n1 >= max_iter:
            return float(max_iter), x, y
        return -1.0, x, y

    return EscapeCode(escape, escape_pair, advance, shortcut, smooth, zstep)


# ---------------------------------------------------------------- CPU twin (numba, parallel)

# Each helper compiled on its own (plain IEEE operators): inlined into escape_rows_cpu, they
# made one function whose parallel compile took ~10 s, and the loop ran no faster
# (docs/PERFORMANCE.md, "Cold and warm start").
_escape_cpu, _escape_pair_cpu = _make_escape(operator.mul, operator.add, njit)[:2]


@njit(cache=True)
def escape_value(cx, cy, max_iter):
    """Smooth escape value of one point c = cx + i*cy (CPU)."""
    return _escape_cpu(cx, cy, max_iter)



@intrinsic
def _read_flag(typingctx, flags):
    """flags[0] of a 1-d int64 array, read afresh at every call: an atomic (monotonic) load, which
    the optimiser may not hoist out of a loop the way it would a plain read of memory that the
    loop never writes. Another thread sets the flag while the loop runs."""
    if not (isinstance(flags, types.Array) and flags.ndim == 1 and flags.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.load_atomic(ary.data, "monotonic", 8)

    return types.int64(flags), codegen


@njit(parallel=True, cache=True)
def escape_rows_cpu(values, band_row0, band_rows, stride, grid_row0, grid_col0,
                    cx, cy, step, half_w, half_h, max_iter, stop):
    """Fill values[band_row0 : band_row0 + band_rows] (a band of the buffer).

    Buffer row r is picture row grid_row0 + r. The threads claim k = 0, 1, 2, ... one row at a
    time (cpu_chunks) and draw row (k * stride) % band_rows (stride coprime to band_rows), so that
    cheap and expensive parts of the picture are mixed through the band.

    `stop` is a control block (cpu_chunks.control). Another thread may set its flag while this runs
    (a cancel): every thread reads it before each pair of pixels and leaves its rows unfinished
    once it is set, so a cancel waits for at most one pair of pixels however many iterations a
    band holds; the values are then incomplete and the caller must discard them. Each thread stamps
    its end there too: the kernel's time (cpu_chunks.stamped).
    """
    cols = values.shape[1]
    reset(stop)               # every call claims its pieces from 0
    for _w in prange(stop[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        k = claim(stop)
        while k < band_rows and _read_flag(stop) == 0:
            ran = True
            br = band_row0 + (k * stride) % band_rows
            gy = float(grid_row0 + br) + 0.5 - half_h
            y = cy - gy * step
            for c in range(0, cols - 1, 2):
                if _read_flag(stop) != 0:
                    break
                ax = cx + (float(grid_col0 + c) + 0.5 - half_w) * step
                bx = cx + (float(grid_col0 + c + 1) + 0.5 - half_w) * step
                va, vb = _escape_pair_cpu(ax, bx, y, max_iter)
                values[br, c] = va
                values[br, c + 1] = vb
            if cols % 2:
                c = cols - 1
                values[br, c] = _escape_cpu(cx + (float(grid_col0 + c) + 0.5 - half_w) * step, y,
                                            max_iter)
            k = claim(stop)
        leave(stop, clocks, ran)


# Burning Ship's CPU twins: escape_value's and escape_rows_cpu's code over its arithmetic
# (formula_twins.py says why a copy with a name of its own)
_escape_ship_cpu, _escape_pair_ship_cpu = _make_escape(operator.mul, operator.add, njit,
                                                       formula=formulas.BURNING_SHIP)[:2]
escape_value_ship = njit(cache=True)(twin(escape_value.py_func, "escape_value_ship",
                                          _escape_cpu=_escape_ship_cpu))
escape_rows_cpu_ship = njit(parallel=True, cache=True)(
    twin(escape_rows_cpu.py_func, "escape_rows_cpu_ship", _escape_cpu=_escape_ship_cpu,
         _escape_pair_cpu=_escape_pair_ship_cpu))
ROWS_KERNELS = {formulas.MANDELBROT: escape_rows_cpu, formulas.BURNING_SHIP: escape_rows_cpu_ship}


def row_stride(rows: int) -> int:
    """A step coprime to `rows` near rows/phi: spreads consecutive k over the whole band."""
    if rows <= 2:
        return 1
    s = max(1, int(rows * 0.6180339887))
    while math.gcd(s, rows) != 1:
        s += 1
    return s


@njit(cache=True)
def pixel_count(v, inside, max_iter):
    """The iterations a pixel of value `v` needed (floor(v) + 1 == n, the smooth count's rule),
    0 where the cardioid/bulb test answered; the roofline's useful work (frame_work.py)."""
    if inside:
        return 0
    if v >= max_iter:
        return max_iter
    return int(math.floor(v)) + 1


def shortcut_mask(cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    """Where the cardioid/bulb test answers without iterating (NumPy, same formula, for counting)."""
    xq = cx - 0.25
    cy2 = cy * cy
    q = xq * xq + cy2
    card = q * (q + xq) <= 0.25 * cy2
    xb = cx + 1.0
    return card | (xb * xb + cy2 <= 0.0625)
