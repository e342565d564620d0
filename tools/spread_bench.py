#!/usr/bin/env python3
"""Scaling of posters over GPUs and the cost of Dask, measured in one process on the GPU machine
(issue 12's targets: 2 GPUs >= 1.9x one GPU on the poster; a local Dask cluster within 10 % of the
in-process path). Each case: the pool is opened (contexts made) and warmed (every worker renders a
small band of the same place: kernels compiled, a deep zoom's reference orbit computed), then the
whole poster's bands are timed into one picture in host memory (no file: the PNG encoder is
measured apart, since it is the same for every case). Repeats alternate the cases so that drift
falls on all of them.

    source .device-bundle-spread/activate.sh && PYTHONPATH=.:$PYTHONPATH \\
        python3 tools/spread_bench.py --json $OUT/spread.json [--size 16384] [--repeats 2]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import threading
import time

import numpy as np

sys.path.insert(0, ".")

from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP  # noqa: E402
from kernels.mandelbrot.requests.request import DeepFrameRequest, MandelbrotRequest  # noqa: E402
from kernels.mandelbrot.tiles import BandInto, BandIntoFile, BandJob, bands, picture_rows  # noqa: E402
from kernels.spans import covered  # noqa: E402
from kernels.spread import LocalPool, Ready, gpu_list, open_pool  # noqa: E402
from cli.heap import heap_frozen  # noqa: E402


def posters(size: int):
    loc = KORMANYOS_VERY_DEEP
    return {
        "deep-1e100": DeepFrameRequest(loc.center_re, loc.center_im, "1e-100", (size, size), 50_000),
        "deep-1e30": DeepFrameRequest(loc.center_re, loc.center_im, "1e-30", (size, size), 20_000),
        "seahorse-f64": MandelbrotRequest(-0.7436438870371587, 0.1318259042053119, 1e-8,
                                          (size, size), 20_000),
        "kf-1e1086": kf_poster("resources/kf-1e1086.kfr", size),
    }


def kf_poster(path: str, size: int) -> DeepFrameRequest:
    """A square poster of a Kalles Fraktaler location file, read as `--location` reads it."""
    from services.location_file import load_location_file
    loc = load_location_file(path).place((size, size))
    return DeepFrameRequest(str(loc.center_re), str(loc.center_im), str(loc.width), (size, size),
                            int(loc.iterations))


def warm(pool, request, w):
    """Every worker renders a small band of the place (several jobs per worker: the pool hands them
    out dynamically, so each worker is very likely to get one; the first job per worker compiles)."""
    jobs = [BandJob(request, r0, 4) for r0 in range(0, 4 * 4 * pool.workers, 4)]
    for _ in pool.ordered(jobs, window=len(jobs)):
        pass


class TimedBand:
    """A band job that notes when its worker was busy with it into `busy`: (whose thread, start,
    end, extra(worker) or None), `extra` telling more of the band once it is done."""

    def __init__(self, job, busy, extra=None):
        self.job, self.busy, self.extra = job, busy, extra

    def __call__(self, worker):
        t = time.perf_counter()
        out = self.job(worker)
        self._note(worker, t)
        return out

    def start(self, worker):
        """The job's start (LocalPool's two halves), timed from it to its finish's end."""
        start = getattr(self.job, "start", None)
        if start is None:
            return Ready(self(worker))
        t = time.perf_counter()
        finish = start(worker)
        if isinstance(finish, Ready):
            self._note(worker, t)
            return finish

        def done():
            out = finish()
            self._note(worker, t)
            return out
        return done

    def _note(self, worker, t):
        self.busy.append((threading.current_thread().name, t, time.perf_counter(),
                          None if self.extra is None else self.extra(worker)))


def time_poster(pool, request, picture, file_picture=None):
    """(seconds, bands, {worker thread: busy seconds}) of the whole poster into `picture`, cut as
    a poster is (tiles.picture_rows). A local cluster's workers write into `file_picture` (a
    memory-mapped .npy, as a poster's parts file) when given, else send their bands back."""
    w, h = request.size
    cut = bands(h, picture_rows(request))
    jobs = [BandJob(request, r0, n) for r0, n in cut]
    local = isinstance(pool, LocalPool)
    busy: list = []
    if local:
        jobs = [TimedBand(BandInto(j, picture), busy) for j in jobs]
    elif file_picture is not None and pool.shares_files:
        jobs = [BandIntoFile.into(j, file_picture) for j in jobs]
    t = time.perf_counter()
    for i, band in pool.ordered(jobs):
        if band is not None:
            r0, n = cut[i]
            picture[r0:r0 + n] = band
    took = time.perf_counter() - t
    spans: dict = {}
    for name, start, end, _ in busy:
        spans.setdefault(name, []).append((start, end))
    return took, len(cut), {name: covered(s) for name, s in spans.items()}


MOVIE_PLACE = ("-0.743643887037158704752191506114774,0.131825904205311970493132056385139", "1e-12")


def movie_scaling(seconds: float, repeats: int, size=(1920, 1080), fps=60, lanes=8):
    """The movie workload's rendering alone (the frames of a 1080p60 zoom to 1e-12, as
    `--movie` renders them, results dropped): 1 GPU against 2, alternating."""
    from services.movie import MovieFrameJob, MovieSpec, prepare
    spec = MovieSpec(out="/tmp/spread-bench.mp4", size=size, fps=fps, seconds=seconds,
                     center=MOVIE_PLACE[0], width=MOVIE_PLACE[1])
    movie = prepare(spec, open_encoder=False)
    jobs = [MovieFrameJob(movie.path, k, movie.palette, spec.size, (), k * lanes // movie.frames)
            for k in range(movie.frames)]
    pools = {"1 GPU": open_pool("cuda", gpus="0"), "2 GPUs": open_pool("cuda", gpus="0,1")}
    for pool in pools.values():      # compile, and the frames' buffers made once
        for _ in pool.ordered(jobs[-4 * pool.workers:]):
            pass
    times = {case: [] for case in pools}
    for _ in range(repeats):
        for case, pool in pools.items():
            t = time.perf_counter()
            for _ in pool.ordered(jobs):
                pass
            times[case].append(time.perf_counter() - t)
            print(f"movie frames / {case}: {times[case][-1]:.2f} s ({len(jobs)} frames)", flush=True)
    for pool in pools.values():
        pool.close()
    best = {case: min(v) for case, v in times.items()}
    return {"frames": len(jobs), "size": list(size), "seconds": times, "best_s": best,
            "speed-up 2 vs 1": best["1 GPU"] / best["2 GPUs"],
            "frames/s": {case: len(jobs) / v for case, v in best.items()}}


def gpu_cases(counts, found: int, dask: bool) -> dict:
    """{case name: open_pool kwargs} for the GPU counts this machine has, and a local Dask
    cluster over the most GPUs when `dask`."""
    cases = {}
    for n in counts:
        if n > found:
            continue
        cases[f"{n} GPU{'s' if n > 1 else ''}"] = dict(gpus=",".join(map(str, range(n))))
    top = max((n for n in counts if n <= found), default=1)
    if dask and top >= 2:
        cases[f"{top} GPUs, Dask local"] = dict(gpus=",".join(map(str, range(top))),
                                               scheduler="local")
    return cases


def summary_line(name, best, counts, found, busy) -> str:
    """One compact line per poster: each case's best time, speed-ups over one GPU, Dask's
    overhead over the in-process pool of the same GPUs, the workers' busy seconds."""
    one = best.get("1 GPU")
    parts = []
    for n in counts:
        case = f"{n} GPU{'s' if n > 1 else ''}"
        if n > found:
            parts.append(f"{case} n/a")
            continue
        t = best[case]
        up = f" ({one / t:.2f}x)" if one and n > 1 else ""
        b = busy.get(case) or {}
        work = "/".join(f"{v:.2f}" for _, v in sorted(b.items()))
        parts.append(f"{case} {t:.3f} s{up}" + (f" [busy {work}]" if work and n > 1 else ""))
    for case, t in best.items():
        if "Dask" in case:
            n = int(case.split()[0])
            base = best.get(f"{n} GPUs")
            over = f" ({100.0 * (t / base - 1.0):+.0f} % over in-process)" if base else ""
            parts.append(f"{case} {t:.3f} s{over}")
    return f"poster {name}: " + " | ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--only", default=None, help="poster names, comma-separated")
    ap.add_argument("--gpu-counts", default="1,2",
                    help="GPU counts to time, comma-separated (those past the machine's: n/a)")
    ap.add_argument("--dask", default=None,
                    help="posters also timed through a local Dask cluster over the most GPUs "
                         "(default: all of them, unless --no-dask)")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--heap", choices=("frozen", "open"), default="frozen",
                    help="frozen (as the poster command renders: cli/heap.py keeps what the "
                         "imports and the pools made out of every garbage collection) or open")
    ap.add_argument("--movie-seconds", type=float, default=30.0,
                    help="length of the movie workload (0: skip it)")
    a = ap.parse_args()
    gpus = gpu_list()
    print("GPUs:", "; ".join(map(str, gpus)), flush=True)
    out = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "gpus": [str(g) for g in gpus],
           "python": platform.python_version(), "size": a.size, "posters": {}}
    picture = np.empty((a.size, a.size, 4), np.uint8)
    picture[:] = 0                           # touched once: page faults stay out of the timings
    names = a.only.split(",") if a.only else list(posters(a.size))
    shared = None           # the picture a local cluster's workers write into, as a poster's file
    if not a.no_dask:
        import tempfile
        import shutil
        # /dev/shm when it holds the picture (a container's may be 64 MiB: writing past it
        # would end the process with SIGBUS), else the temporary folder's disk
        where = tempfile.gettempdir()
        if os.path.isdir("/dev/shm") and shutil.disk_usage("/dev/shm").free > 1.5 * picture.nbytes:
            where = "/dev/shm"
        shared = np.lib.format.open_memmap(os.path.join(where, f"spread-bench-{os.getpid()}.npy"),
                                           mode="w+", dtype=np.uint8, shape=picture.shape)
        shared[:] = 0                   # removed at the end (the workers open it by its name)
    counts = [int(n) for n in a.gpu_counts.split(",")]
    dask_for = set() if a.no_dask else (set(a.dask.split(",")) if a.dask else set(names))
    for name in names:
        req = posters(a.size)[name]
        cases = gpu_cases(counts, len(gpus), name in dask_for)
        pools = {}
        for case, kw in cases.items():
            t = time.perf_counter()
            pools[case] = open_pool("cuda", **kw)
            opened = time.perf_counter() - t
            t = time.perf_counter()
            warm(pools[case], req, a.size)
            print(f"{name} / {case}: {pools[case].describe()}; opened in {opened:.2f} s, warmed in "
                  f"{time.perf_counter() - t:.2f} s", flush=True)
        times = {case: [] for case in cases}
        busy: dict = {}
        with heap_frozen() if a.heap == "frozen" else contextlib.nullcontext():
            for _ in range(a.repeats):
                for case, pool in pools.items():
                    s, nb, per = time_poster(pool, req, picture, file_picture=shared)
                    times[case].append(s)
                    if s <= min(times[case]):
                        busy[case] = per
                    print(f"{name} / {case}: {s:.3f} s ({nb} bands)", flush=True)
        for pool in pools.values():
            pool.close()
        best = {case: min(v) for case, v in times.items() if v}
        row = {"request": repr(req)[:300], "seconds": times, "best_s": best,
               "busy_s": {c: v for c, v in busy.items()}}
        for n in counts[1:]:
            case = f"{n} GPUs"
            if case in best and "1 GPU" in best:
                row[f"speed-up {n} vs 1"] = best["1 GPU"] / best[case]
        print(summary_line(name, best, counts, len(gpus), busy), flush=True)
        out["posters"][name] = row
    if shared is not None:
        os.unlink(shared.filename)
    if a.movie_seconds > 0 and len(gpus) >= 2:
        out["movie"] = movie_scaling(a.movie_seconds, a.repeats)
        print("movie", {k: v for k, v in out["movie"].items() if k != "seconds"}, flush=True)
    try:        # the PNG writer's cost, for the record (an eighth of the poster)
        import io

        from PIL import Image
        t = time.perf_counter()
        Image.fromarray(picture[: a.size // 8]).save(io.BytesIO(), format="PNG")
        out["png_encode_s_per_eighth"] = time.perf_counter() - t
    except ImportError:
        out["png_encode_s_per_eighth"] = None
    with open(a.json, "w") as fh:
        json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
