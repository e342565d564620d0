"""Kernel times alone and beside a busy Python thread, timed by bare events, behind the gate and by
CUPTI (where it runs), in one process (issue 33's check): every vector implementation's `add` at N, a float64 Mandelbrot frame and
a deep re-render.

    PYTHONPATH=. python tools/busy_thread_bench.py --backend cuda --json busy.json

Each row: median kernel ms alone, beside the busy thread, alone again; the ratio busy/alone.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Busy:
    """A thread running plain Python loops (as a GUI thread does while it repaints)."""

    def __enter__(self):
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()
        return self

    def _spin(self):
        n = 0
        while not self.stop.is_set():
            for i in range(2000):
                n += i

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def _vector_rows(be, n, repeats, in_process=False):
    from kernels.vector.cpu_process import point_runner
    from kernels.vector.registry import implementations
    from kernels.vector.runner import PointRunner
    # the sweep's and the bench's runner (CPU points in a helper process), or this process's
    runner = (PointRunner if in_process else point_runner)(be, repeats=repeats, budget_s=10.0)
    for impl in implementations(be):
        if not impl.available or "add" not in impl.ops:
            continue
        yield impl.name, lambda impl=impl: runner.measure("add", impl, "kernel", n).kernel_ms
        if impl.name == "cuda-jit":      # end to end: copies in, kernel, copy out
            for mode in ("pinned", "pageable"):
                yield f"{impl.name} {mode}", \
                    lambda impl=impl, mode=mode: runner.measure("add", impl, mode, n).time_ms


def _frame_rows(be, repeats):
    from kernels.mandelbrot.jobs import make_renderer
    from services.requests import place_request
    places = (("float64 frame 1024²", ("-0.743643887037151", "0.13182590420533", "1e-10", 4000)),
              ("deep re-render 1024²", ("-1.99999911758766165543764649311537154663",
                                        "-4.2968143331995862493193367753690325e-31",
                                        "1e-33", 5000)))
    for name, (re_, im_, wd, iters) in places:
        # two requests a pixel apart, alternated: a renderer may keep the values of a repeat
        reqs = [place_request(re_, im_, wd, (1024, 1024), iters + k) for k in (0, 1)]
        renderer = make_renderer(reqs[0], be)
        for req in reqs:
            renderer.render(req)        # compile, reference, table

        def one(renderer=renderer, reqs=reqs):
            times = [renderer.render(reqs[i % 2]).timings.get("kernel") for i in range(repeats)]
            return statistics.median(t for t in times if t is not None)
        yield name, one


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("cpu", "cuda"), default="cuda")
    ap.add_argument("--log2n", type=int, default=24)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-frames", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--in-process", action="store_true",
                    help="measure the CPU points in this process, not in the helper (as before)")
    args = ap.parse_args(argv)
    from kernels import backend as backends
    from kernels import timing
    from kernels.bench import device_name
    be = backends.resolve(args.backend)
    rows = list(_vector_rows(be, 1 << args.log2n, args.repeats, args.in_process))
    if not args.no_frames:
        rows += list(_frame_rows(be, args.repeats))
    out = []
    print(f"{device_name(be)}: median kernel ms, N = 2^{args.log2n}")
    print(f"{'what':24} {'method':28} {'alone':>9} {'busy':>9} {'alone':>9} {'busy/alone':>10}")
    from kernels import cupti_records
    methods = ["events", "gate"] + (["cupti"] if cupti_records.start() else [])
    if not cupti_records.start():
        print(f"CUPTI: {cupti_records.why()}")
    names = {"events": timing.EVENTS, "gate": timing.GATED, "cupti": timing.CUPTI}
    for setting in methods:
        timing.set_method(setting)
        for name, measure in rows:
            a = measure()
            with Busy():
                b = measure()
            c = measure()
            method = names[setting] if be.is_gpu else timing.WALL
            if name in ("cpu-numba", "numpy"):    # their own clocks, whatever times the GPU
                method = "stamped native clock" if name == "cpu-numba" else "thread CPU time"
            ratio = b / min(a, c) if a and c and b else None
            out.append({"what": name, "method": method, "alone_ms": a, "busy_ms": b,
                        "alone_again_ms": c, "ratio": ratio})
            print(f"{name:24} {method:28} {a:9.4f} {b:9.4f} {c:9.4f} "
                  f"{ratio if ratio is not None else float('nan'):10.2f}")
        if not be.is_gpu:
            break
    timing.set_method("auto")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"device": device_name(be), "log2n": args.log2n, "rows": out}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
