"""A movie's parts folder: `OUT.parts/` holds `plan.json` (what the movie is, and its segments)
and the finished segments, each written whole or not at all. After an interruption (Ctrl+C, a
full disk, Cancel in the window) the same movie skips the finished segments; a parts folder of
another movie is refused with one line (--restart discards it). A PNG sequence
(`DIR/frame%05d.png`) keeps one file per frame and the plan in `DIR/.frame%05d.png.plan.json`.
The folder and its plan are services.parts.PartsFolder, as a poster's are.

A folder is resumed only from a plan that is this movie's and whose segments fit it; segments
without a plan, or a plan whose cut does not add up to the movie, are set aside (renamed
OUT.parts.set-aside) with a note, never resumed. One run at a time makes an output: a lock file
beside it (`.NAME.lock`, the process id in it) refuses a second run while the first is alive."""
from __future__ import annotations

import contextlib
import math
import os
import secrets
import shutil
import stat

from .files import name_max, temporary_name
from .movie import Movie, MovieError, OtherMovie, frame_file, is_png_pattern
from .parts import PLAN_VERSION, PartsFolder, checked_cut, set_aside

# a segment is about this long (the plan's cut is made once, and kept when the movie resumes)
SEGMENT_SECONDS = 1.0


def parts_dir(out: str) -> str:
    """Where the finished parts of `out` wait: OUT.parts/ for a video, the frames' own folder for
    a PNG sequence."""
    out = os.fspath(out)
    return os.path.dirname(os.path.abspath(out)) if is_png_pattern(out) else out + ".parts"


def plan_path(out: str) -> str:
    out = os.fspath(out)
    if is_png_pattern(out):
        return os.path.join(parts_dir(out), f".{os.path.basename(out)}.plan.json")
    return os.path.join(parts_dir(out), "plan.json")


class MovieBusy(MovieError):
    """Another run, alive, is making the same output."""

    def __init__(self, message: str):
        super().__init__(message, unusable=True)


def lock_path(out: str) -> str:
    folder, name = os.path.split(os.path.abspath(os.fspath(out)))
    return os.path.join(folder, f".{name}.lock")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:       # someone else's process: alive
        return True
    except OSError:
        return False
    return True


class OutputLock:
    """The lock of one output against other processes: `acquire()` (MovieBusy while another live
    process holds it; a lock whose process has gone is stale and taken over), `release()` (only
    a lock still this one's). Within one process the window allows one movie export at a time,
    and a cancelled export's writer may close after the next has started: it is not refused."""

    def __init__(self, out: str):
        self.out = os.fspath(out)
        self.path = lock_path(out)
        self.mark = f"{os.getpid()} {secrets.token_hex(8)}\n"
        self.held = False

    def _check_kind(self) -> None:
        """MovieError naming the lock's path when something other than a file lies there (a
        folder cannot be locked or removed as a lock; a named pipe would wait for a writer)."""
        try:
            mode = os.lstat(self.path).st_mode
        except OSError:
            return
        if stat.S_ISREG(mode):
            return
        what = ("a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode)
                else "a link" if stat.S_ISLNK(mode) else "not a regular file")
        raise MovieError(f"cannot lock {self.out}: {self.path} (where its lock file goes) is "
                         f"{what}; move it away", unusable=True)

    def holder(self) -> int | None:
        """The live process other than this one that holds the lock, or None."""
        try:
            with open(self.path, encoding="ascii") as fh:
                pid = int((fh.read(64).split() or ["0"])[0])
        except (OSError, ValueError):
            return None
        return pid if pid > 0 and pid != os.getpid() and _alive(pid) else None

    def check(self) -> None:
        self._check_kind()
        pid = self.holder()
        if pid is not None:
            raise MovieBusy(f"another run (process {pid}) is making {self.out}; wait for it to "
                            f"end or stop it (if none is running, remove {self.path})")

    def acquire(self) -> None:
        self.check()
        folder, name = os.path.split(self.path)
        tmp = os.path.join(folder, temporary_name(name, name_max(folder)))   # fits beside it
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write(self.mark)
        try:
            while True:
                try:
                    os.link(tmp, self.path)       # atomic: fails if a lock is there
                    break
                except FileExistsError:
                    self.check()                  # a live one: refused
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(self.path)      # stale, or this process's earlier export
        finally:
            os.remove(tmp)
        self.held = True

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        with contextlib.suppress(OSError):
            with open(self.path, encoding="ascii") as fh:
                if fh.read(64) != self.mark:
                    return                        # taken over since: not ours to remove
            os.remove(self.path)


def cut_segments(frames: int, fps: int, lanes: int) -> list[tuple[int, int]]:
    """(first frame, frames) of each segment: about SEGMENT_SECONDS long, and a multiple of
    `lanes` of them so that every lane gets as many."""
    per = max(1, round(fps * SEGMENT_SECONDS))
    count = lanes * math.ceil(frames / (lanes * per))
    count = max(1, min(count, frames))
    edges = [round(i * frames / count) for i in range(count + 1)]
    return [(a, b - a) for a, b in zip(edges, edges[1:]) if b > a]


class Parts(PartsFolder):
    """The finished parts of one movie: which segments (video) or frames (PNG) are done."""

    def __init__(self, movie: Movie, lanes: int):
        self.movie = movie
        self.out = os.fspath(movie.spec.out)
        super().__init__(parts_dir(self.out), movie.plan(), plan_path(self.out))
        self.png = movie.spec.kind == "png"
        self.segments = ([(k, 1) for k in range(movie.frames)] if self.png else
                         cut_segments(movie.frames, movie.spec.fps, lanes))
        self.notes: list[str] = []       # parts found inconsistent and set aside

    def matches(self, old: dict) -> bool:
        return old.get("version") == PLAN_VERSION and old.get("movie") == self.plan

    def segment_file(self, i: int) -> str:
        if self.png:
            return frame_file(self.out, self.segments[i][0])
        return os.path.join(self.folder, f"segment-{i:05d}.mp4")

    def check(self, restart: bool = False, lock: bool = True) -> None:
        """Nothing written: MovieBusy while another run makes this output (`lock`: checked here,
        not by the writer holding it), OtherMovie when the folder holds another movie's parts
        and `restart` is not given."""
        if lock:
            OutputLock(self.out).check()
        if restart:
            return
        if self.holds_other():
            what = "frames" if self.png else "parts"
            raise OtherMovie(f"{self._where()} holds the {what} of another movie (other location, "
                             f"size, length or codec); remove {'them' if self.png else 'that folder'}"
                             " or add --restart to start afresh")
        if self.read_plan() is None and self.png and os.path.exists(self.segment_file(0)):
            raise OtherMovie(f"{self.segment_file(0)} exists and belongs to no movie made here; "
                             "remove the frames or add --restart to replace them")

    def open(self, restart: bool = False) -> int:
        """Make or reopen the folder (check() first); returns the number of frames already
        finished."""
        self.check(restart, lock=False)      # the writer holds the lock by now
        if restart:
            self.discard()
        old = self.read_plan()
        if not self.png and old is not None:
            try:       # the cut is the plan's own: checked against this movie before it is used
                self.segments = checked_cut(old.get("segments"), self.movie.frames)
            except ValueError as exc:
                self._set_aside(f"its plan does not fit this movie ({exc})")
        elif not self.png and os.path.isdir(self.folder) and os.listdir(self.folder):
            self._set_aside("it holds parts but no plan (another run may have been making them)")
        self.make()
        self.write_plan({"version": PLAN_VERSION, "movie": self.plan,
                         "segments": None if self.png else self.segments})
        return self.done_frames()

    def _set_aside(self, why: str) -> None:
        aside = set_aside(self.folder)
        self.notes.append(f"{self.folder} was set aside as {aside}: {why}; every segment is made "
                          "afresh")

    def _where(self) -> str:
        return f"the folder of {self.out}" if self.png else self.folder

    def is_done(self, i: int) -> bool:
        return os.path.exists(self.segment_file(i))

    def pending(self) -> list[int]:
        return [i for i in range(len(self.segments)) if not self.is_done(i)]

    def done_frames(self) -> int:
        return sum(n for i, (_, n) in enumerate(self.segments) if self.is_done(i))

    def discard(self) -> None:
        """Remove what an earlier run left (this movie's files only)."""
        if self.png:
            for i in range(len(self.segments)):
                if os.path.exists(self.segment_file(i)):
                    os.remove(self.segment_file(i))
            if os.path.exists(self.plan_file):
                os.remove(self.plan_file)
        elif os.path.isdir(self.folder):
            shutil.rmtree(self.folder)

    def remove(self) -> None:
        """After the movie is in place: the segments go (a PNG sequence keeps its plan, so that
        the same command again says it is done)."""
        if not self.png:
            super().remove()
