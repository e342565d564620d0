"""Where a keyframe's time goes (issue 37): keyframes of the 10-minute 1080p60 zoom to 1e-1000 at
Kormanyos's location drawn one after another by one KeyframeRenderer in this thread, each one's
wall time by depth, then a cProfile of --profile of them (host Python, and the waits for the GPU
as the synchronising calls' time).

    PYTHONPATH=. python tools/keyframe_profile.py --backend cuda [--size 1920x1080] [--at 0.1,0.5,0.9]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--fps", type=int, default=60)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--width", default="1e-1000")
    ap.add_argument("--at", default="0.02,0.25,0.5,0.75,0.98",
                    help="where in the zoom (0 shallow .. 1 deepest) to time keyframes")
    ap.add_argument("--each", type=int, default=6, help="keyframes timed at each place")
    ap.add_argument("--profile", type=int, default=12, help="keyframes profiled (at the middle)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--timing", default=None, help="GPU timing method: auto, cupti, gate, events")
    a = ap.parse_args(argv)
    if a.timing:
        from kernels import timing
        timing.set_method(a.timing)
        print(f"timing: {a.timing}", flush=True)
    from kernels.backend import resolve
    from kernels.mandelbrot.deep.locations import KORMANYOS_VERY_DEEP as loc
    from kernels.mandelbrot.expmap_render import KeyframeRenderer, pinned_orbit
    from services.movie import MovieSpec, prepare
    from services.movie_keyframes import keyframe_map
    w, h = (int(v) for v in a.size.split("x"))
    spec = MovieSpec(out="/tmp/kfprof/unused%05d.png", size=(w, h), fps=a.fps, seconds=a.seconds,
                     center=f"{loc.center_re[:1200]},{loc.center_im[:1200]}", width=a.width,
                     colouring=(("mapping", "sqrt"),), keyframes=True)
    os.makedirs("/tmp/kfprof", exist_ok=True)
    movie = prepare(spec, open_encoder=False)
    em = keyframe_map(movie)
    print(f"{em.count} keyframes, {em.samples} samples each in {len(em.sectors)} sectors "
          f"(cols x rows: {[(s[0], s[2]) for s in em.sectors]})", flush=True)
    be = resolve(a.backend)
    t0 = time.perf_counter()
    with pinned_orbit(em):
        print(f"pinned orbit in {time.perf_counter() - t0:.2f} s", flush=True)
        r = KeyframeRenderer(be)
        t0 = time.perf_counter()
        r.render(em, em.count - 1)
        print(f"first keyframe (compile, table) {time.perf_counter() - t0:.2f} s", flush=True)
        for f in (float(x) for x in a.at.split(",")):
            k0 = min(em.count - a.each, int(f * em.count))
            walls, kernels = [], []
            for k in range(k0 + a.each - 1, k0 - 1, -1):
                t, kms = time.perf_counter(), r.kernel_ms
                r.render(em, k)
                walls.append((time.perf_counter() - t) * 1e3)
                kernels.append(r.kernel_ms - kms)
            print(f"at {f:.2f} (k {k0}..{k0 + a.each - 1}, limit {int(em.limits[k0])}): ms "
                  f"{' '.join(f'{x:.0f}' for x in walls)}; median {statistics.median(walls):.1f}; "
                  f"the kernels' own (GPU) ms {' '.join(f'{x:.0f}' for x in kernels)}",
                  flush=True)
        k0 = em.count // 2
        prof = cProfile.Profile()
        t = time.perf_counter()
        prof.enable()
        for k in range(k0 + a.profile - 1, k0 - 1, -1):
            r.render(em, k)
        prof.disable()
        wall = time.perf_counter() - t
        print(f"profiled {a.profile} keyframes at the middle: {wall / a.profile * 1e3:.1f} ms each")
        for key in ("tottime", "cumulative"):
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats(key).print_stats(a.top)
            print("\n".join(line[:160] for line in s.getvalue().splitlines()[6:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
