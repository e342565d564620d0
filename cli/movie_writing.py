"""What every movie command does around its MovieWriter: the opening failures said in one line,
the run under Ctrl+C, and an interruption, a full disk or a failed worker ending in one line that
says what is kept for the next run (the writer aborted, its finished parts left in place)."""
from __future__ import annotations

from services.movie import DiskFull, MovieError
from services.movie_writer import MovieWriter

from .failures import UNUSABLE, USAGE, cluster_failure, fail, interrupted


def failed(exc: MovieError) -> int:
    return fail(UNUSABLE if exc.unusable else USAGE, str(exc))


def kept(writer: MovieWriter, frames: int, segments: int) -> str:
    if writer.parts.png:
        return f"{frames} of {writer.total} frames are written"
    return (f"{frames} of {writer.total} frames are kept in {segments} finished segments in "
            f"{writer.parts.folder}")


def run_writing(work, token, progress, writer: MovieWriter, pool, also_kept: str = "") -> int | None:
    """Run `work` interruptibly; None when it finished, else the exit code of its end (the bar
    closed, the writer aborted, what is kept said, `also_kept` after it)."""
    from kernels.scheduler import Cancelled

    from .interruptible import run_interruptibly

    def stop() -> str:
        progress.close()
        writer.abort()
        return kept(writer, *writer.kept()) + also_kept
    try:
        run_interruptibly(work, token, tick=progress.tick)
    except (KeyboardInterrupt, Cancelled):
        return interrupted(f"{stop()}; run the same command again to finish")
    except DiskFull as exc:
        what = exc.strerror or exc
        return fail(UNUSABLE, f"the disk is full ({what}): {stop()}; free some space and run the "
                              "same command again to finish")
    except Exception as exc:        # a cluster worker's error (any type) is one line too
        why = cluster_failure(pool, exc)
        if why is None and not isinstance(exc, (OSError, ValueError, RuntimeError, MemoryError)):
            raise
        return fail(UNUSABLE, f"{why or exc}; {stop()}")
    return None
