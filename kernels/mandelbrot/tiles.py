"""Posters in bands and movies in frames, as jobs any pool can run (kernels/spread): each job is a
small picklable object, `job(worker) -> array`, that renders on the worker's own renderer (kept
there for the next job: compiled kernels, device buffers, a deep zoom's reference orbit).

A band of a float64 picture indexes the whole picture's pixel grid (Renderer.band), so bands put
together equal the picture rendered whole, bit for bit. A band of a deep picture is a deep frame
of its own, cut exactly as an export's strips are (deep_frames.band_request): with the same band
height the pixels equal those of `--render`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spread.base import Ready
from .jobs import renderer_of
from .requests.request import DeepFrameRequest, MandelbrotRequest
from .requests.strips import strip_rows

# a picture is cut into at least this many bands (when it has the rows), so that several GPUs
# share it evenly; the cut does not depend on how many workers there are, so a poster begun on one
# GPU resumes on two
MIN_BANDS = 16


def band_rows(width: int, height: int) -> int:
    """Rows per band for a width×height picture: a strip's worth of pixels, or fewer so that there
    are at least MIN_BANDS bands."""
    rows = strip_rows(width)
    fair = -(-int(height) // MIN_BANDS)
    return max(1, min(rows, fair, int(height)))


def picture_rows(request) -> int:
    """Rows per band of `request`'s picture (a poster's, an export's over GPUs): band_rows for
    every kind. Light pictures once took bands two strips tall, to spread each band's fixed costs
    (launches, copy back, the worker's turn at the GIL) over more pixels; with the next band
    queued before the last is waited for (LocalPool's two halves) those costs are hidden, and
    shorter bands even out the workers' last bands (docs/notes/performance-history.md)."""
    return band_rows(int(request.size[0]), int(request.size[1]))


def bands(height: int, rows: int) -> list[tuple[int, int]]:
    """(row0, rows) of every band, top first."""
    return [(r0, min(rows, height - r0)) for r0 in range(0, int(height), int(rows))]


# the role of the renderers a pool worker keeps for bands and frames (jobs.renderer_of)
ROLE = "pool"


def exact_counts(worker, request) -> dict:
    """The last deep band's pixels float64 deltas could not place, as the worker's renderer
    settled them (redo/exact_redo.py: dd_pixels, exact_pixels, marked_pixels); {} for a float64
    picture. Read once the band is finished: its settling sets them."""
    deep = getattr(renderer_of(worker, request, ROLE), "deep", None)
    return dict(getattr(deep, "last_exact", None) or {})


@dataclass(frozen=True)
class BandJob:
    """Rows row0 .. row0 + rows of `request`'s picture: uint8 RGBA (rows, w, 4), or float64
    values (rows, w) with `values`. The result is the job's own array (a copy the worker does not
    reuse), ready to travel back from a cluster."""
    request: MandelbrotRequest | DeepFrameRequest
    row0: int
    rows: int
    values: bool = False

    def __call__(self, worker) -> np.ndarray:
        w = int(self.request.size[0])
        shape = (self.rows, w) if self.values else (self.rows, w, 4)
        return self.render_into(worker, np.empty(shape, np.float64 if self.values else np.uint8))

    def render(self, worker) -> np.ndarray:
        """The band in its renderer's own buffer (valid until that renderer's next band)."""
        return renderer_of(worker, self.request, ROLE).band(self.request, self.row0, self.rows,
                                                            self.values, cancel=worker.cancel)

    def render_into(self, worker, out: np.ndarray) -> np.ndarray:
        """Render the band straight into `out` (the band's rows of a picture in this process:
        no copy in between for a float64 picture, one from the pinned frame for a deep one)."""
        renderer_of(worker, self.request, ROLE).band(self.request, self.row0, self.rows, self.values,
                                                     cancel=worker.cancel, into=out)
        return out

    def start_into(self, worker, out: np.ndarray):
        """render_into queued where the renderer can queue it (a band on a GPU: its host part
        then overlaps the band before it): a callable that waits for it and returns `out`.
        Elsewhere the band is rendered here (and returned as a spread.Ready)."""
        renderer = renderer_of(worker, self.request, ROLE)
        start = getattr(renderer, "band_start", None)
        if start is None or not renderer.backend.is_gpu:
            return Ready(self.render_into(worker, out))
        return start(self.request, self.row0, self.rows, self.values, cancel=worker.cancel,
                     into=out)


@dataclass(frozen=True)
class BandInto:
    """A BandJob whose rows go straight into `picture` (an array or memory map of the whole picture
    in this process): for pools in this process, which then hand back only the band's
    exact_counts (a small dict; no pixels)."""
    job: BandJob
    picture: np.ndarray

    def __call__(self, worker) -> dict:
        j = self.job
        self.job.render_into(worker, self.picture[j.row0:j.row0 + j.rows])
        return exact_counts(worker, j.request)

    def start(self, worker):
        """The job in two halves, as LocalPool runs it: this queues the band, the callable it
        returns waits for it (after the worker has queued its next band) and returns its
        exact_counts."""
        j = self.job
        finish = j.start_into(worker, self.picture[j.row0:j.row0 + j.rows])
        if isinstance(finish, Ready):
            return Ready(exact_counts(worker, j.request))

        def done() -> dict:
            finish()
            return exact_counts(worker, j.request)
        return done


@dataclass(frozen=True)
class BandIntoFile:
    """A BandJob whose rows go straight into the picture's file (a .npy at `path`, its data from
    byte `offset`, of `shape` and `dtype`): for cluster workers on this machine, which then hand
    back only its exact_counts instead of the band's bytes through the cluster's comms. The rows
    are written from the renderer's own buffer with one write before the job returns (into the
    page cache the poster's own mapping shares; the poster flushes it when it marks the band
    done): a memory map of the rows made for each band paid a page fault for every 4 kB page of
    it, which cost a GPU's band more than its pixels (docs/notes/performance-history.md)."""
    job: BandJob
    path: str
    offset: int
    shape: tuple
    dtype: str

    def __call__(self, worker) -> dict:
        j = self.job
        want = (j.rows,) + tuple(self.shape[1:])
        band = j.render(worker)
        if band.shape != want or band.dtype != np.dtype(self.dtype):
            raise ValueError(f"band of rows {j.row0}..{j.row0 + j.rows} came out as {band.dtype} "
                             f"{band.shape}, not the file's {np.dtype(self.dtype)} {want}")
        row_bytes = int(np.prod(self.shape[1:], dtype=np.int64)) * np.dtype(self.dtype).itemsize
        data = memoryview(np.ascontiguousarray(band)).cast("B")
        with open(self.path, "r+b", buffering=0) as fh:
            fh.seek(self.offset + j.row0 * row_bytes)
            while data:             # a raw write may take less than it was given
                data = data[fh.write(data):]
        return exact_counts(worker, j.request)

    @staticmethod
    def into(job: BandJob, picture: np.memmap) -> BandIntoFile:
        """The job writing into `picture`'s file (np.memmap, as numpy.lib.format.open_memmap
        makes for a .npy)."""
        return BandIntoFile(job, str(picture.filename), int(picture.offset), tuple(picture.shape),
                            picture.dtype.str)


@dataclass(frozen=True)
class FrameJob:
    """One whole frame (a movie's frame k): its RGBA, uint8 (h, w, 4), the job's own array.
    `series`: deep frames of one series share a renderer and so its reference orbit (a movie's
    encoder lane: see jobs.renderer_of)."""
    request: MandelbrotRequest | DeepFrameRequest
    series: object = None

    def __call__(self, worker) -> np.ndarray:
        renderer = renderer_of(worker, self.request, ROLE, self.series)
        frame = renderer.render(self.request, cancel=worker.cancel)
        return np.array(frame.rgba, copy=True)
