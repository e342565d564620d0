"""A loop the app does not run: extended_loop.make_pixel compiled for the perturbation format
(extended=False), for the CPU (`deep_rows_shared_cpu`) and the GPU (`deep_kernel_pert`,
`deep_redo_pert`).

It walks the BLA table as bla.py lays it out, so it serves tables of any shortest level kmin,
where perturbation_loop.py's reads level 0 (single steps). Frames reach it only through
DeepRenderer(kmin > 0), an experiment's setting (the app, the command line and the benches keep
kmin = 0). The tests also hold perturbation_loop.py's loop to it: the same values and counts bit for
bit.
"""
from __future__ import annotations

from numba import njit, prange

from ...cpu_chunks import WORKERS, claim, enter, leave, reset
from .extended_loop import make_pixel, offset_cpu
from .rows_cpu import make_row
from .targets import CPU_ADD, CPU_MUL, CPU_SQRT, LoopCode, cpu_jit, cpu_loop_jit, gpu_getattr

_pixel_pert_cpu = make_pixel(CPU_MUL, CPU_ADD, CPU_SQRT, cpu_jit(), False, cpu_loop_jit())[0]
# numba's disk cache keys this file's kernels by this file alone: they inline step_helpers'
# pixel_offset, so a change there (the log-polar grid and its angle, issue 37) must touch this too


@njit(inline="always")
def _shared_pixel(r, c, d0r, d0i, step, cexp, half_w, half_h, loop):
    """rows_cpu's pixel function of this loop; loop as extended_loop's."""
    orbit, oexp, tab, tabe, levels, kmin, eps, max_iter = loop
    cmr, cmi = offset_cpu(r, c, d0r, d0i, step, half_w, half_h)
    return _pixel_pert_cpu(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter)


_shared_row = make_row(_shared_pixel)


@njit(parallel=True, cache=True)
def deep_rows_shared_cpu(values, stats, row0, nrows, stride, d0r, d0i, step, cexp, half_w, half_h,
                         orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, ctl):
    """Fill values[row0 : row0 + nrows] and stats[row] (counts summed over the row). Rows are
    visited in the order (k * stride) % nrows so each thread's share mixes cheap and dear rows."""
    reset(ctl)               # every call claims its rows from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        k = claim(ctl)
        while k < nrows:
            ran = True
            _shared_row(values, stats, row0 + (k * stride) % nrows, d0r, d0i, step, cexp, half_w,
                        half_h, (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter), max_iter,
                        stats, False)
            k = claim(ctl)
        leave(ctl, clocks, ran)


def _build_gpu():
    """This module's GPU code, made at the first use of one of its names (the module's
    __getattr__): a CPU frame never imports numba.cuda. Module-level names still, so numba's
    disk cache keys the kernels by this file as before."""
    global cuda, make_pixels, make_first, make_redo, FIRST_JIT, GPU_ADD, GPU_MUL, GPU_SQRT
    global gpu_jit, _first_pert_gpu, _redo_pert_gpu, _first_pixel, _redo_pixel, _first
    global _redo, deep_kernel_pert, deep_redo_pert
    from . import targets
    cuda = targets.cuda
    if cuda is None:  # pragma: no cover - only where numba-cuda is broken
        deep_kernel_pert = deep_redo_pert = None
        return
    from .extended_loop import make_pixels
    from .passes_gpu import make_first, make_redo
    from .targets import FIRST_JIT, GPU_ADD, GPU_MUL, GPU_SQRT, gpu_jit

    _, _first_pert_gpu, _redo_pert_gpu, _ = make_pixel(GPU_MUL, GPU_ADD, GPU_SQRT, gpu_jit(),
                                                       False)

    # extended_loop's pixel functions with the perturbation format's per-pixel functions,
    # passes_gpu's passes (an edit of either must touch this file: numba's cache keys by file)
    _first_pixel, _redo_pixel = make_pixels(_first_pert_gpu, _redo_pert_gpu)
    _first, _redo = make_first(_first_pixel, False), make_redo(_redo_pixel, False)

    @cuda.jit(**FIRST_JIT)
    def deep_kernel_pert(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, half_w,
                         half_h, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, stats,
                         redo, nredo):
        """The first pass of pixels [p0, p1), the doubtful ones listed in redo[:nredo[0]]."""
        _first(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, half_w, half_h,
               (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter), max_iter, stats, stats,
               redo, nredo)

    @cuda.jit(cache=True)
    def deep_redo_pert(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, orbit, oexp,
                       tab, tabe, levels, kmin, eps, max_iter, stats, redo, nredo):
        """The pixels deep_kernel_pert listed in redo[:nredo[0]], taken from counters[slot]."""
        _redo(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h,
              (orbit, oexp, tab, tabe, levels, kmin, eps, max_iter), max_iter, stats, stats,
              redo, nredo)


_GPU_NAMES = frozenset({"make_pixels", "make_first", "make_redo", "FIRST_JIT", "GPU_ADD",
                        "GPU_MUL", "GPU_SQRT", "gpu_jit", "_first_pert_gpu", "_redo_pert_gpu",
                        "_first_pixel", "_redo_pixel", "_first", "_redo", "deep_kernel_pert",
                        "deep_redo_pert"})
__getattr__ = gpu_getattr(globals(), _build_gpu, _GPU_NAMES)

CODE = LoopCode(deep_rows_shared_cpu, "deep_kernel_pert", "deep_redo_pert", module=__name__)
