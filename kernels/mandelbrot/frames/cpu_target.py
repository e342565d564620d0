"""The renderer's CPU side: host buffers and the escape pass in bands of rows (numba, parallel).

`CpuTarget` has the methods of gpu_target.GpuTarget. Its buffers are the results themselves, so
nothing is copied home; its kernel (escape.rows_kernel: escape_rows_cpu or a twin) polls a stop
flag that a cancel sets, and runs a band of rows at a time with a cancellation check between bands.
"""
from __future__ import annotations

import numpy as np

from ...cpu_chunks import FLAG, control
from ..loops import escape as mk
from ..requests.formulas import MANDELBROT
from ..requests.formulas import check as check_formula


class CpuTarget:
    """Frames computed in host memory. `cuts()` gives the renderer's current Cuts."""

    stream = None
    number_type = "float64"     # the arithmetic of the band kernel (float32: targets_f32.py)

    def formula_kernel(self, formula: str):
        """The band kernel of `formula` in this target's number type (escape.rows_kernel;
        ValueError for a formula this target has no kernel of)."""
        return mk.rows_kernel(self.number_type, check_formula(formula))

    def __init__(self, backend, cuts):
        self.backend, self.cuts = backend, cuts

    # ---- buffers and copies ------------------------------------------------------------------
    def values(self, pool, name, h, w):
        return pool.host(name, (h, w), np.float64, pinned=False)

    def counts(self, pool, name, h, w):
        return None                     # the CPU kernel makes the smooth value as it goes

    def rgba(self, pool, name, h, w, ring=3):
        return pool.host(name, (h, w), np.uint32, pinned=False, ring=ring)

    def lanes(self, pool, h, w, max_iter):
        return None                     # no warps: each thread runs its own pixels

    def counts_lanes(self, h, w, max_iter) -> bool:
        return False

    def host(self, pool, name, shape, dtype, ring=1):
        return None                     # results stay where they were computed

    def download(self, src, out, timer):
        """`src` itself, or copied into `out` when one is given."""
        if out is None:
            return src
        np.copyto(out, src)
        return out

    def sync(self):
        pass

    def read(self, values, row, col) -> float:
        return float(values[row, col])

    def check_fits(self, rows, w, values, max_iter, what):
        pass                            # host memory is checked where files are written

    # ---- the escape pass ---------------------------------------------------------------------
    def warm(self, values, counts, args, timer, formula: str = MANDELBROT):
        self.escape(values, args, timer, None, counts, formula=formula)

    def escape(self, values, args, timer, cancel, counts, whole=False, formula=MANDELBROT,
               lanes=None):
        """Escape values for the buffer's rows (args: the escape kernels' grid arguments, which
        become the band kernel's pixel axes, escape.pixel_axes), in bands
        of at most `cuts().cpu_work` iterations; a cancel also stops the kernel inside a band.
        `whole` (GpuTarget's) changes nothing here: the bands cost no synchronisation; nor do
        `lanes` (lanes() gives none). `formula`: what the pass iterates (formulas.py's names)."""
        kernel = self.formula_kernel(formula)
        rows, cols = values.shape
        max_iter = args[-1]
        xs, ys = mk.pixel_axes(args, rows, cols, self.number_type)
        band = self.cuts().cpu_work // max(1, cols * max_iter)
        # never so few rows that a band leaves the CPU's threads half idle: the stop flag, not
        # the band, bounds how long a cancel waits
        band = max(1, min(rows, max(band, 4)))
        stop = control()        # the cancel flag, and where the threads stamp their span
        forget = cancel.on_cancel(lambda: stop.__setitem__(FLAG, 1)) \
            if hasattr(cancel, "on_cancel") else None
        try:
            for b0 in range(0, rows, band):
                n = min(band, rows - b0)
                timer.native("kernel", kernel, values, b0, n, mk.row_stride(n),
                             xs, ys, max_iter, stop, stamped=True)
                if cancel is not None:
                    cancel.check()
                if stop[FLAG]:       # stopped part-way: the token raises above, but never go on
                    raise RuntimeError("the escape kernel was stopped without a cancel")
        finally:
            if forget is not None:
                forget()
