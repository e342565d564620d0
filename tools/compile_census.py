"""Where the CPU kernels' compile time goes: every numba dispatcher the app's warm-ups compile, with
the seconds each took and the signatures it was compiled for.

    python tools/compile_census.py [--cache DIR] [--only float64|deep|colour]

Runs the warm-ups the app runs on the CPU backend (the float64 renderer's, the colouring kernels',
the deep renderer's), timing each dispatcher's compile (or load from numba's disk cache). Without
--cache the cache is an empty temporary folder, so the figures are those of a first start; with
--cache DIR a second run over the same DIR shows the cached start. Times are exclusive: a helper
compiled while its caller compiles counts for the helper, not twice. On a shared machine note the
load (`uptime`) beside the figures.
"""
import argparse
import os
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", help="numba cache folder (default: a new empty one)")
    ap.add_argument("--only", choices=("float64", "colour", "deep"), action="append",
                    help="only these warm-ups (repeatable; default: all)")
    args = ap.parse_args()
    os.environ["NUMBA_CACHE_DIR"] = args.cache or tempfile.mkdtemp(prefix="numba-census-")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    t0 = time.perf_counter()
    from numba.core import dispatcher
    records, stack = [], []
    plain = dispatcher.Dispatcher.compile

    def timed(self, sig):
        known = len(self.overloads)
        start = time.perf_counter()
        stack.append(0.0)
        try:
            return plain(self, sig)
        finally:
            inner = stack.pop()
            spent = time.perf_counter() - start
            if stack:
                stack[-1] += spent
            if len(self.overloads) > known:     # a new specialisation, compiled or loaded
                name = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
                records.append((spent - inner, spent, name, str(sig)))
    dispatcher.Dispatcher.compile = timed

    from kernels.backend import Backend
    from kernels.timing import JobTimer
    t_import = time.perf_counter() - t0
    cpu = Backend("cpu")
    steps = []

    def step(what, fn):
        s = time.perf_counter()
        fn()
        steps.append((what, time.perf_counter() - s))

    only = set(args.only or ("float64", "colour", "deep"))
    if "float64" in only:
        from kernels.mandelbrot.frames.cpu_target import CpuTarget
        from kernels.mandelbrot.renderer import PixelGrid, _cuts
        from kernels.mandelbrot.requests.request import MandelbrotRequest
        import numpy as np
        req = MandelbrotRequest(-0.5, 0.0, 3.0, (4, 3), 8)
        timer = JobTimer(cpu, None, "census")
        step("float64 escape pass", lambda: CpuTarget(cpu, _cuts).escape(
            np.zeros((3, 4)), PixelGrid.of(req).args(0, 8), timer, None, None))
    if "colour" in only:
        from kernels.mandelbrot.colouring.colourer import Colourer
        step("colouring (3 mappings)", lambda: Colourer(cpu).warm(JobTimer(cpu, None, "census")))
    if "deep" in only:
        from kernels.mandelbrot.deep.renderer import FORMATS, DeepRenderer
        deep = DeepRenderer(cpu)
        step("deep table builder", lambda: deep.warmup())
        for fmt in FORMATS:
            step(f"deep {fmt} loop", lambda fmt=fmt: deep.warmup((fmt,)))

    print(f"numba cache: {os.environ['NUMBA_CACHE_DIR']}; imports {t_import:.2f} s")
    for what, s in steps:
        print(f"{s:8.2f} s  {what}")
    print("\nper dispatcher (exclusive s, inclusive s, signature):")
    for excl, incl, name, sig in sorted(records, reverse=True):
        print(f"{excl:8.2f} {incl:8.2f}  {name}{sig}")
    counts = {}
    for _, _, name, _ in records:
        counts[name] = counts.get(name, 0) + 1
    extra = {n: k for n, k in counts.items() if k > 1}
    if extra:
        print("\nmore than one specialisation:", ", ".join(f"{n} ×{k}" for n, k in extra.items()))


if __name__ == "__main__":
    main()
