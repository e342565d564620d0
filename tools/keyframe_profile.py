"""Where a keyframe's time goes (issue 37): keyframes of the 10-minute 1080p60 zoom to 1e-1000 at
Kormanyos's location drawn one after another by one KeyframeRenderer in this thread, each one's
wall time by depth, then a cProfile of --profile of them (host Python, and the waits for the GPU
as the synchronising calls' time).

--streams N draws each keyframe's sectors round robin on N deep renderers (streams:
expmap_render.STREAMS by default); --streams 1,2 times one against the other on the same keyframes,
one after the other keyframe by keyframe, and compares their values bit for bit. "span" is the
GPU's own span of a keyframe (events from its first launch to its last copy, every stream's work
joined): with streams overlapping, the kernels' phases summed ("kernels") count overlaps twice.
--launch one,sectors times a keyframe drawn as one frame (one first-pass launch over all its
sectors, one redo: expmap_render.LAUNCH "one") against its sectors drawn one by one, on each of
--streams (default: expmap_render.STREAMS), keyframe by keyframe, values compared bit for bit.
--own-orbit adds, per place, the same keyframes around an orbit of their own (values a few ulps
apart from the pinned orbit's), whose period stop at that keyframe's ball makes it shorter: how
much the orbit and table's size (the pinned one's 119 MB at 1e-1000 against 33 MB) costs.

    PYTHONPATH=. python tools/keyframe_profile.py --backend cuda [--size 1920x1080]
        [--at 0.1,0.5,0.9] [--streams 1,2] [--launch one,sectors] [--profile 0] [--own-orbit]
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

import numpy as np

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
    ap.add_argument("--own-orbit", action="store_true",
                    help="also time each place's keyframes around an orbit of their own (no pinned "
                         "or stored one: period-stopped at the place's first keyframe's ball, "
                         "shorter than the movie's), for the orbit's footprint in the caches")
    ap.add_argument("--streams", default=None,
                    help="deep renderers a keyframe's sectors go round robin to; several (1,2) "
                         "to time them against each other, values compared bit for bit")
    ap.add_argument("--launch", default=None,
                    help="how a keyframe's sectors are launched: one (one first pass and one redo "
                         "over all of them), sectors (each its own frame, on --streams), or both "
                         "(one,sectors) to time them against each other, values compared bit for "
                         "bit; default expmap_render.LAUNCH (sectors where --streams is given)")
    a = ap.parse_args(argv)
    if a.timing:
        from kernels import timing
        timing.set_method(a.timing)
        print(f"timing: {a.timing}", flush=True)
    from kernels.backend import resolve
    from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as loc
    from kernels.mandelbrot.keyframes.expmap_render import KeyframeRenderer, pinned_orbit
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
    counts = [None] if a.streams is None else [int(x) for x in a.streams.split(",") if x]
    from kernels.mandelbrot.keyframes.expmap_render import LAUNCH
    # --streams alone compares streams of the sector-by-sector launch, as it did before --launch
    launch = a.launch or ("sectors" if a.streams else LAUNCH)
    # one renderer per (launch, streams): streams matter to the sector-by-sector launch alone
    setups = list(dict.fromkeys((la, n if la != "one" else None)
                                for la in launch.split(",") if la for n in counts))
    t0 = time.perf_counter()
    with pinned_orbit(em):
        print(f"pinned orbit in {time.perf_counter() - t0:.2f} s", flush=True)
        renderers = {(la, n): KeyframeRenderer(be, streams=n, launch=la) for la, n in setups}
        for n, r in renderers.items():
            t0 = time.perf_counter()
            r.render(em, em.count - 1)
            print(f"first keyframe (compile, table) {_name(r)} "
                  f"{time.perf_counter() - t0:.2f} s", flush=True)
        same = True
        for f in (float(x) for x in a.at.split(",")):
            k0 = min(em.count - a.each, int(f * em.count))
            walls = {n: [] for n in renderers}
            kernels = {n: [] for n in renderers}
            spans = {n: [] for n in renderers}
            for k in range(k0 + a.each - 1, k0 - 1, -1):
                first = None
                for n, r in renderers.items():
                    t, kms = time.perf_counter(), r.kernel_ms
                    v = r.render(em, k)
                    walls[n].append((time.perf_counter() - t) * 1e3)
                    kernels[n].append(r.kernel_ms - kms)
                    spans[n].append(r.last_span_ms)
                    if first is None:
                        first = v
                    elif not np.array_equal(first, v, equal_nan=True):
                        same = False
                        print(f"   keyframe {k}: values {_name(r)} differ "
                              f"({int(np.sum(first != v))} samples)", flush=True)
            for n, r in renderers.items():
                sp = [x for x in spans[n] if x is not None]
                med = statistics.median(sp) if sp else None
                span = (f"; GPU span ms {' '.join(f'{x:.0f}' for x in sp)}, median {med:.1f} "
                        f"({med * 1e6 / em.samples:.1f} ns a sample)") if sp else ""
                print(f"at {f:.2f} (k {k0}..{k0 + a.each - 1}, limit {int(em.limits[k0])}), "
                      f"{_name(r)}: ms "
                      f"{' '.join(f'{x:.0f}' for x in walls[n])}; median "
                      f"{statistics.median(walls[n]):.1f}{span}; the kernels' own (GPU) ms "
                      f"{' '.join(f'{x:.0f}' for x in kernels[n])}", flush=True)
    if a.own_orbit:
        for f in (float(x) for x in a.at.split(",")):
            k0 = min(em.count - a.each, int(f * em.count))
            r = KeyframeRenderer(be, streams=setups[-1][1], launch=setups[-1][0])
            for d in r.deeps:
                d.references = None         # neither the pinned orbit nor the disk's
            r.render(em, k0 + a.each - 1)   # the orbit, stopped at this keyframe's ball
            walls, spans = [], []
            for k in range(k0 + a.each - 1, k0 - 1, -1):
                t = time.perf_counter()
                r.render(em, k)
                walls.append((time.perf_counter() - t) * 1e3)
                spans.append(r.last_span_ms)
            sp = [x for x in spans if x is not None]
            span = f"; GPU span median {statistics.median(sp):.1f}" if sp else ""
            print(f"at {f:.2f}, own orbit of {r.deep.orbit.length:,} points, {_name(r)}: ms "
                  f"{' '.join(f'{x:.0f}' for x in walls)}; median "
                  f"{statistics.median(walls):.1f}{span}", flush=True)
    if len(renderers) > 1:
        print(f"values the same bits {', '.join(_name(r) for r in renderers.values())}: "
              f"{'yes' if same else 'NO'}", flush=True)
    if a.profile <= 0:
        return 0 if same else 1
    # the renderers keep their copies of the pinned orbit: no pin needed from here on
    r = renderers[setups[-1]]
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
    return 0 if same else 1


def _name(r) -> str:
    """How a KeyframeRenderer launches a keyframe, in words."""
    if r.launch == "one":
        return "one launch"
    return f"sector by sector on {len(r.deeps)} stream(s)"


if __name__ == "__main__":
    sys.exit(main())
