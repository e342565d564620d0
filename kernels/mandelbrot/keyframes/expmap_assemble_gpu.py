"""The GPU half of expmap_assemble.py: the sampling (expmap_sample.py) compiled for numba.cuda. Only
GPU code imports this module, so a CPU movie never imports numba.cuda (escape_gpu.py does the same).
Where numba.cuda cannot import (no CUDA runtime), the module still imports and has no kernel."""
from __future__ import annotations

from ..loops.escape_gpu import cuda    # by this name: None where numba-cuda did not import
from .expmap_sample import make_sample

if cuda is not None:
    _value = make_sample(cuda.jit(device=True))

    @cuda.jit(cache=True)
    def assemble_kernel(out, stack, slot_of, sec, ax, ay, lw, limit, outer, first, last):
        """out (Hpx, Wpx) ← the frame's smooth counts, one thread per pixel (keyframes in
        sectors)."""
        c, r = cuda.grid(2)
        hpx, wpx = out.shape
        if r < hpx and c < wpx:
            out[r, c] = _value(r, c, hpx, wpx, stack, slot_of, sec, ax, ay, lw, limit, outer,
                               first, last)
