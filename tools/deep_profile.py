"""Render one deep bench frame on the GPU a few times, for a profiler to look at its kernels:
    python3 tools/deep_profile.py [--width 1e-100] [--iters 50000] [--renders 3]
Prints the kernels' registers and local memory per thread, and each render's kernel ms. Under
Nsight Compute, skip the warm-up's and the first frame's launches, e.g.
    ncu --clock-control none --kernel-name regex:'deep_(kernel|redo)_flat' --launch-skip 4 \
        --launch-count 2 --set full -o prof python3 tools/deep_profile.py --renders 2
"""
from __future__ import annotations

import argparse

from kernels.backend import resolve
from kernels.mandelbrot.loops import extended_loop as ext
from kernels.mandelbrot.loops import perturbation_loop as pl
from kernels.mandelbrot.benches.bench import DEPTHS, FULL_HD, _request
from kernels.mandelbrot.deep.renderer import DeepRenderer


def _regs(kernel):
    """Per compiled signature (none where this run did not use the kernel)."""
    regs = list(kernel.get_regs_per_thread().values())
    local = list(kernel.get_local_mem_per_thread().values())
    return f"registers {regs}, local bytes {local}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--width", default="1e-100")
    p.add_argument("--iters", type=int, default=None)
    p.add_argument("--renders", type=int, default=3)
    args = p.parse_args(argv)
    iters = args.iters or {w: n for _, w, n in DEPTHS}.get(args.width, 50_000)
    backend = resolve("cuda")
    r = DeepRenderer(backend)
    r.warmup()
    req = _request(args.width, FULL_HD, iters)
    for k in range(args.renders):
        res = r.render_values(req)
        print(f"render {k}: kernel {res.timings.phases_ms['kernel']:.2f} ms, "
              f"redone {res.stats.get('redone_pixels')}, format {res.format}", flush=True)
    for mod, name in ((pl, "deep_kernel_flat"), (pl, "deep_redo_flat"),
                      (pl, "deep_kernel_pert"), (pl, "deep_redo_pert"),
                      (ext, "deep_kernel_ext"), (ext, "deep_redo_ext")):
        print(name, _regs(getattr(mod, name)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
