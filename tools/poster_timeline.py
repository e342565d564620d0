#!/usr/bin/env python3
"""Where a poster's time goes on one GPU and on several, worker by worker: each band's start and
end on its worker's clock, so that the poster's wall time splits into the workers' busy time,
their waits between bands and the tail (a worker done while another still renders). Rounds
alternate the cases. A pool of several GPUs sets its own thread switch interval while open
(kernels/spread/handover.py); `--switch S` also times each case with the interval set to S seconds
(0.005: the interpreter's default), the GIL's hand-over between workers.

    python3 tools/poster_timeline.py --poster deep-1e100 --repeats 5 [--switch 0.0002]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _phases(request):
    """extra= for TimedBand: the phases (ms) of the deep frame a worker's pool renderer made last
    for `request`'s picture, or ''."""
    from kernels.mandelbrot.jobs import renderer_of
    from kernels.mandelbrot.tiles import ROLE

    def phases(worker) -> str:
        last = getattr(renderer_of(worker, request, ROLE), "_last", None)
        if last is None:
            return ""
        t = last[1].timings
        ph = {k: v for k, v in t.phases_ms.items() if v}
        ph.update({k: v for k, v in t.detail.items() if isinstance(v, float) and v > 0.05})
        return " ".join(f"{k} {v:.1f}" for k, v in ph.items())
    return phases


def split(took: float, t0: float, log) -> tuple[dict, list]:
    """The poster's wall time split per worker (busy, waits between its bands, tail after its
    last band, its bands' count, median and longest), and lines naming the phases of each
    worker's two longest bands and its shortest."""
    from kernels.spans import covered
    per = {}
    for name, a, b, ph in log:
        per.setdefault(name, []).append((a - t0, b - t0, ph))
    out, lines = {}, []
    for name, spans in sorted(per.items(), key=lambda kv: kv[0]):
        spans.sort()
        busy = covered([(a, b) for a, b, _ in spans])      # a band started ahead overlaps
        waits, reach = 0.0, 0.0
        for a, b, _ in spans:
            waits += max(0.0, a - reach)
            reach = max(reach, b)
        each = sorted(b - a for a, b, _ in spans)
        by = sorted(spans, key=lambda x: x[0] - x[1])
        lines.extend(
            f"{name} {(b - a) * 1e3:.1f} ms at {a * 1e3:.0f} ms: {ph}" for a, b, ph in (by[:2] + by[-1:] if len(by) > 3 else by))
        out[name] = {"bands": len(spans), "busy": busy, "waits": waits, "tail": took - reach,
                     "median": each[len(each) // 2], "longest": each[-3:][::-1]}
    return out, lines


def main() -> int:
    from cli.heap import heap_frozen
    from kernels.mandelbrot.tiles import BandInto, BandJob, bands, picture_rows
    from kernels.spread import open_pool
    from spread_bench import TimedBand, posters, warm
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--poster", default="deep-1e100")
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--gpus", default="0,1")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--switch", type=float, default=None)
    ap.add_argument("--phases", action="store_true",
                    help="print the phases of each case's longest bands and its shortest")
    ap.add_argument("--many-only", action="store_true",
                    help="time only the pool of several GPUs (a profiler's run)")
    a = ap.parse_args()
    request = posters(a.size)[a.poster]
    w, h = request.size
    cut = bands(h, picture_rows(request))
    picture = np.zeros((h, w, 4), np.uint8)
    pools = {"1 GPU": open_pool("cuda", gpus=a.gpus.split(",")[0]),
             f"GPUs {a.gpus}": open_pool("cuda", gpus=a.gpus)}
    switches = [None] + ([a.switch] if a.switch else [])
    default_switch = sys.getswitchinterval()
    times: dict = {}
    note = _phases(request)
    try:
        for pool in pools.values():
            warm(pool, request, w)
        print("timing", flush=True)     # a profiler may attach from here
        with heap_frozen():
            for rep in range(a.repeats):
                for sw in switches:
                    sys.setswitchinterval(sw or default_switch)
                    for case, pool in pools.items():
                        if a.many_only and pool.workers == 1:
                            continue
                        log: list = []
                        jobs = [TimedBand(BandInto(BandJob(request, r0, n), picture), log,
                                          note) for r0, n in cut]
                        t0 = time.perf_counter()
                        for _ in pool.ordered(jobs):
                            pass
                        took = time.perf_counter() - t0
                        key = (case, sw)
                        times.setdefault(key, []).append(took)
                        parts, phases = split(took, t0, log)
                        detail = "; ".join(f"{n}: {p['bands']} bands busy {p['busy']:.3f} waits "
                                           f"{p['waits'] * 1e3:.1f} ms tail {p['tail'] * 1e3:.1f} ms, "
                                           f"bands median {p['median'] * 1e3:.1f} ms longest "
                                           + "/".join(f"{x * 1e3:.1f}" for x in p["longest"])
                                           for n, p in parts.items())
                        print(f"rep {rep} switch {sw or default_switch:g} {case}: {took:.3f} s "
                              f"[{detail}]", flush=True)
                        if a.phases:        # the two longest bands and the shortest
                            print("    " + "\n    ".join(phases), flush=True)
    finally:
        sys.setswitchinterval(default_switch)
        for pool in pools.values():
            pool.close()
    one, many = list(pools)
    for sw in switches if not a.many_only else ():
        t1, t2 = times[(one, sw)], times[(many, sw)]
        ratios = [x / y for x, y in zip(t1, t2)]
        print(f"switch {sw or default_switch:g}: 1 GPU best {min(t1):.3f} median {np.median(t1):.3f}; "
              f"{many} best {min(t2):.3f} median {np.median(t2):.3f}; best/best {min(t1) / min(t2):.2f}x, "
              f"per round {' '.join(f'{r:.2f}' for r in ratios)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
