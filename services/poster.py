"""A picture in bands, spread over several GPUs (or a Dask cluster), that survives an interruption:
what `main.py --render … --gpus/--scheduler` (or a picture past POSTER_MIN_PIXELS) runs.

The bands go into `OUT.parts/` beside the output as they arrive: `pixels.npy` (the whole picture,
memory-mapped, its disk space claimed before the first band so a full disk is found before the
work, not in the middle of it), `plan.json` (what is being rendered, services/parts.py) and
`done.json` (which bands are finished, rewritten atomically from a thread of its own once their
pixels are on disk: services/poster_marks.py). Run the same command again after an interruption and
it renders only the missing bands. Once every band is in, the output is
written (a .npy is the parts file itself, moved into place; a .png is encoded from it) and the
folder removed.
"""
from __future__ import annotations

import os
import shutil
import sys
import time

import numpy as np

from .files import human_bytes, move_into_place, write_json, write_png
from .parts import PLAN_VERSION, PartsFolder, checked_indices, read_json, set_aside
from .poster_marks import BandMarks

# a --render picture larger than this goes in resumable bands even on one GPU
POSTER_MIN_PIXELS = 64 * 2 ** 20
# mappings that colour by the whole picture's statistics (kernels/mandelbrot/colouring/colour.py)
WHOLE_MAPPINGS = ("log", "histogram")


class BadBand(ValueError):
    """A band that came back from a worker in a shape or type it cannot have."""


def wants_poster(gpus, scheduler, w: int, h: int) -> bool:
    """Whether a w×h picture goes in resumable bands: spread (`gpus`, `scheduler`) or large."""
    return bool(gpus or scheduler) or w * h > POSTER_MIN_PIXELS


def parts_dir(out: str) -> str:
    return os.fspath(out) + ".parts"


def plan_of(view: str, request, w: int, h: int, rows: int, npy: bool) -> dict:
    """What the parts folder holds: a re-run resumes only when this is equal."""
    fields = {k: (str(v) if not isinstance(v, (int, float, str, bool, type(None))) else v)
              for k, v in sorted(vars(request).items()) if k != "backend"}
    return {"version": PLAN_VERSION, "view": view, "size": [w, h], "band_rows": rows,
            "values": npy, "request": type(request).__name__, "fields": fields}


def _band_counts(c) -> dict | None:
    """One band's counts (tiles.exact_counts) as they may be kept: a dict of whole numbers, else
    None (what a worker or a record gave is checked, not trusted)."""
    if isinstance(c, dict) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                   for v in c.values()):
        return {str(k): int(v) for k, v in c.items()}
    return None


def _counts_of(doc, done: set[int]) -> dict[int, dict]:
    """done.json's per-band counts of the finished bands, those that read as whole numbers."""
    if not isinstance(doc, dict):
        return {}
    out = {}
    for key, c in doc.items():
        if isinstance(key, str) and key.isdigit() and int(key) in done:
            got = _band_counts(c)
            if got is not None:
                out[int(key)] = got
    return out


class Parts(PartsFolder):
    """The parts folder of one poster: the memory-mapped picture and the list of finished bands."""
    # a fresh start rewrites pixels.npy and done.json: nothing of an unreadable plan's survives
    unreadable_is_other = False

    def __init__(self, out: str, plan: dict, shape: tuple, dtype):
        super().__init__(parts_dir(out), plan)
        self.pixels_path = os.path.join(self.folder, "pixels.npy")
        self.done_path = os.path.join(self.folder, "done.json")
        self.shape, self.dtype = shape, np.dtype(dtype)
        self.done: set[int] = set()
        # per finished band, its pixels float64 could not place (tiles.exact_counts); a band a
        # remote worker sent back as pixels has none
        self.counts: dict[int, dict] = {}
        self.pixels = None
        self.notes: list[str] = []     # resume state found inconsistent and set aside

    def open(self) -> None:
        """Open or create the folder. ValueError (one line) when the folder holds another
        picture's bands, OSError when the disk cannot hold the picture."""
        if self.holds_other():
            raise ValueError(f"{self.folder} holds the bands of another picture (other "
                             "location, size or options); remove that folder to start over")
        if self.resumable() and os.path.exists(self.pixels_path):
            self.done = self._finished_bands()
            self.pixels = np.load(self.pixels_path, mmap_mode="r+")
            if self.pixels.shape != self.shape or self.pixels.dtype != self.dtype:
                raise ValueError(f"{self.pixels_path} does not match the picture; remove "
                                 f"{self.folder} to start over")
            return
        self.make()
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
        self.write_plan()       # last: a folder with a plan is a usable one

    def _finished_bands(self) -> set[int]:
        """done.json's bands, checked against the plan; what does not fit is set aside (said in
        `notes`) and every band is rendered afresh."""
        total = -(-int(self.plan["size"][1]) // int(self.plan["band_rows"]))
        try:
            doc = read_json(self.done_path)
            if not isinstance(doc, dict):
                raise ValueError(f"it is a {type(doc).__name__}, not a record of finished bands")
            done = checked_indices(doc.get("bands"), total, "bands")
            self.counts = _counts_of(doc.get("exact"), done)
            return done
        except ValueError as exc:
            where = set_aside(self.done_path) if os.path.exists(self.done_path) else self.done_path
            self.notes.append(f"{self.done_path} does not fit this picture ({exc}); set aside as "
                              f"{where}, every band is rendered afresh")
            write_json(self.done_path, {"bands": []})
            return set()

    def mark_many(self, bands) -> None:
        """The bands [(index, counts or None)] are in the picture: the picture is made durable,
        then they are listed as done (with `counts`, their tiles.exact_counts, when the workers
        handed them back) in one rewrite of done.json. poster_marks.BandMarks calls it."""
        self.sync_pixels()
        for index, counts in bands:
            self.done.add(int(index))
            if counts is not None:
                self.counts[int(index)] = counts
        write_json(self.done_path, {"bands": sorted(self.done),
                                    "exact": {str(i): c for i, c in sorted(self.counts.items())}},
                   indent=None)

    def sync_pixels(self) -> None:
        """Every band written so far (through the memory map or, from a cluster's worker, with
        write()) on disk. Linux's fdatasync covers pages written through a shared mapping and lets
        other threads run; numpy's flush (msync) holds the GIL for the whole write."""
        if not sys.platform.startswith("linux"):
            self.pixels.flush()
        fd = os.open(self.pixels_path, os.O_RDWR)
        try:
            (os.fdatasync if hasattr(os, "fdatasync") else os.fsync)(fd)
        finally:
            os.close(fd)

    def exact_counts(self) -> dict | None:
        """The picture's pixels float64 could not place, summed over its bands (a deep picture);
        None when a band's are not known (sent back by a remote worker, or an older record)."""
        if any(i not in self.counts for i in self.done):
            return None
        total: dict[str, int] = {}
        for c in self.counts.values():
            for k, v in c.items():
                total[k] = total.get(k, 0) + int(v)
        return total

    def close(self) -> None:
        if self.pixels is not None:
            self.pixels.flush()
        self.pixels = None

    def remove(self) -> None:
        self.close()
        super().remove()


class Poster:
    """One poster: `request`'s picture cut into bands (kernels.mandelbrot.tiles), its parts folder
    and the bands still to render. `open()` the folder, `render(pool, cancel, progress)` the
    missing bands, then `write()` the output; `close()` keeps what is done for a later run."""

    def __init__(self, view: str, request, out: str):
        from kernels.mandelbrot.tiles import bands, picture_rows
        self.view, self.request, self.out = view, request, os.fspath(out)
        self.w, self.h = w, h = int(request.size[0]), int(request.size[1])
        self.npy = self.out.lower().endswith(".npy")
        # log and histogram colour the whole picture with its own statistics: the bands' values
        # are kept, and coloured as one once they are all in (kernels/mandelbrot/colouring/picture_colour.py)
        self.whole = not self.npy and getattr(request, "mapping", "sqrt") in WHOLE_MAPPINGS
        self.values = self.npy or self.whole
        rows = picture_rows(request)
        self.cut = bands(h, rows)
        self.parts = Parts(self.out, plan_of(view, request, w, h, rows, self.values),
                           (h, w) if self.values else (h, w, 4),
                           np.float64 if self.values else np.uint8)
        self.render_s = 0.0
        self.landed = 0         # bands in the picture, listed or about to be (the progress bar's)

    @property
    def total(self) -> int:
        return len(self.cut)

    @property
    def done(self) -> int:
        return len(self.parts.done)

    @property
    def exact_counts(self) -> dict | None:
        """Parts.exact_counts: the picture's pixels float64 could not place, over its bands."""
        return self.parts.exact_counts()

    def open(self) -> None:
        """See Parts.open: ValueError for another picture's folder, OSError for a full disk."""
        self.parts.open()

    def close(self) -> None:
        self.parts.close()

    def render(self, pool, cancel, progress=None) -> None:
        """Render the missing bands on `pool` (kernels.spread), each listed as done once on disk
        (poster_marks.BandMarks); `progress(fraction)` after each. `cancel` (a CancelToken) stops
        it. Returns or raises once every band handed over is listed (poster_marks.MarksFailed, an
        OSError, where that failed)."""
        from kernels.mandelbrot.tiles import BandInto, BandIntoFile, BandJob
        from kernels.spread import LocalPool
        todo = [i for i in range(len(self.cut)) if i not in self.parts.done]
        jobs = [BandJob(self.request, *self.cut[i], values=self.values) for i in todo]
        # in_place: the workers write their bands into the picture, and hand back nothing
        in_place = isinstance(pool, LocalPool)
        if in_place:  # workers in this process write into the picture directly
            jobs = [BandInto(job, self.parts.pixels) for job in jobs]
        elif getattr(pool, "shares_files", False) and isinstance(self.parts.pixels, np.memmap):
            # a local cluster's workers write into the parts file: no band crosses its comms
            jobs = [BandIntoFile.into(job, self.parts.pixels) for job in jobs]
            in_place = True
        t0 = time.perf_counter()
        self.landed = len(self.parts.done)
        # the sync and done.json on a thread of their own: here they held up the next band's
        # hand-over, and numpy's flush held the GIL the workers' host parts need
        marks = BandMarks(self.parts)
        try:
            for k, band in pool.ordered(jobs, cancel=cancel):
                i = todo[k]
                r0, n = self.cut[i]
                counts = None
                if in_place:        # the band is in the picture already: its counts came back
                    counts = _band_counts(band)
                else:               # a cluster's worker may send anything back
                    self.check_band(band, i, getattr(pool, "last_origin", None))
                    self.parts.pixels[r0:r0 + n] = band
                marks.add(i, counts)
                self.landed += 1
                if progress is not None:
                    progress(self.landed / self.total)
            marks.wait()
        finally:            # after an interruption too: what was handed over is listed
            marks.close()
        self.render_s = time.perf_counter() - t0

    def check_band(self, band, index: int, origin=None) -> None:
        """BadBand unless `band` is band `index` as it must be: an array of the picture's type
        and the band's shape (checked before anything is written)."""
        r0, n = self.cut[index]
        want = (n,) + tuple(self.parts.shape[1:])
        if type(band) is np.ndarray and band.dtype == self.parts.dtype and band.shape == want \
                and band.nbytes == int(np.prod(want)) * self.parts.dtype.itemsize:
            return
        got = (f"{band.dtype} {band.shape}" if isinstance(band, np.ndarray)
               else type(band).__name__)
        who = f" from worker {origin}" if origin else ""
        raise BadBand(f"band {index} (rows {r0}..{r0 + n}){who} came back as {got}, not "
                      f"{self.parts.dtype} {want}; nothing of it was written. The cluster's "
                      f"workers do not render this picture as this command does")

    def write(self, backend=None) -> float:
        """Write the output from the finished picture, then remove the folder; returns the
        seconds it took. OSError leaves the picture in the parts folder. A picture coloured as
        one is coloured here, on `backend` (the pool's; the CPU when None)."""
        t0 = time.perf_counter()
        if self.npy:
            self.parts.close()
            move_into_place(self.parts.pixels_path, self.out)   # through a link to its target
        elif self.whole:
            self._write_whole(backend)
        else:
            # zlib on one thread takes tens of seconds at level 6 for a 16384² poster: be quick
            write_png(self.out, self.parts.pixels,
                      compress_level=1 if self.w * self.h > POSTER_MIN_PIXELS else 6)
        write_s = time.perf_counter() - t0
        self.parts.remove()
        return write_s

    def _write_whole(self, backend) -> None:
        """The kept values coloured with the whole picture's statistics into rgba.npy in the
        parts folder (its disk space claimed first), then encoded. The statistics are the
        values' own, so a write begun again after an interruption colours alike."""
        from kernels.backend import resolve
        from kernels.mandelbrot.colouring.colourer import Colourer
        from kernels.mandelbrot.colouring.picture_colour import ArrayValues, WholePicture
        from kernels.mandelbrot.requests.strips import strip_rows
        path = os.path.join(self.parts.folder, "rgba.npy")
        nbytes = self.w * self.h * 4
        free = shutil.disk_usage(self.parts.folder).free
        if nbytes > free:
            raise OSError(f"colouring the picture needs {human_bytes(nbytes)} in "
                          f"{self.parts.folder} but the disk has {human_bytes(free)} free")
        rgba = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=(self.h, self.w, 4))
        with open(path, "r+b") as fh:   # claimed now: a memory-mapped write to a full disk faults
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(fh.fileno(), 0, os.fstat(fh.fileno()).st_size)
        req = self.request
        pic = WholePicture(Colourer(backend or resolve("cpu")), (self.w, self.h), req,
                           req.max_iter, min(strip_rows(self.w), self.h),
                           source=ArrayValues(self.parts.pixels))
        try:
            pic.measure()
            for _ in pic.strips(out=rgba):
                pass
            rgba.flush()
            write_png(self.out, rgba,
                      compress_level=1 if self.w * self.h > POSTER_MIN_PIXELS else 6)
        finally:
            pic.close()
            del rgba
