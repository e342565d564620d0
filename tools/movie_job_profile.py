"""Where a movie frame's host time goes on one GPU: the deep zoom movie's frames (MovieFrameJob, as
the pool's worker runs them) rendered one after another on one worker, first timed, then under
cProfile, printing per frame the job's wall time, its GPU time (the frame's timed GPU phases) and
the functions that took the most host time.

    python3 tools/movie_job_profile.py [--seconds 20] [--frames 120] [--top 30]

A frame's wall time less its GPU time is what the worker's Python (and its waits) adds to each
frame; with several GPUs in one process that part holds the GIL the other workers want.
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--size", default="1920x1080")
    args = ap.parse_args(argv)
    from kernels.backend import resolve
    from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as loc
    from kernels.spread import LocalPool
    from services.movie import MovieFrameJob, MovieSpec, prepare
    from services.movie_warm import warm_job
    w, _, h = args.size.partition("x")
    spec = MovieSpec(out="/tmp/movie_job_profile.mp4", size=(int(w), int(h)), fps=60,
                     seconds=args.seconds, center=f"{loc.center_re[:140]},{loc.center_im[:140]}",
                     width="1e-100")
    movie = prepare(spec, open_encoder=False)
    be = resolve(args.backend)
    n = movie.frames
    # frames spread over the whole zoom, in the order an encoder lane takes them (runs of 4)
    step = max(1, n // max(1, args.frames // 4))
    ks = [k for s in range(0, n, step) for k in range(s, min(n, s + 4))][:args.frames]
    jobs = [MovieFrameJob(movie.path, k, movie.palette, spec.size, spec.colouring, 0) for k in ks]
    with LocalPool(be) as pool:
        pool.broadcast(warm_job(movie, 1))
        prof = cProfile.Profile()
        for label, run in (("timed", jobs), ("cProfile", [Profiled(j, prof) for j in jobs])):
            renders = []
            t0 = time.perf_counter()
            for _, (rgba, render_s) in pool.ordered(run):
                renders.append(render_s)
            wall = time.perf_counter() - t0
            print(f"{label}: {len(jobs)} frames in {wall:.2f} s, {wall / len(jobs) * 1e3:.2f} ms a "
                  f"frame (render {sum(renders) / len(jobs) * 1e3:.2f} ms)")
        gpu = _gpu_ms(pool, jobs)
        print(f"GPU phases of {len(gpu)} frames (timed again): {sum(gpu) / max(1, len(gpu)):.2f} ms "
              "a frame")
    print_profile(prof, args.top)
    return 0


def print_profile(prof, top: int) -> None:
    """The `top` functions by their own time, then by their cumulative time."""
    out = io.StringIO()
    st = pstats.Stats(prof, stream=out).strip_dirs()
    st.sort_stats("tottime").print_stats(top)
    st.sort_stats("cumulative").print_stats(top)
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:20000])


class Profiled:
    """A job run under `prof` on the worker's thread (cProfile sees only the thread it runs on)."""

    def __init__(self, job, prof):
        self.job, self.prof = job, prof

    def __call__(self, worker):
        self.prof.enable()
        try:
            return self.job(worker)
        finally:
            self.prof.disable()


def _gpu_ms(pool, jobs):
    """Each frame's GPU phases (kernel, h2d, d2h), summed, from its renderer's timings."""
    from services.movie import frame_request

    def one(job):
        def run(worker):
            from kernels.mandelbrot.jobs import renderer_of
            from kernels.mandelbrot.tiles import ROLE
            req = frame_request(job.path, job.k, job.palette, job.size, job.colouring)
            frame = renderer_of(worker, req, ROLE, ("movie", job.lane)).render(req)
            p = frame.timings.phases_ms
            return sum(p.get(x) or 0.0 for x in ("kernel", "h2d", "d2h"))
        return run
    return [ms for _, ms in pool.ordered([one(j) for j in jobs])]


if __name__ == "__main__":
    sys.exit(main())
