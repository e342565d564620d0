"""`main.py --render mandelbrot --size 16384x16384 --gpus all|0,1 [--scheduler local|ADDRESS]`: a
picture in bands over a pool of GPUs (services.poster: the bands, the parts folder, resuming),
with a progress bar, one line for what went wrong and the exit status."""
from __future__ import annotations

from services.files import check_names_beside
from services.poster import Poster

from .failures import UNUSABLE, USAGE, cluster_failure, fail, interrupted, note
from .progress import RenderProgress
from .reference_line import exact_words


def run_poster(args, view: str, request, out: str, backend) -> int:
    """Render `request` in bands over the pool the options name; write `out` when complete."""
    from kernels.backend import BackendUnavailable
    from kernels.scheduler import Cancelled, CancelToken
    from kernels.spread import open_pool

    from .interruptible import run_interruptibly
    if view != "mandelbrot":
        return fail(USAGE, f"--gpus and --scheduler apply to --render mandelbrot, not {view}")
    try:        # the parts folder OUT.parts must fit beside it: said before any work
        check_names_beside(out, ("{}.parts",))
    except ValueError as exc:
        return fail(USAGE, str(exc))
    poster = Poster(view, request, out)
    try:    # first: a GPU that does not exist or a cluster that does not answer stops it here
        pool = open_pool(backend, gpus=args.gpus, scheduler=args.scheduler)
    except (ValueError, BackendUnavailable, RuntimeError) as exc:
        return fail(USAGE if isinstance(exc, ValueError) else UNUSABLE, str(exc))
    try:
        poster.open()
    except (ValueError, OSError) as exc:
        poster.close()
        pool.close()
        return fail(USAGE if isinstance(exc, ValueError) else UNUSABLE, str(exc))
    folder, total = poster.parts.folder, poster.total
    for line in poster.parts.notes:      # resume state that did not fit, set aside
        note(line)
    if poster.done:
        note(f"resuming {out}: {poster.done} of {total} bands were already rendered "
             f"(kept in {folder})")
    token = CancelToken()
    w, h = poster.w, poster.h
    progress = RenderProgress(f"{view} {w}×{h} in {total} bands on {pool.describe()}")
    progress.report(poster.done / total)
    from .heap import heap_frozen
    try:
        with heap_frozen(), pool:
            run_interruptibly(lambda: poster.render(pool, token, progress.report), token,
                              tick=progress.tick)
    except (KeyboardInterrupt, Cancelled):
        progress.close()
        poster.close()
        return interrupted(f"{poster.done} of {total} bands are kept in {folder}; "
                           "run the same command again to finish")
    except OSError as exc:
        progress.close()
        poster.close()
        return fail(UNUSABLE, f"{exc}; the {poster.done} finished bands are kept in "
                              f"{folder}: run the same command again to finish")
    except (ValueError, MemoryError) as exc:
        progress.close()
        poster.close()
        return fail(UNUSABLE, str(exc))
    except Exception as exc:        # whatever a cluster's worker raised: said in one line
        why = cluster_failure(pool, exc)
        if why is None:
            raise
        progress.close()
        poster.close()
        return fail(UNUSABLE, f"{why}; the {poster.done} finished band"
                              f"{'s are' if poster.done != 1 else ' is'} kept in {folder}: run "
                              "the same command again to finish")
    progress.close()
    try:
        write_s = poster.write(pool.backend)
    except OSError as exc:
        poster.close()
        return fail(UNUSABLE, f"{out} could not be written ({exc}); the picture is kept in "
                              f"{poster.parts.pixels_path}")
    mode = getattr(request, "pixels", None)
    if mode is not None:    # a deep picture: its pixels float64 cannot place, over every band
        got = poster.exact_counts
        line = ("the pixels float64 deltas cannot place were not counted in every band (bands "
                "a cluster's workers sent back as pixels, or kept from an older run)"
                if got is None else exact_words(got, mode, getattr(request, "formula",
                                                                   "mandelbrot")))
        if line:
            note(line)
    shown = getattr(request, "formula", None) or view    # the formula drawn, e.g. burning-ship
    print(f"wrote {out} ({w}x{h}, {shown}, {total} bands on {pool.describe()}; "
          f"rendering {poster.render_s:.2f} s, writing {write_s:.2f} s)")
    return 0
