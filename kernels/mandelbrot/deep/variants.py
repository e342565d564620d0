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
from .targets import CPU_ADD, CPU_MUL, CPU_SQRT, LoopCode, cpu_jit, cpu_loop_jit, cuda

_pixel_pert_cpu = make_pixel(CPU_MUL, CPU_ADD, CPU_SQRT, cpu_jit(), False, cpu_loop_jit())[0]
# numba's disk cache keys this file's kernels by this file alone: they inline step_helpers'
# pixel_offset, so a change there (the log-polar grid and its angle, issue 37) must touch this too


@njit(parallel=True, cache=True)
def deep_rows_shared_cpu(values, stats, row0, nrows, stride, d0r, d0i, step, cexp, half_w, half_h,
                         orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, ctl):
    """Fill values[row0 : row0 + nrows] and stats[row] (counts summed over the row). Rows are
    visited in the order (k * stride) % nrows so each thread's share mixes cheap and dear rows."""
    cols = values.shape[1]
    reset(ctl)               # every call claims its rows from 0
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        k = claim(ctl)
        while k < nrows:
            ran = True
            r = row0 + (k * stride) % nrows
            s0 = 0
            s1 = 0
            s2 = 0
            s3 = 0
            s4 = 0
            for c in range(cols):
                cmr, cmi = offset_cpu(r, c, d0r, d0i, step, half_w, half_h)
                v, a, b, sk, rb, rd = _pixel_pert_cpu(cmr, cmi, cexp, orbit, oexp, tab, tabe,
                                                      levels, kmin, eps, max_iter)
                values[r, c] = v
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
            k = claim(ctl)
        leave(ctl, clocks, ran)


if cuda is not None:
    from .extended_loop import offset_gpu
    from .targets import FIRST_JIT, GPU_ADD, GPU_MUL, GPU_SQRT, gpu_jit

    _, _first_pert_gpu, _redo_pert_gpu, _ = make_pixel(GPU_MUL, GPU_ADD, GPU_SQRT, gpu_jit(),
                                                       False)

    @cuda.jit(**FIRST_JIT)
    def deep_kernel_pert(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, half_w,
                         half_h, orbit, oexp, tab, tabe, levels, kmin, eps, max_iter, stats,
                         redo, nredo):
        """The first pass of pixels [p0, p1), the doubtful ones listed in redo[:nredo[0]]."""
        cols = values.shape[1]
        stride = cuda.gridsize(1)
        i = cuda.atomic.add(counters, slot, 1) + p0 if dynamic else p0 + cuda.grid(1)
        s0 = s1 = s2 = s3 = 0
        while i < p1:
            r = i // cols
            c = i - r * cols
            cmr, cmi = offset_gpu(r, c, d0r, d0i, step, half_w, half_h)
            v, a, b, sk, rb, doubt = _first_pert_gpu(cmr, cmi, cexp, orbit, oexp, tab, tabe,
                                                     levels, kmin, eps, max_iter)
            values[r, c] = v
            if doubt:
                redo[cuda.atomic.add(nredo, 0, 1)] = i
            s0 += a
            s1 += b
            s2 += sk
            s3 += rb
            i = cuda.atomic.add(counters, slot, 1) + p0 if dynamic else i + stride
        cuda.atomic.add(stats, 0, s0)
        cuda.atomic.add(stats, 1, s1)
        cuda.atomic.add(stats, 2, s2)
        cuda.atomic.add(stats, 3, s3)

    @cuda.jit(cache=True)
    def deep_redo_pert(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, orbit, oexp,
                       tab, tabe, levels, kmin, eps, max_iter, stats, redo, nredo):
        """The pixels deep_kernel_pert listed in redo[:nredo[0]], taken from counters[slot]."""
        cols = values.shape[1]
        k = cuda.atomic.add(counters, slot, 1)
        s0 = s1 = s2 = s3 = s4 = 0
        while k < nredo[0]:
            i = redo[k]
            r = i // cols
            c = i - r * cols
            cmr, cmi = offset_gpu(r, c, d0r, d0i, step, half_w, half_h)
            v, a, b, sk, rb = _redo_pert_gpu(cmr, cmi, cexp, orbit, oexp, tab, tabe, levels, kmin,
                                             eps, max_iter)
            values[r, c] = v
            s0 += a
            s1 += b
            s2 += sk
            s3 += rb
            s4 += 1
            k = cuda.atomic.add(counters, slot, 1)
        cuda.atomic.add(stats, 0, s0)
        cuda.atomic.add(stats, 1, s1)
        cuda.atomic.add(stats, 2, s2)
        cuda.atomic.add(stats, 3, s3)
        cuda.atomic.add(stats, 4, s4)
else:  # pragma: no cover - only where numba-cuda is broken
    deep_kernel_pert = deep_redo_pert = None

CODE = LoopCode(deep_rows_shared_cpu, deep_kernel_pert, deep_redo_pert)
