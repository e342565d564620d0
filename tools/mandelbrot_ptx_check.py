"""Compile the Mandelbrot float64 and colouring kernels to PTX for a given compute capability on a
machine with no GPU (NVVM and NVRTC only): catches what the CUDA simulator cannot, such as a shared
array whose shape is an expression (NVVM wants one constant) or a type numba-cuda cannot lower.

    LD_LIBRARY_PATH=<folder with libnvrtc.so.13 or .12> python tools/mandelbrot_ptx_check.py [--cc 9.0]

numba-cuda asks the current device for the capability when it compiles device functions; with no
driver there is none, so this tool answers for it (a monkeypatch of numba-cuda internals: a dev
tool, never used by the app).
"""
import argparse
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", default="9.0", help="compute capability, e.g. 8.0 or 9.0")
    args = ap.parse_args()
    cc = tuple(int(v) for v in args.cc.split("."))
    from numba.cuda import dispatcher
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    from numba import cuda
    from numba import types as t

    from kernels.mandelbrot.colouring import colour_gpu as mc
    from kernels.mandelbrot.loops import escape_gpu as mk
    from kernels.mandelbrot.benches import escape_variants as ev
    from kernels.mandelbrot.loops import escape_warp as ew
    f2, u2, i2 = t.float64[:, :], t.uint32[:, :], t.int32[:, :]
    i1, f1, u1 = t.int64[:], t.float64[:], t.uint32[:]
    i, d = t.int64, t.float64
    kernels = {
        "escape_kernel": (ev.escape_kernel, (f2, i, i, i, i, d, d, d, d, d, i)),
        "escape_persistent_kernel": (ev.escape_persistent_kernel,
                                     (f2, i2, i1, i, i, i, i, i, i, d, d, d, d, d, i)),
        "escape_warp_kernel": (ew.escape_warp_kernel,
                               (f2, i2, t.uint32[:], t.int32[:], t.int32[:], i, i, i, i, i, d, d,
                                d, d, d, i)),
        "probe_kernel": (ev.probe_kernel, (f2, i2, i2, i, i, i, i, i, i, d, d, d, d, d, i)),
        "count_kernel": (ev.count_kernel, (i2, i, i, t.int32[:], i, i)),
        "scatter_kernel": (ev.scatter_kernel, (i2, i, i, t.int32[:], t.int32[:], t.int32[:], i, i)),
        "finish_kernel": (mk.finish_kernel, (f2, i2, i, i)),
        "zero_kernel": (mk.zero_kernel, (i1,)),
        "stats_init_kernel": (mc.stats_init_kernel, (f1, i1)),
        "stats_kernel": (mc.stats_kernel, (f2, i, f1)),
        "histogram_kernel": (mc.histogram_kernel, (f2, i, f1, i1)),
        "cdf_kernel": (mc.cdf_kernel, (i1, f1)),
        "colour_kernel": (mc.colour_kernel, (f2, u2, i, i, d, d, f1, f1, u1, i)),
    }
    failed = 0
    for name, (kernel, sig) in kernels.items():
        try:
            ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc)
            fma = ptx.count("fma.rn.f64")
            print(f"{name}: ok ({len(ptx):,} characters of PTX, {fma} fused multiply-adds)")
        except Exception as exc:  # report every kernel, then fail
            failed += 1
            print(f"{name}: FAILED {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
