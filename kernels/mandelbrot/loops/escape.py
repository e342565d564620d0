"""The Mandelbrot escape-time arithmetic for both number types, and its CPU twin.

Every target is built from ONE description of the per-pixel arithmetic (`_make_escape`),
instantiated with the multiply and add of a number type on a target; its `zstep` is the one place
a formula is written (z^2 + c; Burning Ship's, formulas.py, the same with |2xy| for 2xy and no
cardioid/bulb shortcut): the CPU twin and every GPU launch call it. The number type and the
formula are choices of the build, never of a loop: each (number type, formula) gets kernels of its
own (twins of the Mandelbrot float64 code, formula_twins.py), so the Mandelbrot float64 kernels
compile exactly as they did before there was a second formula or type.

* CPU: plain IEEE `a * b` and `a + b`. numba's CPU backend never contracts them into FMAs
  (it emits no `contract` flag without fastmath).
* GPU (escape_gpu.py): libdevice's `dmul_rn` / `dadd_rn`. NVVM contracts a plain
  `x * x - y * y + c` into fused multiply-adds by default (numba-cuda passes no `-fma=0`), which
  rounds differently from the CPU and changes escape counts near the boundary. PTX arithmetic with
  an explicit rounding mode is never fused, so the GPU performs exactly the CPU's operations, in
  the same order, and both give bit-identical iterates and therefore identical escape counts. Only
  `log`/`log2` in the smooth fraction may differ in the last bit (libdevice vs libm).
* CUDA simulator: plain Python operators, i.e. the CPU's arithmetic.
* float32: `_mul32`/`_add32` round both operands to float32 and return the float32 result, so
  every operation `_make_escape` writes (its constants are Python floats) is a float32 one (on the
  GPU libdevice's `fmul_rn`/`fadd_rn`, never fused). The smooth fraction is made in float64 from
  |z_n|^2, as for float64 frames. Pixel coordinates come from `pixel_axes`: computed on the host
  exactly as the float64 GPU kernels compute them, then rounded once, so no float64 arithmetic is
  left in a float32 GPU loop (a consumer card runs float64 at 1/64 of float32's rate).

The GPU launches (escape_gpu.py's sliced kernel, escape_warp.py's warp launch the app runs,
escape_variants.py's bench-only ones) import numba.cuda; a CPU frame never does.

The CPU twin iterates two neighbouring pixels in lockstep (`escape_pair`): one pixel's recurrence
is a chain of dependent operations that leaves a core waiting on latency, two independent chains
nearly double the throughput. Each pixel still sees exactly the operations `escape` performs.

Smooth count: with z_0 = 0, z_k = z_{k-1}^2 + c, n = the first k with |z_k|^2 > BAILOUT2, the value is
(n - 1) + f with f = 1 - log2(log|z_n|^2 / log BAILOUT2) in [0, 1). This is the usual renormalised
count n + 1 - log2(log|z_n|) shifted by a constant, so floor(value) + 1 == n exactly, escaped points
stay below max_iter, and points that never escape within max_iter iterations get max_iter exactly.
"""
from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit, prange, types
from numba.core.extending import intrinsic

from ...cpu_chunks import WORKERS, claim, enter, leave, reset
from ..requests import formulas
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
    step: object        # zstep with the squares and |z|^2 after it: a loop's whole iteration


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

    @(step_jit or jit)
    def step(x, y, x2, y2, cx, cy):
        """One iteration from z = x + iy (x2 = x*x, y2 = y*y): (x, y, x2, y2, |z|^2) after it."""
        x, y = zstep(x, y, x2, y2, cx, cy)
        x2 = mul(x, x)
        y2 = mul(y, y)
        return x, y, x2, y2, add(x2, y2)

    @jit
    def smooth(r2, n):
        # in float64 also where the iteration ran in float32
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
            x, y, x2, y2, r2 = step(x, y, x2, y2, cx, cy)
            if r2 > BAILOUT2:
                return smooth(r2, n), x, y
        if n1 >= max_iter:
            return float(max_iter), x, y
        return -1.0, x, y

    return EscapeCode(escape, escape_pair, advance, shortcut, smooth, zstep, step)


# ---------------------------------------------------------------- number types

NUMBER_TYPES = ("float64", "float32")


@njit(cache=True)
def _mul32(a, b):
    return np.float32(a) * np.float32(b)


@njit(cache=True)
def _add32(a, b):
    return np.float32(a) + np.float32(b)


# each number type's multiply and add on the CPU (the GPU's: escape_gpu.py)
CPU_OPS = {"float64": (operator.mul, operator.add), "float32": (_mul32, _add32)}


@dataclass(frozen=True)
class PixelGrid:
    """The picture's pixel grid: pixel (row, col) sits at (cx + (col+0.5-half_w)*step,
    cy - (row+0.5-half_h)*step). Tiles and bands index into the same grid, so they agree bit for bit."""
    cx: float
    cy: float
    step: float
    half_w: float
    half_h: float

    @staticmethod
    def of(req) -> PixelGrid:
        """The grid of a MandelbrotRequest (its centre, width and size)."""
        w, h = int(req.size[0]), int(req.size[1])
        return PixelGrid(float(req.center_re), float(req.center_im), float(req.width) / w,
                         w / 2.0, h / 2.0)

    def args(self, row0: int, max_iter: int) -> tuple:
        """The escape kernels' grid arguments for a buffer whose first row is picture row row0."""
        return (int(row0), 0, self.cx, self.cy, self.step, self.half_w, self.half_h, int(max_iter))


def pixel_axes(args: tuple, rows: int, cols: int, number_type: str = "float32"):
    """(xs, ys): the real part of each of `cols` columns and the imaginary part of each of `rows`
    buffer rows as `number_type`, for escape kernels' grid arguments `args`
    (PixelGrid.args: grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter).
    Computed in float64 with the float64 GPU kernels' operations in their order, then rounded
    once (float32)."""
    grid_row0, grid_col0, cx, cy, step, half_w, half_h = args[:7]
    gx = (np.arange(cols, dtype=np.int64) + int(grid_col0)).astype(np.float64) + 0.5 - half_w
    gy = (np.arange(rows, dtype=np.int64) + int(grid_row0)).astype(np.float64) + 0.5 - half_h
    xs = float(cx) + gx * float(step)
    ys = float(cy) - gy * float(step)
    return xs.astype(number_type), ys.astype(number_type)


# ---------------------------------------------------------------- CPU twin (numba, parallel)

# Each helper compiled on its own (plain IEEE operators): inlined into escape_rows_cpu, they
# made one function whose parallel compile took ~10 s, and the loop ran no faster
# (docs/PERFORMANCE.md, "Cold and warm start").
_escape_cpu, _escape_pair_cpu = _make_escape(*CPU_OPS["float64"], njit)[:2]
_real = np.float64          # the number type of a point's coordinates


@njit(cache=True)
def escape_value(cx, cy, max_iter):
    """Smooth escape value of one point c = cx + i*cy (CPU)."""
    return _escape_cpu(_real(cx), _real(cy), max_iter)



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
def escape_rows_cpu(values, band_row0, band_rows, stride, xs, ys, max_iter, stop):
    """Fill values[band_row0 : band_row0 + band_rows] (a band of the buffer) whose row r has
    imaginary part ys[r] and column c real part xs[c] (pixel_axes).

    The threads claim k = 0, 1, 2, ... one row at a time (cpu_chunks) and draw row
    (k * stride) % band_rows (stride coprime to band_rows), so that cheap and expensive parts of
    the picture are mixed through the band.

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
            y = ys[br]
            for c in range(0, cols - 1, 2):
                if _read_flag(stop) != 0:
                    break
                va, vb = _escape_pair_cpu(xs[c], xs[c + 1], y, max_iter)
                values[br, c] = va
                values[br, c + 1] = vb
            if cols % 2:
                c = cols - 1
                values[br, c] = _escape_cpu(xs[c], y, max_iter)
            k = claim(stop)
        leave(stop, clocks, ran)


@functools.cache
def _twins(number_type: str, formula: str):
    """(escape_value, escape_rows_cpu) of `number_type` and `formula`: the Mandelbrot float64
    kernels above, else their twins over that arithmetic (formula_twins.py says why a copy with a
    name of its own)."""
    if (number_type, formula) == ("float64", formulas.MANDELBROT):
        return escape_value, escape_rows_cpu
    esc, pair = _make_escape(*CPU_OPS[number_type], njit, formula=formula)[:2]
    suffix = ("32" if number_type == "float32" else "") + \
        ("_ship" if formula == formulas.BURNING_SHIP else "")
    value = njit(cache=True)(twin(escape_value.py_func, "escape_value" + suffix, _escape_cpu=esc,
                                  _real=getattr(np, number_type)))
    rows = njit(parallel=True, cache=True)(twin(escape_rows_cpu.py_func, "escape_rows_cpu" + suffix,
                                                _escape_cpu=esc, _escape_pair_cpu=pair))
    return value, rows


def value_kernel(number_type: str, formula: str = formulas.MANDELBROT):
    """escape_value(cx, cy, max_iter) in `number_type`'s arithmetic, iterating `formula`."""
    return _twins(_check_type(number_type), formulas.check(formula))[0]


def rows_kernel(number_type: str, formula: str = formulas.MANDELBROT):
    """The band kernel (escape_rows_cpu's arguments) in `number_type`'s arithmetic, iterating
    `formula`."""
    return _twins(_check_type(number_type), formulas.check(formula))[1]


def _check_type(number_type: str) -> str:
    if number_type not in NUMBER_TYPES:
        raise ValueError(f"unknown number type {number_type!r}; choose one of: "
                         f"{', '.join(NUMBER_TYPES)}")
    return number_type


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
