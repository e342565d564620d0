"""The bench's deep float32 frame (1e-25, 10,000 iterations) with launch and loop variants of the
float32-delta first-pass kernel beside the app's float64 and float32 loops, alternating rounds in
one process: kernel ms, ps a step, registers, and whether each variant's values equal the app's
float32 values bit for bit.

    python tools/deep_f32_variants.py [--size 1920x1080] [--rounds 3] [--repeats 3] VARIANT...

A variant is TYPE[@rREGS][@tTHREADS]: TYPE f64 or f32 (the app's loops), @rN the first-pass
kernel compiled with a cap of N registers a thread, @tN N threads a block (the persistent launch's
blocks are then as many as fit). tools/gpu_f32_deep_probe.sh runs it beside Nsight Compute.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
from contextlib import contextmanager

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_SPEC = re.compile(r"^(f64|f32)(?:@r(\d+))?(?:@t(\d+))?$")


def _registers(kernel):
    try:
        got = kernel.get_regs_per_thread()
        return int(max(got.values()) if isinstance(got, dict) else got)
    except Exception:
        return None


def _first_kernel(regs: int):
    """deep_kernel_flat32 compiled anew with a cap of `regs` registers a thread."""
    from numba import cuda

    from kernels.mandelbrot.loops import perturbation_loop as pl
    return _jit(cuda, regs)(pl.deep_kernel_flat32.py_func)


def _jit(cuda, regs):
    """cuda.jit with a register cap (the simulator's takes none)."""
    from kernels.backend import simulator_enabled
    return cuda.jit if simulator_enabled() else cuda.jit(max_registers=regs)


@contextmanager
def _patched(module, name, value):
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    import numpy as np

    from kernels import backend as backends
    from kernels import bench
    from kernels.mandelbrot.bench import FLOAT32_DEEP
    from kernels.mandelbrot.deep import gpu_pixels
    from kernels.mandelbrot.loops import perturbation_loop as pl
    from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as loc
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    from kernels.mandelbrot.loops.targets import LoopCode
    be = backends.resolve("cuda")
    w, _, h = args.size.partition("x")
    width, iters, _ = FLOAT32_DEEP
    req = DeepRequest(loc.center_re, loc.center_im, width, (int(w), int(h)), iters)
    runs = {}
    for spec in args.variants:
        got = _SPEC.match(spec)
        if not got:
            print(f"deep_f32_variants: not a variant: {spec}", file=sys.stderr)
            return 2
        kind, regs, threads = got.groups()
        if kind == "f32" and regs:
            code = LoopCode(pl.CODE32.cpu_rows, _first_kernel(int(regs)), pl.CODE32.gpu_redo)
        elif kind == "f64" and regs:
            from numba import cuda
            kernel = _jit(cuda, int(regs))(pl.CODE.gpu_first.py_func)
            code = LoopCode(pl.CODE.cpu_rows, kernel, pl.CODE.gpu_redo)
        else:
            code = pl.CODE32 if kind == "f32" else pl.CODE
        r = DeepRenderer(be)
        r.number_type = "float32" if kind == "f32" else "float64"
        runs[spec] = dict(r=r, code=code, threads=int(threads or gpu_pixels.THREADS),
                          kind=kind, ms=[])

    def render(run):
        name = "CODE32" if run["kind"] == "f32" else "CODE"
        with _patched(pl, name, run["code"]), _patched(gpu_pixels, "THREADS", run["threads"]):
            return run["r"].render_values(req)

    for spec, run in runs.items():     # reference, table, compile
        run["first"] = render(run)
    order = list(runs)
    for i in range(args.rounds):
        k = i % len(order)
        for spec in order[k:] + order[:k]:
            run = runs[spec]
            got, _ = bench.time_runs(lambda: render(run).timings, args.repeats, warmup=1)
            # the simulator times no GPU phases: the frame's wall time stands in
            run["ms"].append(statistics.median(t.phases_ms.get("kernel") or t.phases_ms.get("total") or 1.0
                                               for t in got))
    base = runs.get("f64") or next(iter(runs.values()))
    app32 = runs.get("f32")
    print(f"deep {width}, {iters} iterations, {w}x{h}; kernel ms median of {args.rounds} rounds "
          f"x {args.repeats} repeats; ratio = {order[0] if 'f64' not in runs else 'f64'} / variant")
    for spec, run in runs.items():
        st = run["first"].stats
        steps = st["perturbation_steps"] + st["bla_steps"]
        med = statistics.median(run["ms"])
        same = ("" if app32 is None or run["kind"] != "f32" else
                " values " + ("same" if np.array_equal(run["first"].values, app32["first"].values)
                              else "DIFFER"))
        print(f"  {spec:<18} {med:8.3f} ms  x{statistics.median(base['ms']) / med:5.3f}  "
              f"{med * 1e9 / steps:6.2f} ps/step  regs {_registers(run['code'].gpu_first)}  "
              f"threads {run['threads']}  rounds {' '.join(f'{v:.2f}' for v in run['ms'])}"
              f"  steps {st['perturbation_steps']:,}+{st['bla_steps']:,}{same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
