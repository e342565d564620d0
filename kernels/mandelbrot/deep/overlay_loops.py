"""Deep frames with per-pixel overlays: the perturbation and extended loops' kernels (GPU) and row
functions (CPU) again, writing each pixel's counts into `layers` (overlays.py's deep layers:
iteration, perturbation steps, BLA steps, rebases, redone: 1, or 2 where the pixel was handed
back for an exact redo, exact_redo.py, which sets it back to 1 where it settles the pixel)
besides the frame's summed stats.

The walks are perturbation_loop.py's and extended_loop.py's own compiled functions, called the
same way, so values and stats equal those of the kernels the app runs without overlays; those
kernels stay as they are (no layer argument, no stores): a frame asks for these only when an
overlay is on (`with_layers`). On the GPU each pass is written once, in its loop's module, with
the layers a compile-time flag (make_first, make_redo there); on the CPU each loop's row body
is written once too (perturbation_loop.pert_row, extended_loop.ext_row, the layers a constant
where they are inlined), the parallel loops around them here.

Per pixel the layers hold what the stats add up: the first kernel writes the first pass's counts,
the redo kernel adds its passes' counts and sets redone = 1, so each layer summed over the frame
equals the matching stat (tests/kernels/test_overlays_deep.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from numba import njit, prange

from ...cpu_chunks import WORKERS, claim, enter, leave, reset
from . import extended_loop, perturbation_loop
from .targets import LoopCode
# numba's disk cache keys this file's kernels by this file alone: they inline step_helpers'
# pixel_offset, so a change there (the log-polar grid and its angle, issue 37) must touch this too


@dataclass(frozen=True)
class LayerArgs:
    """The overlay kernels' last argument before the stats (loop_args.positional's record)."""
    layers: object


def with_layers(code, records: tuple, layers):
    """(code, records) of a frame's loop with overlays: the overlay twin of `code` (a
    perturbation_loop or extended_loop LoopCode) and the records with `layers` (5, H, W) int32,
    where the code reads them, appended. ValueError for a loop without a twin (variants.py's)."""
    twin = _TWINS.get(id(code))
    if twin is None:
        raise ValueError("overlays need the perturbation or extended loop (a BLA table with its "
                         "single steps, kmin = 0)")
    return twin, tuple(records) + (LayerArgs(layers),)


# ---------------------------------------------------------------- CPU (numba, parallel)

_pert_row = perturbation_loop.pert_row
_ext_row = extended_loop.ext_row


@njit(parallel=True, cache=True)
def deep_rows_pert_layers_cpu(values, stats, row0, nrows, stride, d0r, d0i, step, cexp, half_w,
                              half_h, zo, bt, levels, eps, max_iter, layers, ctl):
    """perturbation_loop.deep_rows_pert_cpu, each pixel's counts also into layers[:, r, c]."""
    reset(ctl)               # every call claims its rows from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        k = claim(ctl)
        while k < nrows:
            ran = True
            _pert_row(values, stats, row0 + (k * stride) % nrows, d0r, d0i, step, cexp, half_w,
                      half_h, (zo, bt, levels, eps, max_iter), max_iter, layers, True)
            k = claim(ctl)
        leave(ctl, clocks, ran)


@njit(parallel=True, cache=True)
def deep_rows_ext_layers_cpu(values, stats, row0, nrows, stride, d0r, d0i, step, cexp, half_w,
                             half_h, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, layers,
                             ctl):
    """extended_loop.deep_rows_ext_cpu, each pixel's counts also into layers[:, r, c]."""
    reset(ctl)               # every call claims its rows from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        k = claim(ctl)
        while k < nrows:
            ran = True
            _ext_row(values, stats, row0 + (k * stride) % nrows, d0r, d0i, step, cexp, half_w,
                     half_h, (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter), max_iter,
                     layers, True)
            k = claim(ctl)
        leave(ctl, clocks, ran)


# ---------------------------------------------------------------- GPU (numba-cuda)

# the GPU passes are the loops' own, their layers a compile-time flag (made at their first use)
PERTURBATION_LAYERS = LoopCode(deep_rows_pert_layers_cpu, "deep_kernel_flat_layers",
                               "deep_redo_flat_layers", module=perturbation_loop.__name__)
EXTENDED_LAYERS = LoopCode(deep_rows_ext_layers_cpu, "deep_kernel_ext_layers",
                           "deep_redo_ext_layers", module=extended_loop.__name__)
_TWINS = {id(perturbation_loop.CODE): PERTURBATION_LAYERS,
          id(extended_loop.CODE): EXTENDED_LAYERS}
