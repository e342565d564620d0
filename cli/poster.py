"""`main.py --render mandelbrot --size 16384x16384 --gpus all|0,1 [--scheduler local|ADDRESS]`: a
picture in bands, spread over every chosen GPU (or a Dask cluster), that survives an interruption.

The bands go into `OUT.parts/` beside the output as they arrive: `pixels.npy` (the whole picture,
memory-mapped, its disk space claimed before the first band so a full disk is found before the
work, not in the middle of it), `plan.json` (what is being rendered) and `done.json` (which bands
are finished, rewritten atomically after each). Run the same command again after an interruption
and it renders only the missing bands. Once every band is in, the output is written (a .npy is
the parts file itself, moved into place; a .png is encoded from it) and the folder removed.
"""
from __future__ import annotations

import json
import os
import shutil
import time

import numpy as np

from .failures import UNUSABLE, USAGE, fail, interrupted, note
from .files import write_json, write_png
from .progress import RenderProgress, human_bytes

# a --render picture larger than this goes in resumable bands even on one GPU
POSTER_MIN_PIXELS = 64 * 2 ** 20
PLAN_VERSION = 1


def wants_poster(args, w: int, h: int) -> bool:
    return bool(args.gpus or args.scheduler) or w * h > POSTER_MIN_PIXELS


def parts_dir(out: str) -> str:
    return os.fspath(out) + ".parts"


def plan_of(view: str, request, w: int, h: int, rows: int, npy: bool) -> dict:
    """What the parts folder holds: a re-run resumes only when this is equal."""
    fields = {k: (str(v) if not isinstance(v, (int, float, str, bool, type(None))) else v)
              for k, v in sorted(vars(request).items()) if k != "backend"}
    return {"version": PLAN_VERSION, "view": view, "size": [w, h], "band_rows": rows,
            "values": npy, "request": type(request).__name__, "fields": fields}


class Parts:
    """The parts folder of one poster: the memory-mapped picture and the list of finished bands."""

    def __init__(self, out: str, plan: dict, shape: tuple, dtype):
        self.folder = parts_dir(out)
        self.plan = plan
        self.pixels_path = os.path.join(self.folder, "pixels.npy")
        self.done_path = os.path.join(self.folder, "done.json")
        self.shape, self.dtype = shape, np.dtype(dtype)
        self.done: set[int] = set()
        self.pixels = None

    def open(self) -> str | None:
        """Open or create the folder; returns a note when resuming. ValueError (one line) when
        the folder holds another picture's bands, OSError when the disk cannot hold the picture."""
        plan_path = os.path.join(self.folder, "plan.json")
        if os.path.isdir(self.folder):
            try:
                with open(plan_path, encoding="utf-8") as fh:
                    old = json.load(fh)
            except (OSError, ValueError):
                old = None
            if old is not None and old != self.plan:
                raise ValueError(f"{self.folder} holds the bands of another picture (other "
                                 "location, size or options); remove that folder to start over")
            if old is not None and os.path.exists(self.pixels_path):
                with open(self.done_path, encoding="utf-8") as fh:
                    self.done = set(json.load(fh).get("bands", []))
                self.pixels = np.load(self.pixels_path, mmap_mode="r+")
                if self.pixels.shape != self.shape or self.pixels.dtype != self.dtype:
                    raise ValueError(f"{self.pixels_path} does not match the picture; remove "
                                     f"{self.folder} to start over")
                return None
        os.makedirs(self.folder, exist_ok=True)
        nbytes = int(np.prod(self.shape)) * self.dtype.itemsize
        free = shutil.disk_usage(self.folder).free
        if nbytes > free:
            raise OSError(f"the picture needs {human_bytes(nbytes)} in {self.folder} but the disk "
                          f"has {human_bytes(free)} free; choose a smaller --size or another folder")
        self.pixels = np.lib.format.open_memmap(self.pixels_path, mode="w+", dtype=self.dtype,
                                                shape=self.shape)
        # claim the blocks now: a memory-mapped write to a full disk would kill the process
        with open(self.pixels_path, "r+b") as fh:
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(fh.fileno(), 0, os.fstat(fh.fileno()).st_size)
        write_json(self.done_path, {"bands": []})
        write_json(plan_path, self.plan)       # last: a folder with a plan is a usable one
        return None

    def mark(self, index: int, row0: int, rows: int) -> None:
        """Band `index` is in the picture: flushed to disk, then listed as done."""
        self.pixels.flush()
        self.done.add(int(index))
        write_json(self.done_path, {"bands": sorted(self.done)}, indent=None)

    def close(self) -> None:
        if self.pixels is not None:
            self.pixels.flush()
        self.pixels = None

    def remove(self) -> None:
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def run_poster(args, view: str, request, out: str, backend) -> int:
    """Render `request` in bands over the pool the options name; write `out` when complete."""
    from kernels.backend import BackendUnavailable
    from kernels.mandelbrot.tiles import BandInto, BandJob, band_rows, bands
    from kernels.scheduler import Cancelled, CancelToken
    from kernels.spread import LocalPool, open_pool

    from .interruptible import run_interruptibly
    if view != "mandelbrot":
        return fail(USAGE, f"--gpus and --scheduler apply to --render mandelbrot, not {view}")
    w, h = int(request.size[0]), int(request.size[1])
    npy = out.lower().endswith(".npy")
    rows = band_rows(w, h)
    cut = bands(h, rows)
    plan = plan_of(view, request, w, h, rows, npy)
    parts = Parts(out, plan, (h, w) if npy else (h, w, 4), np.float64 if npy else np.uint8)
    try:    # first: a GPU that does not exist or a cluster that does not answer stops it here
        pool = open_pool(backend, gpus=args.gpus, scheduler=args.scheduler)
    except (ValueError, BackendUnavailable, RuntimeError) as exc:
        return fail(USAGE if isinstance(exc, ValueError) else UNUSABLE, str(exc))
    try:
        parts.open()
    except (ValueError, OSError) as exc:
        parts.close()
        pool.close()
        return fail(USAGE if isinstance(exc, ValueError) else UNUSABLE, str(exc))
    todo = [i for i in range(len(cut)) if i not in parts.done]
    if parts.done:
        note(f"resuming {out}: {len(parts.done)} of {len(cut)} bands were already rendered "
             f"(kept in {parts.folder})")
    token = CancelToken()
    progress = RenderProgress(f"{view} {w}×{h} in {len(cut)} bands on {pool.describe()}")
    progress.report(len(parts.done) / len(cut))
    jobs = [BandJob(request, *cut[i], values=npy) for i in todo]
    if isinstance(pool, LocalPool):     # workers in this process write into the picture directly
        jobs = [BandInto(job, parts.pixels) for job in jobs]
    timing = {}

    def work():
        t0 = time.perf_counter()
        for k, band in pool.ordered(jobs, cancel=token):
            i = todo[k]
            r0, n = cut[i]
            if band is not None:
                parts.pixels[r0:r0 + n] = band
            parts.mark(i, r0, n)
            progress.report(len(parts.done) / len(cut))
        timing["render_s"] = time.perf_counter() - t0

    try:
        with pool:
            run_interruptibly(work, token, tick=progress.tick)
    except (KeyboardInterrupt, Cancelled):
        progress.close()
        parts.close()
        return interrupted(f"{len(parts.done)} of {len(cut)} bands are kept in {parts.folder}; "
                           "run the same command again to finish")
    except OSError as exc:
        progress.close()
        parts.close()
        return fail(UNUSABLE, f"{exc}; the {len(parts.done)} finished bands are kept in "
                              f"{parts.folder}: run the same command again to finish")
    except (ValueError, MemoryError) as exc:
        progress.close()
        parts.close()
        return fail(UNUSABLE, str(exc))
    progress.close()
    t0 = time.perf_counter()
    try:
        if npy:
            parts.close()
            os.replace(parts.pixels_path, out)
        else:
            # zlib on one thread takes ~26 s at level 6 for a 16384² poster: be quick on posters
            write_png(out, parts.pixels, compress_level=1 if w * h > POSTER_MIN_PIXELS else 6)
    except OSError as exc:
        parts.close()
        return fail(UNUSABLE, f"{out} could not be written ({exc}); the picture is kept in "
                              f"{parts.pixels_path}")
    write_s = time.perf_counter() - t0
    parts.remove()
    render_s = timing.get("render_s", 0.0)
    print(f"wrote {out} ({w}x{h}, {view}, {len(cut)} bands on {pool.describe()}; "
          f"rendering {render_s:.2f} s, writing {write_s:.2f} s)")
    return 0
