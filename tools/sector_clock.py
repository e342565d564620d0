"""One keyframe sector's kernel time three ways (issue 37's profile found CUPTI and events 10x
apart on keyframe sectors): the wall clock around the sector with the stream idle before and
after, the kernel phase by CUDA events, and by CUPTI's records, in one process.

    PYTHONPATH=. python tools/sector_clock.py [--at 0.98] [--sector 3] [--repeats 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--at", type=float, default=0.98)
    ap.add_argument("--sector", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    from kernels import timing
    from kernels.backend import resolve
    from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as loc
    from kernels.mandelbrot.keyframes.expmap_render import KeyframeRenderer, keyframe_request, pinned_orbit
    from services.movie import MovieSpec, prepare
    from services.movie_keyframes import keyframe_map
    spec = MovieSpec(out="/tmp/sector%05d.png", size=(1920, 1080), fps=60, seconds=600,
                     center=f"{loc.center_re[:1200]},{loc.center_im[:1200]}", width="1e-1000",
                     colouring=(("mapping", "sqrt"),), keyframes=True)
    em = keyframe_map(prepare(spec, open_encoder=False))
    k = min(em.count - 1, int(a.at * em.count))
    with pinned_orbit(em):
        r = KeyframeRenderer(resolve("cuda"))
        r.render(em, k)                             # compiles, builds the table
        stream = r.deep.stream
        for method in ("events", "cupti", "events", "cupti"):
            timing.set_method(method)
            walls, kernels, how = [], [], set()
            for _ in range(a.repeats):
                stream.synchronize()
                t0 = time.perf_counter()
                res = r.deep.start_values(keyframe_request(em, k, a.sector).validate(),
                                          to_host=False).result()
                stream.synchronize()
                walls.append((time.perf_counter() - t0) * 1e3)
                kernels.append(res.timings.get("kernel") or 0.0)
                how.add(res.timings.method)
            print(f"{method:>6}: keyframe {k} sector {a.sector} ({em.sectors[a.sector][0]}x"
                  f"{em.sectors[a.sector][2]}): wall {statistics.median(walls):.1f} ms, kernel "
                  f"phase {statistics.median(kernels):.1f} ms ({', '.join(sorted(how))}); "
                  f"walls {' '.join(f'{w:.1f}' for w in walls)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
