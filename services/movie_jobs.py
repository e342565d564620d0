"""The zoom-movie export the window hands to the scheduler. Qt-free (it runs on the scheduler's
thread): the movie itself is the one `--movie` makes (services.movie: the course; movie_parts: the
parts folder; movie_writer: the encoder lanes); this module only renders its frames between the
view's own.

The job is a generator. Each step renders one frame on the export's own renderer and hands it to
the encoder lanes (threads of their own, which never touch numba); when the lanes are full it
yields instead of waiting, so the view keeps answering the mouse while the movie is made. A
cancel stops it at the next frame; the finished segments stay in OUT.parts/ and the same export
later resumes from them, as `--movie` does.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from kernels.backend import Backend
from kernels.mandelbrot.jobs import releasing, renderer_of
from kernels.scheduler import JobContext

from .movie import MovieFrameJob, MovieSpec, prepare
from .movie_reference import movie_reference
from .movie_warm import Warming, warm_job
from .movie_writer import MovieWriter

# how long one step may wait for a lane with room, or for the lanes to finish, before it yields
STEP_WAIT_S = 0.05


@dataclass(frozen=True)
class MovieExport:
    spec: MovieSpec
    backend: Backend
    restart: bool = False        # discard the parts of an earlier, different movie
    # GPUs to spread the frames over (kernels.spread: a worker thread per GPU); None: the
    # scheduler's own device, a frame at a time between the view's frames
    gpus: tuple[int, ...] | None = None


@dataclass(frozen=True)
class MovieProgress:
    """`done` of `total` frames encoded (`resumed` of them by an earlier run); `stage`:
    "frames" while frames are made, "joining" while the segments become one file."""
    done: int
    total: int
    resumed: int
    stage: str = "frames"

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


@dataclass(frozen=True)
class MovieMade:
    path: str
    frames: int
    seconds: float


def _renderer(ctx: JobContext, request, lane: int):
    """The movie's own renderers: its frames must not evict the view's buffers or orbit. Deep
    frames get one renderer per encoder lane, so each keeps the reference orbit of its lane's
    consecutive frames (see services.movie.MovieFrameJob)."""
    return renderer_of(ctx, request, "movie", series=lane)


def export_movie(ctx: JobContext, job: MovieExport):
    t0 = time.perf_counter()
    movie = prepare(job.spec, open_encoder=False)      # the dialog opened the encoder already
    writer = MovieWriter(movie, restart=job.restart)
    total, resumed = movie.frames, writer.resumed

    def progress(stage="frames"):
        return MovieProgress(writer.encoded, total, resumed, stage)
    pool = warming = None
    try:
        yield progress()
        if job.gpus and job.backend.is_gpu:
            # the GPUs' workers (made for this movie, ended with it) ready the frames' kernels
            # while the reference orbit is computed (services/movie_warm.py)
            from kernels.spread import LocalPool
            pool = LocalPool(job.backend, job.gpus)
            if not job.spec.keyframes:   # keyframes compile their own kernels as they start
                warming = Warming(pool, warm_job(movie, len(writer.lanes)), ctx.token).start()
        if job.spec.keyframes:      # frames from keyframes (movie_keyframe_jobs.py)
            from .movie_keyframe_jobs import keyframe_steps
            yield from keyframe_steps(ctx, movie, writer, progress, pool, STEP_WAIT_S)
        else:
            with movie_reference(movie, cancel=ctx.token):   # the deepest frame's, for all
                if warming is not None:
                    warming.wait()
                yield from _frames(ctx, job, movie, writer, progress, pool)
        if pool is not None:
            pool.close()            # the GPUs are free while the lanes finish
        while not writer.wait_lanes(STEP_WAIT_S):
            ctx.token.check()
            yield progress()
        yield progress("joining")
        frames = writer.finish()
        if job.spec.keyframes:      # the keyframes the frames needed go with the parts
            from .movie_keyframes import remove_keyframes_dir
            remove_keyframes_dir(job.spec.out)
    except BaseException:
        writer.abort()
        raise
    finally:
        if warming is not None:
            warming.wait()
        if pool is not None:
            pool.close()
    return MovieMade(str(job.spec.out), frames, time.perf_counter() - t0)


def _frames(ctx: JobContext, job: MovieExport, movie, writer, progress, pool=None):
    if pool is not None:
        yield from _frames_on_gpus(ctx, job, movie, writer, progress, pool)
        return
    for k in writer.render_order():
        ctx.token.check()
        request = movie.request(k)
        lane = writer.lanes.index(writer.lane_of[k])
        frame = _renderer(ctx, request, lane).render(request, cancel=ctx.token)
        rgba = np.array(frame.rgba, copy=True)     # the renderer's ring is reused
        while not writer.put(k, rgba, cancel=ctx.token, timeout=STEP_WAIT_S):
            yield progress()                       # the lanes are full: others' turn
        yield progress()


def _frames_on_gpus(ctx: JobContext, job: MovieExport, movie, writer, progress, pool):
    """Every frame rendered on the chosen GPUs' workers (`pool`) and handed to the encoder lanes
    in the order the lanes want them."""
    order = writer.render_order()
    lanes = {k: writer.lanes.index(writer.lane_of[k]) for k in order}
    jobs = [MovieFrameJob(movie.path, k, movie.palette, job.spec.size, movie.spec.colouring,
                          lanes[k]) for k in order]
    for i, (rgba, _) in pool.ordered(jobs, cancel=ctx.token):
        while not writer.put(order[i], rgba, cancel=ctx.token, timeout=STEP_WAIT_S):
            yield progress()
        yield progress()


# the movie's renderers (one per lane, each with its reference orbit) go when it ends
HANDLERS = {MovieExport: releasing(export_movie, "movie")}
