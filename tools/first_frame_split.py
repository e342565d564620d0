"""Where a fresh process's first Mandelbrot frame spends its time, phase by phase, and the host
functions inside its unaccounted rest (cProfile), then the second and third frames for contrast.

    PYTHONPATH=. python tools/first_frame_split.py --backend cuda --size 1920x1080
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _line(name, t):
    from explorer.timing_breakdown import unaccounted_ms
    ph = {k: (round(v, 3) if v is not None else None) for k, v in t.phases_ms.items()}
    extra = {k: round(v, 3) for k, v in t.detail.items() if isinstance(v, float)}
    print(f"{name}: {ph} unaccounted {unaccounted_ms(t):.3f} ms; detail {extra}; "
          f"timed by {t.method}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cuda", choices=("cpu", "cuda"))
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    w, h = (int(v) for v in args.size.split("x"))
    t0 = time.perf_counter()
    from kernels import backend as backends
    be = backends.resolve(args.backend)
    t1 = time.perf_counter()
    from kernels.mandelbrot.jobs import make_renderer
    from services.requests import place_request
    reqs = [place_request("-0.7436438870", "0.1318259042", "1e-8", (w, h), 2000 + k)
            for k in range(3)]
    renderer = make_renderer(reqs[0], be)
    t2 = time.perf_counter()
    print(f"backend resolved (imports, driver, context probe): {(t1 - t0) * 1e3:.1f} ms; "
          f"renderer made: {(t2 - t1) * 1e3:.1f} ms")
    prof = cProfile.Profile()
    prof.enable()
    first = renderer.render(reqs[0])
    prof.disable()
    _line("frame 1", first.timings)
    for i, req in enumerate(reqs[1:], 2):
        _line(f"frame {i}", renderer.render(req).timings)
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
    print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
