"""The GPU kernels of perturbation-format frames: perturb_cpu's loop (`make_walk`, over
`cpu_tables`' arrays) compiled with libdevice's never-contracted operations, so the GPU performs
the CPU twin's operations in the same order and both give the same counts.

Why not perturb.py's loop, which the extended format keeps: Nsight Compute on the H100, 1e-100
bench re-render (tools/deep_profile.py; docs/PERFORMANCE.md, "Morning run, 2026-11-23"): its first
kernel issued an instruction in 81 % of its cycles, 292 per step of a warp, two thirds of them
integer work: the table walk run before every step (two-dimensional table and level reads, each
with 64-bit index arithmetic) and B·δc multiplied in floatexp. Here the test "does any BLA step
hold δ" reads the radius of the single step beside Z_m (the row the step reads anyway), and B is
a double (perturb_cpu.py says why that is exact).

Same launch scheme as perturb.py's kernels: persistent threads (or one thread per pixel), the
doubtful pixels listed for a redo kernel of their own.
"""
from __future__ import annotations

import math

from .floatexp import make_floatexp
from .perturb import REDO_SHIFT, cuda
from .perturb_cpu import make_walk

if cuda is not None:
    from .perturb import _FIRST_JIT, _gpu_add, _gpu_mul, _gpu_sqrt, _offset_gpu

    _walk_gpu, _passes_gpu = make_walk(_gpu_mul, _gpu_add, _gpu_sqrt, cuda.jit(device=True))
    _fe_norm, _, _, _fe_to_double, _ = make_floatexp(_gpu_mul, _gpu_add, cuda.jit(device=True))

    @cuda.jit(device=True)
    def _delta_c_gpu(r, c, d0r, d0i, step, cexp, half_w, half_h):
        """δc of pixel (r, c) as doubles: the operations of perturb's kernels (pixel_offset,
        fe_norm, fe_to_double), which perturb_cpu._delta_c repeats."""
        cmr, cmi = _offset_gpu(r, c, d0r, d0i, step, half_w, half_h)
        cnr, cni, cne = _fe_norm(cmr, cmi, cexp)
        return _fe_to_double(cnr, cni, cne)

    # Registers per thread of the first-pass kernel (perturb.py's comment on MAX_REGISTERS says
    # why a cap pays): ptxas gives it 76. Measured (H100, 1e-100 / 1e-30 bench frames, kernel ms,
    # tools/deep_profile.py, one call): no cap 12.3-12.5 / 16.1-16.5, 64: 12.0 / 15.3-15.7,
    # 56: 11.9-12.5 / 15.2-16.0, 48: 11.9-12.2 / 15.3-15.5, 40: 12.3-12.6 / 15.8-16.3.
    FLAT_MAX_REGISTERS = 56
    _FLAT_JIT = dict(_FIRST_JIT)
    if "max_registers" in _FLAT_JIT:
        _FLAT_JIT["max_registers"] = FLAT_MAX_REGISTERS

    @cuda.jit(**_FLAT_JIT)
    def deep_kernel_flat(values, counters, slot, p0, p1, dynamic, d0r, d0i, step, cexp, half_w,
                         half_h, zo, bt, levels, eps, max_iter, stats, redo, nredo):
        """perturb.deep_kernel_pert over cpu_tables' arrays: the first pass of pixels [p0, p1),
        the doubtful ones listed in redo[:nredo[0]]."""
        cols = values.shape[1]
        stride = cuda.gridsize(1)
        inj = math.ldexp(eps, 1)
        i = cuda.atomic.add(counters, slot, 1) + p0 if dynamic else p0 + cuda.grid(1)
        s0 = s1 = s2 = s3 = 0
        while i < p1:
            r = i // cols
            c = i - r * cols
            cdr, cdi = _delta_c_gpu(r, c, d0r, d0i, step, cexp, half_w, half_h)
            v, a, b, sk, rb, doubt = _walk_gpu(cdr, cdi, zo, bt, levels, max_iter, 1.0, inj)
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
    def deep_redo_flat(values, counters, slot, d0r, d0i, step, cexp, half_w, half_h, zo, bt,
                       levels, eps, max_iter, stats, redo, nredo):
        """The pixels deep_kernel_flat listed in redo[:nredo[0]], passes from REDO_SHIFT on,
        taken from counters[slot]."""
        cols = values.shape[1]
        k = cuda.atomic.add(counters, slot, 1)
        s0 = s1 = s2 = s3 = s4 = 0
        while k < nredo[0]:
            i = redo[k]
            r = i // cols
            c = i - r * cols
            cdr, cdi = _delta_c_gpu(r, c, d0r, d0i, step, cexp, half_w, half_h)
            v, a, b, sk, rb, _ = _passes_gpu(cdr, cdi, zo, bt, levels, eps, max_iter, REDO_SHIFT)
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
    deep_kernel_flat = deep_redo_flat = None
