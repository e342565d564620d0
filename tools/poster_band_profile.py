"""Where a poster band's host time goes on one worker: the bands of one of spread_bench's posters
(BandInto jobs, as a poster over GPUs runs them) rendered one after another on one worker, first
timed, then under cProfile, printing per band the job's wall time, its GPU time (the band's timed
GPU phases, deep posters) and the functions that took the most host time.

    python3 tools/poster_band_profile.py [--poster deep-1e100] [--size 16384] [--bands 32]
    python3 tools/poster_band_profile.py --compare 0,1 [--poster deep-1e100] [--repeats 2]

--compare times every band of the poster on one GPU and on the GPUs named, band by band (each
band's wall time and, for a deep poster, its timed GPU phases and whether its table was reused), so
that what a band gains in time where several GPUs share the poster shows as GPU or as host time.

A band's wall time less its GPU time is what the worker's Python (and its waits) adds to each band;
with several GPUs in one process that part holds the GIL the other workers want, and each worker
waits for it whenever another holds it.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from movie_job_profile import Profiled, print_profile  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--poster", default="deep-1e100")
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--bands", type=int, default=32, help="bands timed (from the picture's middle)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--compare", default=None, help="GPUs to set against the first, e.g. 0,1")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    if args.compare:
        from band_compare import compare
        return compare(args.poster, args.size, args.compare, args.repeats)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from spread_bench import posters
    from kernels.backend import resolve
    from kernels.mandelbrot.tiles import BandInto, BandJob, bands, picture_rows
    from kernels.spread import LocalPool
    request = posters(args.size)[args.poster]
    w, h = request.size
    cut = bands(h, picture_rows(request))
    mid = max(0, len(cut) // 2 - args.bands // 2)
    cut = cut[mid:mid + args.bands]
    picture = np.zeros((h, w, 4), np.uint8)
    jobs = [BandInto(BandJob(request, r0, n), picture) for r0, n in cut]
    with LocalPool(resolve(args.backend)) as pool:
        for _ in pool.ordered(jobs[:2]):        # compile, the reference orbit, the buffers
            pass
        prof = cProfile.Profile()
        for label, run in (("timed", jobs), ("cProfile", [Profiled(j, prof) for j in jobs])):
            t0 = time.perf_counter()
            for _ in pool.ordered(run, window=1):
                pass
            wall = time.perf_counter() - t0
            print(f"{label}: {len(jobs)} bands of {cut[0][1]} rows in {wall:.3f} s, "
                  f"{wall / len(jobs) * 1e3:.2f} ms a band", flush=True)
        gpu = _gpu_ms(pool, request, cut)
        if gpu:
            print(f"GPU phases of {len(gpu)} bands (timed again): {sum(gpu) / len(gpu):.2f} ms a band")
    print_profile(prof, args.top)
    return 0


def _gpu_ms(pool, request, cut):
    """Each deep band's GPU phases (kernel, h2d, d2h), summed, from its frame's timings; [] for
    a float64 poster (its bands keep no frame timings)."""
    from kernels.mandelbrot.deep_frames import band_request
    from kernels.mandelbrot.requests.request import DeepFrameRequest
    if not isinstance(request, DeepFrameRequest):
        return []

    def one(r0, n):
        def run(worker):
            from kernels.mandelbrot.jobs import renderer_of
            from kernels.mandelbrot.tiles import ROLE
            frame = renderer_of(worker, request, ROLE).render(band_request(request, r0, n, False))
            p = frame.timings.phases_ms
            return sum(p.get(x) or 0.0 for x in ("kernel", "h2d", "d2h"))
        return run
    return [ms for _, ms in pool.ordered([one(r0, n) for r0, n in cut], window=1)]


if __name__ == "__main__":
    sys.exit(main())
