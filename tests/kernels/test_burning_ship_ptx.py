"""Burning Ship's GPU kernels compiled to PTX without a GPU (the toolkit leg): the step's
absolute value is there, and its multiplies and adds stay explicitly rounded, none fused into an
FMA (the kernels have no more FMAs than Mandelbrot's), so the GPU iterates exactly as the CPU twin
does; the Mandelbrot kernels have no abs."""
from __future__ import annotations

import re

from ptx_compile import compile_ptx as _ptx  # tests/kernels/ptx_compile.py

F64 = "float64[:, ::1]"
GRID = "int64, int64, float64, float64, float64, float64, float64"
SIGS = {
    "warp": f"{F64}, int32[:, ::1], uint32[::1], int32[::1], int32[::1], int64, int64, int64, "
            f"{GRID}, int64",
    "slice": f"{F64}, {F64}, {F64}, int64[::1], int64, int64, {GRID}, int64, int64, int64",
    "count": f"{F64}, int64[::1], {GRID}, int64",
}


def test_the_ships_kernels_take_abs_and_fuse_nothing(monkeypatch, numba_cuda):
    from kernels.mandelbrot.loops import escape_gpu, escape_warp
    from kernels.mandelbrot.frames import frame_work_gpu
    kernels = {"warp": (escape_warp.escape_warp_kernel, escape_warp.escape_warp_kernel_ship),
               "slice": (escape_gpu.escape_slice_kernel, escape_gpu.escape_slice_kernel_ship),
               "count": (frame_work_gpu.count_kernel, frame_work_gpu.count_kernel_ship)}
    for name, (mandelbrot, ship) in kernels.items():
        got = _ptx(monkeypatch, numba_cuda, ship.py_func, SIGS[name])
        plain = _ptx(monkeypatch, numba_cuda, mandelbrot.py_func, SIGS[name])
        # FMAs only where Mandelbrot's kernel has them too (libdevice's log in the smooth value)
        fused = re.compile(r"\bfma\.rn\.f64\b")
        assert len(fused.findall(got)) == len(fused.findall(plain)), name
        if name == "count":         # no iteration: the ship's has no shortcut's arithmetic
            assert len(got) < len(plain)
            continue
        assert re.search(r"\babs\.f64\b", got) and not re.search(r"\babs\.f64\b", plain), name
        assert re.search(r"\bmul\.rn\.f64\b", got) and re.search(r"\badd\.rn\.f64\b", got)
