"""A movie's kernels readied on every GPU of an in-process pool while the movie's reference orbit
is computed (services/movie_reference.py), instead of inside the first frames.

The orbit is computed in compiled code that holds no GIL, so the workers can meanwhile compile or
load from numba's cache every kernel the frames launch, load them into their GPU's context and
make each encoder lane's deep renderer. Left to the first frames, that work held the GIL while the
other GPUs' workers waited for it, and each lane's renderer warmed up again between frames.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from .movie import frame_request


@dataclass(frozen=True)
class MovieWarmJob:
    """A pool job: the renderers that frames `ks` of the movie need, made and warmed on the
    worker (for deep frames one per encoder lane, as MovieFrameJob asks for them). Returns the
    kinds warmed (for a test to see)."""
    path: object
    ks: tuple
    palette: str | None
    size: tuple[int, int]
    colouring: tuple = ()
    lanes: int = 1

    def __call__(self, worker) -> tuple:
        from kernels.mandelbrot.jobs import DEEP, renderer_kind, renderer_of
        from kernels.mandelbrot.tiles import ROLE
        warmed = []
        for k in self.ks:
            if worker.cancel is not None:      # a movie stopped while it warms up
                worker.cancel.check()
            request = frame_request(self.path, k, self.palette, self.size, self.colouring)
            kind = renderer_kind(request)
            if kind != DEEP:
                renderer_of(worker, request, ROLE).warmup((request.mapping,))
                warmed.append(kind)
                continue
            for lane in range(self.lanes):
                if worker.cancel is not None:
                    worker.cancel.check()
                frames = renderer_of(worker, request, ROLE, ("movie", lane))
                frames.deep.warmup((request.format,))
                frames.warmup()
            warmed.append(f"{kind} {request.format}")
        return tuple(warmed)


def warm_job(movie, lanes: int) -> MovieWarmJob:
    """The warm-up of `movie`'s first and last frames' renderers (a zoom's two ends: the whole
    set's float64 frames, the deepest frames' loop)."""
    spec = movie.spec
    ks = tuple(sorted({0, movie.frames - 1}))
    return MovieWarmJob(movie.path, ks, movie.palette, spec.size, spec.colouring, max(1, lanes))


class Warming:
    """`Warming(pool, job, cancel).start()` runs the job on every worker of an in-process pool
    (its `broadcast`) in a thread of its own; `wait()` joins it and raises its error (Cancelled
    after `cancel`, which stops the warm-up between renderers). A pool without broadcast (a Dask
    cluster: its workers warm in their own processes) does nothing."""

    def __init__(self, pool, job, cancel=None):
        self.pool, self.job, self.cancel = pool, job, cancel
        self._thread = None
        self.error: BaseException | None = None
        self.result = None

    def start(self) -> Warming:
        broadcast = getattr(self.pool, "broadcast", None)
        if broadcast is not None:
            self._thread = threading.Thread(target=self._run, args=(broadcast,),
                                            name="movie-warm", daemon=True)
            self._thread.start()
        return self

    def _run(self, broadcast):
        try:
            self.result = broadcast(self.job, cancel=self.cancel)
        except BaseException as exc:    # raised in the movie's thread by wait()
            self.error = exc

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.error is not None:
            error, self.error = self.error, None
            raise error
