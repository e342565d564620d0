"""`main.py --movie OUT --keyframes`: the zoom movie's frames made from exponential-map keyframes
(services/movie_keyframes.py) on the pool's workers, encoded as any movie is; the progress bar
counts keyframes and frames, Ctrl+C and a full disk keep what is finished (segments, and the
keyframes the next frames need), and the last lines say where the time went."""
from __future__ import annotations

import time

from services.movie import Movie, MovieError, MovieSpec
from services.movie_parts import parts_dir
from services.movie_writer import MovieWriter

from .failures import UNUSABLE, fail, note
from .movie_timeline import Timeline
from .movie_writing import failed, run_writing


def run_keyframes(spec: MovieSpec, movie: Movie, pool, restart: bool, timeline: Timeline,
                  keyframes_out: str | None = None) -> int:
    from kernels.mandelbrot.keyframes.expmap_render import pinned_orbit
    from kernels.scheduler import CancelToken
    from services.movie_keyframes import (
        KeyframeTimes,
        keyframe_files,
        keyframe_frames,
        keyframe_map,
        remove_keyframes_dir,
        schedule,
    )

    from .progress import RenderProgress
    try:
        em = keyframe_map(movie)
    except ValueError as exc:
        return failed(MovieError(str(exc)))
    try:
        writer = MovieWriter(movie, restart=restart)
    except MovieError as exc:
        return failed(exc)
    except OSError as exc:
        return fail(UNUSABLE, f"cannot write {parts_dir(spec.out)}: {exc.strerror or exc}")
    try:
        files = keyframe_files(movie, em, keyframes_out)
    except (OSError, ValueError) as exc:
        writer.abort()
        return fail(UNUSABLE, f"--keyframes-out: {getattr(exc, 'strerror', None) or exc}")
    w, h = spec.size
    total = movie.frames
    for line in writer.parts.notes:
        note(line)
    if writer.resumed:
        kept_frames, kept_units = writer.kept()
        note(f"resuming {spec.out}: {kept_frames} of {total} frames were already finished "
             f"(kept in {writer.parts.folder})")
    what = movie.encoder or "PNG frames"
    progress = RenderProgress(f"movie {w}×{h} {spec.fps} fps from {em.count} keyframes of "
                              f"{em.samples:,} samples, {what}, on {pool.describe()}")
    order = writer.render_order()
    # the bar: every keyframe this run draws or reads (the frames drawn directly need none), then
    # every frame, by their counts
    plan = schedule(movie, em, order)
    steps = max(1, len(plan[1]) + len(order))
    token = CancelToken()
    kt = KeyframeTimes()
    waited = {"frames": 0.0, "wall": 0.0}

    def work():
        t0 = time.perf_counter()
        done = 0
        try:
            with pinned_orbit(em, cancel=token):
                timeline.mark("reference")
                t_loop = time.perf_counter()
                for event in keyframe_frames(movie, em, order, pool, files, token, kt, plan):
                    done += 1
                    progress.report(min(1.0, done / steps))
                    if event[0] == "frame":
                        timeline.mark("first frame", once=True)
                        writer.put(event[1], event[2], cancel=token)
                waited["frames"] = time.perf_counter() - t_loop - writer.put_wait_s
        finally:
            files.close()       # the keyframes still being written, for the next run
        timeline.mark("last frame")
        writer.finish()
        if not keyframes_out:
            remove_keyframes_dir(spec.out)
        timeline.mark("join")
        waited["wall"] = time.perf_counter() - t0

    t_start = time.perf_counter()
    code = run_writing(work, token, progress, writer, pool,
                       also_kept=f", the keyframes they need in {files.folder}")
    if code is not None:
        return code
    progress.close()
    wall = time.perf_counter() - t_start
    made = total - writer.resumed
    print(f"wrote {spec.out} ({total} frames, {w}x{h}, {spec.fps} fps, {total / spec.fps:g} s, "
          f"{what}, on {pool.describe()}) in {wall:.1f} s: {made / max(wall, 1e-9):.1f} frames/s")
    print(keyframe_summary(em, kt))
    if files.skipped:
        note(f"{files.skipped} keyframes were not kept for a resume: the disk was behind")
    if made:
        busy = [st.busy_s for st in writer.lane_stats()]
        bound = "encoding" if writer.put_wait_s > waited["frames"] else "keyframes and frames"
        print(f"encode {sum(busy):.2f} s on {len(busy)} lane{'s' if len(busy) != 1 else ''}, "
              f"join {writer.join_s:.2f} s; the feeder waited {waited['frames']:.2f} s for "
              f"frames and {writer.put_wait_s:.2f} s for encoders: bound by {bound}")
    return 0


def keyframe_summary(em, kt) -> str:
    """One line: the keyframes (drawn, read back) and the frames made from them, each with its
    jobs' own time summed over the workers (the next batch's keyframes are drawn among a batch's
    frames, so only the first batch's keyframes have a wall time of their own)."""
    per_frame = kt.assemble_s / kt.frames * 1e3 if kt.frames else 0.0
    return (f"keyframes: {em.count} of {em.samples} samples in {len(em.sectors)} sectors "
            f"({kt.keyframes} drawn in {kt.keyframe_s:.2f} s of jobs, the first batch's in "
            f"{kt.keyframe_wall_s:.2f} s before any frame; {kt.loaded} read back); frames: "
            f"{kt.frames} made in {kt.assemble_s:.2f} s of jobs ({per_frame:.2f} ms a frame, "
            f"with its colouring and copy; {kt.direct} of them drawn directly)")


