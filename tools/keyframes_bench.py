"""Issue 37's benchmark: a zoom movie from exponential-map keyframes against the per-frame method,
and the assembled frames' quality against frames rendered directly. Three parts, each its own
subcommand so a GPU session can run them in separate calls:

  movie     the whole `main.py --movie OUT --keyframes` command, timed from outside, with its own
            lines (keyframe count and time, frames and assembly time, encode); --no-encode (or no
            PyAV) times the keyframes and the assembly in-process without encoding, and says so
  perframe  the per-frame method on the first --per-frame-seconds of the same zoom (the same
            36,000-frame course, frames 0 .. N-1 rendered as --movie renders them, the movie's
            pinned reference, no encoding), its time per frame and keyframes_speedup: that time
            over the keyframe movie's per frame (above 1: the keyframes are faster)
  keyframes the zoom's keyframes alone on the pool (--gpus), timed from the first job to the
            last after a warm-up job per worker: the keyframes' speed-up on more GPUs
  quality   --quality N frames spread over the zoom by depth: each assembled from its keyframes
            and rendered directly; SSIM on the colours, a keyframe's counts at 16 of its samples
            against one-pixel deep frames centred exactly there, escape counts within ±1 where a keyframe
            sample sits on the pixel (within SAME_POINT_PX), at --sample-pixels random pixels
            against one-pixel deep frames centred exactly on the keyframe sample each pixel is
            given (the two methods at one point), and over every pixel

  PYTHONPATH=. python tools/keyframes_bench.py movie|perframe|quality|keyframes [--size 1920x1080]
      [--fps 60] [--seconds 600] [--width 1e-1000] [--backend cuda] [--gpus 0] [--json FILE]

Prints one line per figure and writes them to --json (appended by part).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

# a keyframe sample this close to a pixel's centre (in pixels) samples "the same point": near
# the set, counts change by several within a tenth of a pixel
SAME_POINT_PX = 0.01
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


CENTRE = None        # --center X,Y: the zoom's target (default Kormanyos's very deep location)


def _place():
    if CENTRE:
        return tuple(v.strip() for v in CENTRE.split(","))
    from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as loc
    return loc.center_re[:1200], loc.center_im[:1200]


def _spec(a, out, keyframes=True):
    from services.movie import MovieSpec
    cre, cim = _place()
    return MovieSpec(out=out, size=a.size, fps=a.fps, seconds=a.seconds, center=f"{cre},{cim}",
                     width=a.width, colouring=(("mapping", "sqrt"),), keyframes=keyframes,
                     oversample=a.oversample)


def _emit(a, part: str, figures: dict) -> None:
    for k, v in figures.items():
        print(f"{part}: {k} = {v}")
    if a.json:
        old = {}
        if os.path.exists(a.json):
            with open(a.json) as f:
                old = json.load(f)
        old[part] = figures
        with open(a.json, "w") as f:
            json.dump(old, f, indent=1)


def part_movie(a) -> None:
    try:
        import av  # noqa: F401
        encode = not a.no_encode
    except ImportError:
        encode = False
    out = os.path.join(a.out, "keyframes.mp4")
    if encode:
        cre, cim = _place()
        cmd = [sys.executable, "main.py", "--movie", out, "--keyframes", "--restart",
               "--backend", a.backend, "--size", f"{a.size[0]}x{a.size[1]}", "--fps", str(a.fps),
               "--seconds", str(a.seconds), "--center", f"{cre},{cim}", "--width", a.width,
               "--oversample", str(a.oversample)] + (["--gpus", a.gpus] if a.gpus else [])
        t0 = time.perf_counter()
        try:
            run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                                 timeout=a.timeout)
        except subprocess.TimeoutExpired as exc:
            # what the command finished before it was stopped, as its parts folder shows it
            for part in (exc.stdout, exc.stderr):
                if part:
                    text = part.decode(errors="replace") if isinstance(part, bytes) else part
                    print(text[-3000:].replace("\r", "\n")[-3000:])
            parts = out + ".parts"
            done = len([n for n in os.listdir(parts) if n.startswith("segment-")]) \
                if os.path.isdir(parts) else 0
            _emit(a, "movie", {"timed_out_after_s": a.timeout, "segments_done": done,
                               "frames_done": done * a.fps, "frames": a.frames,
                               "gpus": a.gpus or "default"})
            return
        wall = time.perf_counter() - t0
        text = run.stdout + run.stderr
        print(text[-3000:])
        m = re.search(r"keyframes: (\d+) of (\d+) samples in (\d+) sectors \((\d+) drawn in "
                      r"([\d.]+) s of jobs, the first batch's in ([\d.]+) s", text)
        f = re.search(r"frames: (\d+) (?:assembled|made) in ([\d.]+) s of jobs \(([\d.]+) ms", text)
        e = re.search(r"encode ([\d.]+) s on (\d+) lane", text)
        figures = {"rc": run.returncode, "whole_command_s": round(wall, 2), "encoded": True,
                   "frames": a.frames, "gpus": a.gpus or "default"}
        if m:
            figures.update(keyframes=int(m[1]), keyframe_samples=int(m[2]), sectors=int(m[3]),
                           keyframes_drawn=int(m[4]), keyframe_jobs_s=float(m[5]),
                           first_batch_keyframes_s=float(m[6]))
        if f:
            figures.update(assembly_jobs_s=float(f[2]), assembly_ms_per_frame=float(f[3]))
        if e:
            figures.update(encode_busy_s=float(e[1]), lanes=int(e[2]))
        figures["seconds_per_frame"] = round(wall / a.frames, 5)
        if os.path.exists(out):
            os.remove(out)
    else:
        figures = _in_process(a)
    _emit(a, "movie", figures)


def _in_process(a) -> dict:
    """The keyframes and every frame's assembly on the pool, no encoding (said in the JSON)."""
    from kernels.backend import resolve
    from kernels.mandelbrot.keyframes.expmap_render import pinned_orbit
    from kernels.spread import open_pool
    from services.movie import prepare
    from services.movie_keyframes import KeyframeFiles, KeyframeTimes, keyframe_frames, keyframe_map
    t0 = time.perf_counter()
    movie = prepare(_spec(a, os.path.join(a.out, "unused%05d.png")), open_encoder=False)
    em = keyframe_map(movie)
    be = resolve(a.backend)
    kt = KeyframeTimes()
    with open_pool(be, gpus=a.gpus) as pool:
        t1 = time.perf_counter()
        with pinned_orbit(em):
            t2 = time.perf_counter()
            files = KeyframeFiles(os.path.join(a.out, "keyframes-tmp"), em)
            for _ in keyframe_frames(movie, em, list(range(movie.frames)), pool, files, None, kt):
                pass
            files.close()
    wall = time.perf_counter() - t0
    return {"encoded": False, "why": "no PyAV here, or --no-encode: keyframes and assembly only",
            "frames": movie.frames, "keyframes": em.count, "keyframe_samples": em.samples,
            "whole_s": round(wall, 2), "pool_s": round(t1 - t0, 2),
            "reference_s": round(t2 - t1, 2), "keyframe_jobs_s": round(kt.keyframe_s, 2),
            "assembly_jobs_s": round(kt.assemble_s, 2),
            "assembly_ms_per_frame": round(kt.assemble_s / max(1, kt.frames) * 1e3, 3),
            "gpus": a.gpus or "default"}


def part_keyframes(a) -> None:
    """The zoom's keyframes alone (the deepest --keyframes-limit of them, or all) on the pool,
    the wall time from the first job to the last: what more GPUs do for the keyframes."""
    from kernels.backend import resolve
    from kernels.mandelbrot.keyframes.expmap_render import KeyframeJob, pinned_orbit
    from kernels.spread import open_pool
    from services.movie import prepare
    from services.movie_keyframes import keyframe_map
    movie = prepare(_spec(a, os.path.join(a.out, "unused%05d.png")), open_encoder=False)
    em = keyframe_map(movie)
    ks = list(range(em.count - 1, -1, -1))[:a.keyframes_limit or None]
    be = resolve(a.backend)
    with open_pool(be, gpus=a.gpus) as pool:
        with pinned_orbit(em):
            # each worker compiles and takes its copy of the orbit before the clock starts
            warm = [KeyframeJob(em, ks[0])] * pool.workers
            for _ in pool.ordered(warm, window=pool.workers):
                pass
            t0 = time.perf_counter()
            jobs_s = sum(r[1] for _, r in pool.ordered([KeyframeJob(em, k) for k in ks]))
            wall = time.perf_counter() - t0
    _emit(a, "keyframes", {"keyframes": len(ks), "of": em.count, "samples": em.samples,
                           "wall_s": round(wall, 2), "jobs_s": round(jobs_s, 2),
                           "ms_per_keyframe": round(wall / len(ks) * 1e3, 2),
                           "workers": pool.workers, "gpus": a.gpus or "default"})


def part_perframe(a) -> None:
    """Frames 0 .. N-1 of the whole zoom by the per-frame method (MovieFrameJob on the pool)."""
    from kernels.backend import resolve
    from kernels.spread import open_pool
    from services.movie import MovieFrameJob, prepare
    from services.movie_reference import movie_reference
    movie = prepare(_spec(a, os.path.join(a.out, "unused%05d.png"), keyframes=False),
                    open_encoder=False)
    n = min(movie.frames, int(round(a.per_frame_seconds * a.fps)))
    be = resolve(a.backend)
    t0 = time.perf_counter()
    with open_pool(be, gpus=a.gpus) as pool:
        with movie_reference(movie):
            t1 = time.perf_counter()
            jobs = [MovieFrameJob(movie.path, k, movie.palette, a.size, movie.spec.colouring, 0)
                    for k in range(n)]
            for _ in pool.ordered(jobs, window=4 * pool.workers):
                pass
    wall = time.perf_counter() - t0
    figures = {"frames": n, "of": movie.frames, "whole_s": round(wall, 2),
               "frames_s": round(time.perf_counter() - t1, 2),
               "seconds_per_frame": round((time.perf_counter() - t1) / n, 5), "encoded": False,
               "deepest_width": movie.path.frame(n - 1).width[:12], "gpus": a.gpus or "default"}
    if a.json and os.path.exists(a.json):
        with open(a.json) as f:
            mv = json.load(f).get("movie", {})
        per = mv.get("seconds_per_frame") or (mv.get("whole_s", 0) / max(1, mv.get("frames", 1)))
        if per:
            figures["keyframes_speedup"] = round(figures["seconds_per_frame"] / per, 2)
    _emit(a, "perframe", figures)


def part_quality(a) -> None:
    import dataclasses
    from decimal import Decimal

    import numpy as np

    from kernels.backend import resolve
    from kernels.mandelbrot.keyframes.expmap import width_log2
    from kernels.mandelbrot.keyframes.expmap_assemble import Assembler
    from kernels.mandelbrot.keyframes.expmap_quality import counts_within, nearest_samples, ssim
    from kernels.mandelbrot.keyframes.expmap_render import KeyframeRenderer, pinned_orbit
    from kernels.mandelbrot.jobs import make_renderer
    from services.movie import frame_request, prepare
    from services.movie_keyframes import drawn_directly, keyframe_map
    movie = prepare(_spec(a, os.path.join(a.out, "unused%05d.png")), open_encoder=False)
    em = keyframe_map(movie)
    path, be = movie.path, resolve(a.backend)
    deepest = -width_log2(path.frame(path.frames - 1).width) / math.log2(10)
    depths = np.linspace(0.5, deepest, a.quality)
    ks = [_frame_at(path, d) for d in depths]
    rows = []
    renderer, kept = KeyframeRenderer(be), {}
    from kernels.mandelbrot.reference.reference_store import shared_store
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    checker = DeepRenderer(be)          # one-pixel frames on the pinned orbit (_samples_checked)
    checker.references, checker.precision_headroom = shared_store(), 0
    asm = Assembler(be, em, 64)
    with pinned_orbit(em):
        for f in ks:
            loc = path.frame(f)
            lw = width_log2(loc.width)
            first, last = em.needs(lw)
            for k in list(kept):
                if not first <= k <= last:
                    kept.pop(k)
                    asm.drop(k)
            for k in range(last, first - 1, -1):
                if k not in kept:
                    kept[k] = renderer.render(em, k)
                    asm.load(k, kept[k])
            got = np.array(asm.frame(movie.request(f), lw, loc.iters, first, last), copy=True)
            req = dataclasses.replace(frame_request(path, f, movie.palette, a.size,
                                                    movie.spec.colouring), want_values=True)
            direct = make_renderer(req, be).render(req)
            values = np.array(direct.values, copy=True)
            near, dist, which = nearest_samples(em, lw, kept, loc.iters, which=True)
            on = dist < SAME_POINT_PX
            mid = (first + last) // 2
            # the movie draws it directly (services/movie_keyframes.drawn_directly): its frame is
            # the direct one; "ssim" stays the assembled frame's
            own = drawn_directly(movie, loc, lw)
            rows.append({"frame": f, "width": f"{Decimal(loc.width):.3e}", "iters": loc.iters,
                         "in_movie": "direct" if own else "keyframes",
                         "ssim": round(ssim(got, direct.rgba), 4),
                         "keyframe_samples_pm1": _samples_checked(em, mid, kept[mid], checker),
                         "counts_pm1_same_point": round(counts_within(near, values, 1, on), 4),
                         "same_point_pixels": int(on.sum()),
                         "counts_pm1_at_sample_points": round(_pixels_checked(
                             em, near, which, loc.iters, checker, a.sample_pixels, seed=f), 4),
                         "counts_pm1_all": round(counts_within(
                             _assembled_values(asm, lw, loc.iters, first, last), values), 4)})
            print(rows[-1], flush=True)
    _emit(a, "quality", {"frames": rows, "min_ssim": min(r["ssim"] for r in rows),
                         "min_ssim_as_in_movie": min(1.0 if r["in_movie"] == "direct"
                                                     else r["ssim"] for r in rows),
                         "min_keyframe_samples_pm1": min(r["keyframe_samples_pm1"] for r in rows),
                         "min_counts_pm1_same_point": min(r["counts_pm1_same_point"]
                                                          for r in rows),
                         "min_counts_pm1_at_sample_points": min(
                             r["counts_pm1_at_sample_points"] for r in rows)})


def _samples_checked(em, k: int, values, deep, n: int = 16, seed: int = 0) -> float:
    """The fraction of `n` random samples of keyframe k whose count a one-pixel deep frame centred
    exactly on the sample's point (its place in MPFR, the pinned orbit as its reference: the frame
    is as wide as the keyframe's radius) gives within ±1: the keyframe's values at their own
    points, whatever the fractal does between pixels. On the same orbit, this checks the
    samples' places and the loop, not the orbit (tests/kernels/test_expmap.py checks keyframes
    against orbits of their own points)."""
    import numpy as np

    from kernels.mandelbrot.keyframes.expmap_quality import direct_at_samples
    rng = np.random.default_rng(seed + k)
    ms = rng.integers(em.samples, size=n)
    return direct_at_samples(em, [(k, m, values[m], int(em.limits[k])) for m in ms], deep)


def _pixels_checked(em, near, which, limit: int, deep, n: int, seed: int = 0) -> float:
    """The fraction of `n` random pixels of a frame whose count, as its nearest keyframe sample
    gives it, a one-pixel deep frame centred exactly on that sample's point gives within ±1: the
    assembled frame against direct rendering at the same point, pixel by pixel."""
    import numpy as np

    from kernels.mandelbrot.keyframes.expmap_quality import direct_at_samples
    ks, ms = which
    ok = np.flatnonzero(np.isfinite(near).ravel())
    pick = np.random.default_rng(seed).choice(ok, size=min(n, ok.size), replace=False)
    return direct_at_samples(em, [(ks.flat[p], ms.flat[p], near.flat[p], limit) for p in pick],
                             deep)


def _assembled_values(asm, lw, limit, first, last):
    import numpy as np
    v = asm.values(lw, limit, first, last)
    return np.array(v if isinstance(v, np.ndarray) else v.copy_to_host(), copy=True)


def _frame_at(path, depth10: float) -> int:
    """The frame whose width is nearest 10^-depth10 (bisection: widths shrink with k)."""
    from kernels.mandelbrot.keyframes.expmap import width_log2
    target = -depth10 * math.log2(10)
    lo, hi = 0, path.frames - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if width_log2(path.frame(mid).width) > target:
            lo = mid + 1
        else:
            hi = mid
    return lo


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("part", choices=("movie", "perframe", "quality", "keyframes"))
    p.add_argument("--out", default="/tmp/keyframes-bench")
    p.add_argument("--size", default="1920x1080")
    p.add_argument("--fps", type=int, default=60)
    p.add_argument("--seconds", type=float, default=600.0)
    p.add_argument("--width", default="1e-1000")
    p.add_argument("--center", default=None, help="X,Y (default Kormanyos's very deep location)")
    p.add_argument("--oversample", type=float, default=1.0)
    p.add_argument("--backend", default="cuda")
    p.add_argument("--gpus", default=None)
    p.add_argument("--per-frame-seconds", type=float, default=60.0)
    p.add_argument("--quality", type=int, default=12)
    p.add_argument("--no-encode", action="store_true")
    p.add_argument("--sample-pixels", type=int, default=256,
                   help="quality: pixels a frame checked against one-pixel direct frames at "
                        "their nearest keyframe sample's point")
    p.add_argument("--timeout", type=float, default=540.0,
                   help="movie: stop the command after this many seconds and say how far it got")
    p.add_argument("--json", default=None)
    p.add_argument("--keyframes-limit", type=int, default=0,
                   help="keyframes: the deepest N keyframes only (0: all)")
    a = p.parse_args(argv)
    global CENTRE
    CENTRE = a.center
    w, h = a.size.lower().split("x")
    a.size = (int(w), int(h))
    a.frames = max(2, round(a.fps * a.seconds))
    os.makedirs(a.out, exist_ok=True)
    {"movie": part_movie, "perframe": part_perframe, "quality": part_quality,
     "keyframes": part_keyframes}[a.part](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
