"""The window's keyframe movie (the export dialog's "From keyframes"): services/movie_keyframes.py's
frames, made between the view's own frames on the scheduler's thread (or on the chosen GPUs'
workers), handed to the encoder lanes as movie_jobs.py hands rendered frames. Qt-free.

On the scheduler's own device the jobs run here, one at a time (`InlinePool`), each followed by
a yield, so the view keeps answering while keyframes are drawn; a cancel stops at the next job and
the keyframes and segments made so far stay for the next export of the same movie.
"""
from __future__ import annotations


class InlineWorker:
    """A spread Worker's face over a scheduler JobContext: its backend, its kept renderers (the
    movie's role, dropped when the movie ends) and its cancel token."""

    def __init__(self, ctx):
        self.ctx, self.backend, self.cancel = ctx, ctx.backend, ctx.token

    def renderer(self, key, factory):
        return self.ctx.renderer(key, factory)

    def check(self) -> None:
        self.cancel.check()


class InlinePool:
    """pool.ordered over jobs run in the calling thread, in order: the scheduler's thread owns its
    device (one thread per GPU), and the caller yields between results."""
    workers = 1

    def __init__(self, ctx):
        self.worker = InlineWorker(ctx)

    def ordered(self, jobs, cancel=None, window=None):
        for i, job in enumerate(jobs):
            if cancel is not None:
                cancel.check()
            yield i, job(self.worker)


def keyframe_steps(ctx, movie, writer, progress, pool, step_wait_s: float):
    """Every frame still to make from keyframes, put to the writer's lanes, yielding progress
    between keyframes and frames (and while the lanes are full)."""
    from kernels.mandelbrot.keyframes.expmap_render import pinned_orbit

    from .movie_keyframes import keyframe_files, keyframe_frames, keyframe_map
    em = keyframe_map(movie)
    files = keyframe_files(movie, em, None)
    pool = pool if pool is not None else InlinePool(ctx)
    try:
        with pinned_orbit(em, cancel=ctx.token):
            for event in keyframe_frames(movie, em, writer.render_order(), pool, files,
                                         ctx.token):
                if event[0] == "frame":
                    while not writer.put(event[1], event[2], cancel=ctx.token,
                                         timeout=step_wait_s):
                        yield progress()
                    yield progress()
                else:
                    yield progress("keyframes")
    finally:
        files.close()           # the keyframes still being written, for the next export
        if isinstance(pool, InlinePool):
            from kernels.lent_arrays import LENT
            LENT.release_pinned()   # on the scheduler's GPU thread, which drew the frames
