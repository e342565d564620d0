"""`main.py --movie OUT …`: a zoom movie from the whole set in to `--center/--width` (or back out),
rendered through a pool of GPUs (kernels.spread) and encoded while it renders: the options turned
into a services.movie.MovieSpec, a progress bar, one line for what went wrong, the exit status.

What the movie is, its parts folder and its encoder lanes are services' (services/movie.py,
movie_parts.py, movie_writer.py), shared with the window's movie export.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from services.movie import (
    DEFAULT_FPS,
    DEFAULT_MOVIE_SECONDS,
    MOVIE_MAPPING,
    Movie,
    MovieError,
    MovieFrameJob,
    MovieSpec,
    formula_field,
    prepare,
)
from services.movie_parts import Parts, parts_dir
from services.movie_reference import ReferenceAhead
from services.movie_warm import Warming, warm_job
from services.movie_writer import IN_FLIGHT_BYTES, MAX_WINDOW_FRAMES, MovieWriter, default_lanes
from services.requests import DEFAULT_RENDER_SIZE

from .failures import UNUSABLE, USAGE, fail, note
from .location import apply_location
from .movie_timeline import Timeline
from .movie_writing import failed, run_writing
from .reference_line import orbit_line



@dataclass
class MovieTimes:
    wall_s: float = 0.0
    render_s: float = 0.0            # the jobs' own time, summed over the workers
    wait_render_s: float = 0.0       # the feeder waiting for the next rendered frame
    wait_encode_s: float = 0.0       # the feeder waiting for a lane with room
    join_s: float = 0.0              # after the last lane finished
    joined_ahead: str = ""           # what was joined while the lanes encoded
    frames: int = 0
    lanes: list = field(default_factory=list)

    def bound(self) -> str:
        if self.wait_encode_s > self.wait_render_s:
            return "encoding (the renderer waited for the encoders)"
        return "rendering (the encoders waited for frames)"


def spec_from_args(args) -> MovieSpec:
    return MovieSpec(out=args.movie, size=args.size or DEFAULT_RENDER_SIZE,
                     fps=args.fps or DEFAULT_FPS, seconds=args.seconds or DEFAULT_MOVIE_SECONDS,
                     zoom=args.zoom or "in", center=args.center, width=args.width,
                     iters=args.iters, palette=args.palette, codec=args.codec,
                     colouring=(("mapping", getattr(args, "mapping", None) or MOVIE_MAPPING),)
                     + formula_field(getattr(args, "formula", None)),
                     keyframes=bool(getattr(args, "keyframes", False)
                                    or getattr(args, "keyframes_out", None)),
                     oversample=getattr(args, "oversample", None) or 1.0)


def run_movie(args) -> int:
    from .failures import resolve_backend
    from .newton import move_to_minibrot
    timeline = Timeline()
    timeline.mark("imports")
    iters_given = args.iters is not None        # before --location fills them in
    if args.location:
        problem = apply_location(args, args.size or DEFAULT_RENDER_SIZE)
        if problem:
            return fail(USAGE, problem)
    moved = move_to_minibrot(args, iters_given)     # --newton: the movie zooms to the minibrot
    if moved is not None:
        return moved
    spec = spec_from_args(args)
    if getattr(args, "oversample", None) is not None and not spec.keyframes:
        return fail(USAGE, "--oversample applies only with --keyframes")
    restart = bool(getattr(args, "restart", False))
    try:
        movie = prepare(spec)
        Parts(movie, default_lanes(spec.kind, spec.size)).check(restart)
    except MovieError as exc:
        return failed(exc)
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(UNUSABLE, why)
    from kernels.backend import BackendUnavailable
    try:        # a zoom that turns deep needs gmpy2
        movie.check_renderers()
    except RuntimeError as exc:
        return fail(UNUSABLE, str(exc))
    from kernels.spread import open_pool
    # the deepest frame's reference orbit is computed while the GPUs' contexts open (it holds no
    # GIL); every deep frame's renderer takes a copy of it (keyframes pin their own: p's)
    ahead = ReferenceAhead(movie).start() if not spec.keyframes else None
    from kernels.spread import typing_ahead
    typing_ahead.start(be)      # numba's typing registries, while the contexts open too
    try:
        try:    # a GPU that does not exist, a cluster that does not answer: before any work
            pool = open_pool(be, gpus=args.gpus, scheduler=args.scheduler)
        except (ValueError, BackendUnavailable, RuntimeError) as exc:
            return fail(USAGE if isinstance(exc, ValueError) else UNUSABLE, str(exc))
        timeline.mark("pool")
        from . import quick_exit
        from .heap import heap_frozen
        with heap_frozen(), pool:
            if spec.keyframes:
                from .movie_keyframes import run_keyframes
                code = run_keyframes(spec, movie, pool, restart, timeline,
                                     getattr(args, "keyframes_out", None))
            else:
                code = _run(spec, movie, pool, restart, ahead, timeline)
            if code == 0 and quick_exit_wanted(be, pool) and quick_exit.enabled(True):
                # main.py ends the process without its shutdown: the GPUs' memory and contexts
                # go with it, not freed one by one first
                quick_exit.request()
                pool.close_for_exit()
    finally:
        if ahead is not None:
            ahead.close()
    timeline.mark("close")
    if code == 0:
        print(timeline.line())
    return code


def _run(spec: MovieSpec, movie: Movie, pool, restart: bool, ahead: ReferenceAhead,
         timeline: Timeline) -> int:
    from kernels.scheduler import CancelToken

    from .progress import RenderProgress
    try:
        writer = MovieWriter(movie, restart=restart)
    except MovieError as exc:
        return failed(exc)
    except OSError as exc:
        return fail(UNUSABLE, f"cannot write {parts_dir(spec.out)}: {exc.strerror or exc}")
    w, h = spec.size
    total = movie.frames
    for line in writer.parts.notes:      # parts that did not fit this movie, set aside
        note(line)
    if writer.resumed:
        unit = "frames" if writer.parts.png else "segments"
        kept_frames, kept_units = writer.kept()
        note(f"resuming {spec.out}: {kept_units if not writer.parts.png else kept_frames} "
             f"{unit} ({kept_frames} of {total} frames) were already finished "
             f"(kept in {writer.parts.folder})")
    what = movie.encoder or "PNG frames"
    progress = RenderProgress(f"movie {w}×{h} {spec.fps} fps, {what}, on {pool.describe()}")
    writer.progress = progress.report
    progress.report(writer.encoded / total)
    token = CancelToken()
    times = MovieTimes(frames=total)
    order = writer.render_order()
    lane = {k: writer.lanes.index(writer.lane_of[k]) for k in order}
    jobs = [MovieFrameJob(movie.path, k, movie.palette, spec.size, spec.colouring, lane[k])
            for k in order]

    def work():
        t0 = time.perf_counter()
        # frames far apart in the zoom cost very different times, and the encoder lanes want
        # chunks from every part of it at once: a wide window keeps every GPU busy while a slow
        # frame holds up the order (its memory is bounded by IN_FLIGHT_BYTES, like the lanes')
        window = max(3 * pool.workers, min(MAX_WINDOW_FRAMES,
                                           IN_FLIGHT_BYTES // max(1, 2 * w * h * 4)))
        # the deepest frame's reference first: every deep frame's renderer takes a copy; the
        # workers ready the frames' kernels meanwhile (the orbit's loop holds no GIL)
        warming = Warming(pool, warm_job(movie, len(writer.lanes)), token).start()
        try:
            ahead.wait(token)
            timeline.mark("reference")
            warming.wait()
            timeline.mark("warm")
            _render(pool, jobs, order, window, token, times, writer, timeline)
        finally:
            warming.wait()
        timeline.mark("last frame")
        writer.finish()
        timeline.mark("join")
        times.wall_s = time.perf_counter() - t0

    t_start = time.perf_counter()
    code = run_writing(work, token, progress, writer, pool)
    if code is not None:
        return code
    progress.close()
    times.wait_encode_s = writer.put_wait_s
    times.join_s = writer.join_s
    if writer.joiner is not None:
        times.joined_ahead = (f" after the lanes ({writer.joined_ahead} of "
                              f"{len(writer.parts.segments)} segments joined ahead in "
                              f"{writer.joined_ahead_s:.2f} s)")
    times.lanes = writer.lane_stats()
    wall = time.perf_counter() - t_start
    made = total - writer.resumed
    print(f"wrote {spec.out} ({total} frames, {w}x{h}, {spec.fps} fps, {total / spec.fps:g} s, "
          f"{what}, on {pool.describe()}) in {wall:.1f} s: {made / max(wall, 1e-9):.1f} frames/s")
    if made:
        print(summary(times, writer))
    line = orbit_line(ahead.wait())         # done by now: the deep frames' one orbit
    if line:
        note(line)
    return 0


def _render(pool, jobs, order, window, token, times: MovieTimes, writer: MovieWriter,
            timeline: Timeline) -> None:
    """Every frame's job on the pool, each frame handed to the encoder lanes as it comes."""
    results = pool.ordered(jobs, cancel=token, window=window)
    try:
        while True:
            t1 = time.perf_counter()
            try:
                i, (rgba, seconds) = next(results)
            except StopIteration:
                break
            times.wait_render_s += time.perf_counter() - t1
            timeline.mark("first frame", once=True)
            times.render_s += seconds
            writer.put(order[i], rgba, cancel=token)
    except BaseException:
        # an encoder's failure (a full disk) stops the renderers now, not when the generator
        # is collected: nothing may keep working once the error is reported
        token.cancel()
        raise
    finally:
        results.close()



def summary(times: MovieTimes, writer: MovieWriter) -> str:
    """One line: where the time went, and what bound the movie."""
    lanes = times.lanes or []
    busy = [s.busy_s for s in lanes]
    return (f"render {times.render_s:.2f} s (jobs), encode {sum(busy):.2f} s on {len(lanes)} "
            f"lane{'s' if len(lanes) != 1 else ''} (busiest {max(busy, default=0):.2f} s), "
            f"join {times.join_s:.2f} s{times.joined_ahead}; the feeder waited "
            f"{times.wait_render_s:.2f} s for frames and {times.wait_encode_s:.2f} s for encoders: "
            f"bound by {times.bound()}")


def quick_exit_wanted(backend, pool) -> bool:
    """Whether a finished movie may end the process without the interpreter's shutdown: on real
    GPUs in this process's own pool. A Dask cluster's workers are other processes, whose clean
    shutdown the interpreter's exit hooks see to."""
    return backend.is_gpu and not backend.simulated and hasattr(pool, "close_for_exit")
