"""The deep loops' rows on the CPU, written once (issue 36): a loop gives its pixel function and
the tuple of its own arguments; `counting` (a constant where the row is inlined) adds the deep
overlays' layers (loop_args.with_layers). The parallel loop around the rows, which claims them
and times itself (cpu_chunks), is `rows_of`'s, a twin per loop and key kept by numba's disk cache
as code of the loop's own file: an edit here must touch the loop modules too.

A pixel function: pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop) -> (value,
perturbation steps, BLA steps, BLA iterations, rebases, redone), the row's stats being their sums.
"""
from __future__ import annotations

from numba import njit, prange

from ...cpu_chunks import WORKERS, claim, enter, leave, reset
from ...twins import twin
from .formula_twins import named
from ..tables.layout import iteration_of as _iteration_of

# the deep overlays' iteration layer (one definition: layout.iteration_of, the GPU's too)
iteration_of = njit(inline="always")(_iteration_of)


def make_row(pixel, suffix=""):
    """Row r of a frame with `pixel`: values[r] and stats[r] (counts summed over the row); with
    `counting` each pixel's counts into layers[:, r, c] too, redone = 2 where the pixel was
    handed back for an exact redo (exact_redo.py). `suffix`: targets.named's, for a formula's."""
    @named(njit(inline="always"), suffix)
    def row(values, stats, r, d0r, d0i, step, cexp, half_w, half_h, loop, max_iter, layers,
            counting):
        s0 = 0
        s1 = 0
        s2 = 0
        s3 = 0
        s4 = 0
        for c in range(values.shape[1]):
            v, a, b, sk, rb, rd = pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop)
            values[r, c] = v
            if counting:
                if v < 0:
                    rd = 2
                layers[0, r, c] = iteration_of(v, max_iter)
                layers[1, r, c] = a
                layers[2, r, c] = b
                layers[3, r, c] = rb
                layers[4, r, c] = rd
            s0 += a
            s1 += b
            s2 += sk
            s3 += rb
            s4 += rd
        stats[r, 0] = s0
        stats[r, 1] = s1
        stats[r, 2] = s2
        stats[r, 3] = s3
        stats[r, 4] = s4
    return row


ROW = COUNTING = None       # a twin's own (`rows_of`): its loop's row, whether it stores layers


def _rows(values, stats, row0, nrows, stride, d0r, d0i, step, cexp, half_w, half_h, *rest):
    """Fill values[row0 : row0 + nrows] and stats[row] (counts summed over the row); rest: the
    loop's own arguments (max_iter last), the layers where COUNTING, the threads' control block.
    Rows are visited in the order (k * stride) % nrows so each thread's share mixes cheap and
    dear rows."""
    loop = rest[:-2] if COUNTING else rest[:-1]
    layers = rest[-2] if COUNTING else stats
    ctl = rest[-1]
    reset(ctl)               # every call claims its rows from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        k = claim(ctl)
        while k < nrows:
            ran = True
            ROW(values, stats, row0 + (k * stride) % nrows, d0r, d0i, step, cexp, half_w, half_h,
                loop, loop[-1], layers, COUNTING)
            k = claim(ctl)
        leave(ctl, clocks, ran)


def rows_of(row, name: str, home: str, counting: bool = False, cache: bool = True):
    """The parallel rows (cpu_rows, loop_args.py) of a loop whose row is `row` (`make_row`'s),
    compiled as `name`: a twin of `_rows` (kernels/twins.py) that numba's disk cache keys by the
    file `home` (the loop's module), so an edit of the loop there recompiles it. `counting`: the
    overlays' twin, its layers the argument before the control block."""
    return njit(parallel=True, cache=cache)(twin(_rows, name, home=home, ROW=row,
                                                 COUNTING=counting))


def loop_rows(pixel_of, fns, names, home: str):
    """A loop's rows and their parallel loops, as both deep loops glue them: (row, the Ship's row,
    rows, rows with the overlays' layers, the Ship's rows). `pixel_of(fn, suffix)` makes the
    loop's pixel function of the Mandelbrot's fns[0] and the Ship's fns[1] (suffix "_ship":
    formula_twins.named); `names`: the three parallel loops' (`rows_of`), kept by numba's disk
    cache as code of `home`."""
    row = make_row(pixel_of(fns[0], ""))
    ship = make_row(pixel_of(fns[1], "_ship"), "_ship")
    plain, layers, ship_rows = names
    return (row, ship, rows_of(row, plain, home), rows_of(row, layers, home, True),
            rows_of(ship, ship_rows, home))
