"""The work of a Mandelbrot frame, counted for the roofline after its escape pass.

Useful iterations: what the algorithm needs per pixel — n for a point escaping at z_n, max_iter
for one that never escapes, 0 where the cardioid/bulb test answers without iterating (the same
count as renderer.executed_iterations and the bench's "G iter/s"). Executed lane-iterations (GPU):
each row segment of 32 pixels — a warp's share of a row — as long as its slowest pixel, times its
32 lanes; what a warp per segment runs, lanes idle included. The app's warp launch refills idle
lanes, so it executes at most this. On the CPU there are no lanes: executed = useful.

One pass over the frame's values on the device (a warp per segment, reads coalesced; or numba's
threads), two int64 totals copied home: the work is counted where the values lie, never by copying
them.
"""
from __future__ import annotations

import operator

import numpy as np
from numba import njit, prange

from ...cpu_chunks import WORKERS, claim, enter, leave, control, reset
from ...roofs.work import Work, record
from ..loops import escape as mk
from ..requests import formulas
from ..loops.formula_twins import twin
from .gpu_target import WARP_THREADS as LANES
# y = (x+x)·y + cy: 3 flops; x = x²−y²+cx: 2; x², y²: 2; |z|² = x²+y²: 1 (the compare not counted)
FLOPS_PER_ITERATION = 8
BYTES_PER_PIXEL = 8         # the float64 value each pixel's kernel writes: all it must move

_shortcut_cpu = mk._make_escape(operator.mul, operator.add, njit).shortcut
# Burning Ship's has no shortcut: every pixel counts its iterations
_shortcut_ship_cpu = mk._make_escape(operator.mul, operator.add, njit,
                                     formula=formulas.BURNING_SHIP).shortcut


@njit(parallel=True, cache=True)
def count_rows_cpu(values, grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter,
                   useful, lanes, ctl):
    """useful[r], lanes[r] = useful iterations and executed lane-iterations (32-pixel segments)
    of values' row r; rows claimed and stamped through the control block ctl (cpu_chunks)."""
    rows, cols = values.shape
    per_row = (cols + LANES - 1) // LANES
    reset(ctl)               # every call claims its pieces from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        r = claim(ctl)
        while r < rows:
            ran = True
            y = cy - (float(grid_row0 + r) + 0.5 - half_h) * step
            useful[r] = 0
            lanes[r] = 0
            for s in range(per_row):
                top = 0
                for c in range(s * LANES, min(cols, (s + 1) * LANES)):
                    x = cx + (float(grid_col0 + c) + 0.5 - half_w) * step
                    n = mk.pixel_count(values[r, c], _shortcut_cpu(x, y), max_iter)
                    useful[r] += n
                    top = max(top, n)
                lanes[r] += LANES * top
            r = claim(ctl)
        leave(ctl, clocks, ran)


# the count of a Burning Ship frame: count_rows_cpu's code with its shortcut (formula_twins.py)
count_rows_cpu_ship = njit(parallel=True, cache=True)(
    twin(count_rows_cpu.py_func, "count_rows_cpu_ship", _shortcut_cpu=_shortcut_ship_cpu))


def count_cpu(values, grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter):
    """(useful iterations, executed lane-iterations with 32-pixel segments) of values' rows."""
    rows = values.shape[0]
    useful = np.zeros(rows, np.int64)
    lanes = np.zeros(rows, np.int64)
    count_rows_cpu(values, grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter,
                   useful, lanes, control())
    return int(useful.sum()), int(lanes.sum())


# the GPU count is frame_work_gpu.py's, imported at the first GPU count: numba.cuda is no part of
# a CPU frame's import


def frame_works(useful: int, executed: int | None, pixels: int, gpu: bool,
                kind: str = "f64") -> list[Work]:
    """The frame's Work records: useful iterations, and on the GPU executed lane-iterations;
    `kind`: the escape kernel's number type ("f32" for a float32 kernel)."""
    minus = ("colourise", "work count")
    nbytes = BYTES_PER_PIXEL * pixels
    out = [Work("escape, useful iterations", kind, FLOPS_PER_ITERATION * useful, nbytes,
                minus=minus, how=f"{FLOPS_PER_ITERATION} flops × {useful:,} iterations")]
    if gpu and executed is not None:
        out.append(Work("escape, executed lane-iterations", kind, FLOPS_PER_ITERATION * executed,
                        nbytes, minus=minus,
                        how=f"{FLOPS_PER_ITERATION} flops × {executed:,} lane-iterations "
                            f"(32-pixel segments at their slowest pixel)"))
    return out


class PendingCount:
    """A frame's count, enqueued on the GPU before the frame's timer finishes and read after."""

    def __init__(self, host, pixels, kind):
        self.host, self.pixels, self.kind = host, pixels, kind

    def useful(self) -> int:
        """The frame's useful iterations (once its stream has synchronised)."""
        return int(self.host[0])

    def finish(self, timings):
        useful, executed = int(self.host[0]), int(self.host[1])
        return record(timings, *frame_works(useful, executed, self.pixels, True, self.kind))


class DoneCount:
    def __init__(self, useful, pixels, kind):
        self._useful, self.pixels, self.kind = useful, pixels, kind

    def useful(self) -> int:
        return self._useful

    def finish(self, timings):
        return record(timings, *frame_works(self._useful, None, self.pixels, False, self.kind))


def start_count(backend, pool, stream, values, args, timer, kind: str = "f64", kernel=None,
                formula: str = formulas.MANDELBROT):
    """Count the frame's work where its values lie; `.finish(timings)` after the timer's finish
    adds the Work records. args: the escape kernels' grid arguments (PixelGrid.args); kind: the
    escape kernel's number type; kernel: the renderer's prepared launches (GpuTarget.kernel), if
    it keeps them; formula: the frame's (only Mandelbrot's has a shortcut)."""
    rows, cols = values.shape
    ship = formulas.check(formula) == formulas.BURNING_SHIP
    if not getattr(backend, "is_gpu", False):
        useful = pool.host("work-useful", (rows,), np.int64, pinned=False)
        lanes = pool.host("work-lanes", (rows,), np.int64, pinned=False)
        timer.native("kernel", count_rows_cpu_ship if ship else count_rows_cpu, values, *args,
                     useful, lanes, control(), detail="work count", stamped=True)
        return DoneCount(int(useful.sum()), rows * cols, kind)
    out = pool.device("work-count", (2,), np.int64, stream=stream)
    host = pool.host("work-count", (2,), np.int64)
    host[:] = 0
    from .frame_work_gpu import MAX_SEGMENTS, SIM_SEGMENTS, count_kernel, count_kernel_ship
    counter = count_kernel_ship if ship else count_kernel
    by = SIM_SEGMENTS if getattr(backend, "simulated", False) else MAX_SEGMENTS
    blocks = ((cols + LANES - 1) // LANES, (rows + by - 1) // by)
    with timer.phase("kernel", gpu=True, detail="work count"):
        out.copy_to_device(host, stream=stream)
        launch = kernel(counter, blocks, (LANES, by)) if kernel is not None else \
            counter[blocks, (LANES, by), stream]
        launch(values, out, *args)
        out.copy_to_host(host, stream=stream)
    return PendingCount(host, rows * cols, kind)
