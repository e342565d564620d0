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

from numba import njit

from ..formula_twins import twin
from .extended_loop import _pixel_of, deep_rows_ext_cpu, make_pixel
from .rows_cpu import make_row
from .targets import CPU_ADD, CPU_MUL, CPU_SQRT, LoopCode, cpu_jit, cpu_loop_jit, gpu_getattr

_pixel_pert_cpu = make_pixel(CPU_MUL, CPU_ADD, CPU_SQRT, cpu_jit(), False, cpu_loop_jit())[0]
# numba's disk cache keys this file's kernels by this file alone: they inline step_helpers'
# pixel_offset, so a change there (the log-polar grid and its angle, issue 37) must touch this too


# rows_cpu's pixel and row of this loop (loop as extended_loop's), and the rows: the extended
# loop's code over them (formula_twins.twin), names of their own for numba
_shared_row = make_row(_pixel_of(_pixel_pert_cpu, "_pert"), "_pert")
deep_rows_shared_cpu = njit(parallel=True, cache=True)(
    twin(deep_rows_ext_cpu.py_func, "deep_rows_shared_cpu", ext_row=_shared_row))


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
