"""A loop the app does not run: extended_loop.make_pixel compiled for the perturbation format
(extended=False), for the CPU (`deep_rows_shared_cpu`) and the GPU (`deep_kernel_pert`,
`deep_redo_pert`).

It walks the BLA table as bla.py lays it out, so it serves tables of any shortest level kmin,
where perturbation_loop.py's reads level 0 (single steps). Frames reach it only through
DeepRenderer(kmin > 0), an experiment's setting (the app, the command line and the benches keep
kmin = 0). The tests also hold perturbation_loop.py's loop to it: the same values and counts bit for
bit. Its rows and kernels are twins of the extended loop's (kernels/twins.py: the same code over
this loop's pixel functions, names of their own, served by numba's disk cache).
"""
from __future__ import annotations

from numba import njit

from ..formula_twins import twin
from . import extended_loop
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
    __getattr__): a CPU frame never imports numba.cuda."""
    global deep_kernel_pert, deep_redo_pert
    from . import targets
    if targets.cuda is None:  # pragma: no cover - only where numba-cuda is broken
        deep_kernel_pert = deep_redo_pert = None
        return
    from .passes_gpu import make_first, make_redo
    from .targets import FIRST_JIT, GPU_ADD, GPU_MUL, GPU_SQRT, gpu_jit

    _, first_fn, redo_fn, _ = make_pixel(GPU_MUL, GPU_ADD, GPU_SQRT, gpu_jit(), False)
    # extended_loop's pixel functions and kernels over this loop's per-pixel functions (its
    # kernels' twins keep extended_loop.py's file: numba's cache sees an edit of the loop there)
    first_pixel, redo_pixel = extended_loop.make_pixels(first_fn, redo_fn)
    deep_kernel_pert = targets.cuda.jit(**FIRST_JIT)(twin(
        extended_loop.deep_kernel_ext.py_func, "deep_kernel_pert",
        _first=make_first(first_pixel, False)))
    deep_redo_pert = targets.cuda.jit(cache=True)(twin(
        extended_loop.deep_redo_ext.py_func, "deep_redo_pert",
        _redo=make_redo(redo_pixel, False)))


__getattr__ = gpu_getattr(globals(), _build_gpu, frozenset({"deep_kernel_pert",
                                                            "deep_redo_pert"}))

CODE = LoopCode(deep_rows_shared_cpu, "deep_kernel_pert", "deep_redo_pert", module=__name__)
