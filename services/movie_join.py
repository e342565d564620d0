"""A movie's segments joined into its output while later segments still encode: `SegmentJoiner`
is a thread that appends each segment (services.video.JoinedVideo) as soon as it and every
segment before it are finished, so that after the last lane ends only the last segments are left
to append and the file to close.

The output is written under a temporary name in the parts folder (beside the output when that
folder lies on another file system) and renamed into place only by `finish()`: a movie stopped,
failed or killed leaves no partial output, and its finished segments stay in the parts folder for
the next run, which appends those first, in order.

The join gives every segment one decoding delay, the deepest among them (see JoinedVideo), and
must know it before the first packet is written. A segment of x264's or NVENC's decodes ahead by
what the encoder's settings allow once it is long enough to reorder frames, and the segments of a
movie are cut to nearly equal lengths (services/movie_parts.py): the delay of a longest segment is
taken, the join waits until one is finished, and each segment is checked as it is appended. One
that decodes further ahead (a case these encoders do not make) abandons the early join: the
whole output is then joined after the last lane, as before.

Its Python per packet is a few attribute sets; opening, demuxing and muxing run in FFmpeg.
"""
from __future__ import annotations

import os
import threading
import time

from . import video
from .files import target_of


class SegmentJoiner:
    """Appends the segments of `parts` (services.movie_parts.Parts) to the movie's output in
    order; `segment_done(i)` says segment i is finished (lane threads call it), `finish()` (once
    every segment is finished) waits for the last appends and puts the output in place, `abort()`
    stops and removes it. `error`: what failed on the thread (raised by whoever feeds the lanes);
    `joined`: segments appended so far; `busy_s`: time spent appending."""

    def __init__(self, parts, fps: int):
        self.parts, self.fps = parts, int(fps)
        self.segments = list(parts.segments)
        self.longest = max(n for _, n in self.segments)
        self.error: BaseException | None = None
        self.fallback: str | None = None      # why the early join was abandoned
        self.joined = 0
        self.busy_s = 0.0
        self._cond = threading.Condition()
        self._ready = {i for i in range(len(self.segments)) if parts.is_done(i)}
        self._stopping = False
        self._video: video.JoinedVideo | None = None
        self._final = threading.Lock()        # finish() and abort() on different threads
        self._thread = threading.Thread(target=self._run, name="movie-join", daemon=True)

    # called by the writer and its lanes
    def start(self) -> None:
        if self._thread.ident is None:        # not started yet
            self._thread.start()

    def segment_done(self, i: int) -> None:
        with self._cond:
            self._ready.add(i)
            self._cond.notify()

    def finish(self) -> int:
        """Once every segment is finished: the remaining ones appended, the output closed and
        renamed into place (or, after a fallback, joined whole). Returns the frames."""
        with self._cond:        # what is on disk, whether or not a lane said so
            self._ready.update(i for i in range(len(self.segments)) if self.parts.is_done(i))
            self._cond.notify()
        self.start()
        self._thread.join()
        if self.error is not None:
            raise self.error
        with self._final:
            if self._stopping:
                raise RuntimeError("the movie was stopped before its segments were joined")
            if self.fallback is None:
                return self._video.close()
            return video.join_segments([(self.parts.segment_file(i), first)
                                        for i, (first, _) in enumerate(self.segments)],
                                       self.parts.out, self.fps)

    def abort(self, grace_s: float = 5.0) -> None:
        """Stop appending and remove the output's temporary file (the segments stay)."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(grace_s)
        with self._final:
            if self._video is not None and not self._thread.is_alive():
                self._video.discard()

    # the thread
    def _wait(self) -> tuple[int, int | None] | None:
        """The next segment to append once it is finished (and, before the first, a finished
        longest segment whose delay the join takes); None when stopped."""
        with self._cond:
            while not self._stopping:
                i = self.joined
                if i in self._ready:
                    if self._video is not None:
                        return i, None
                    ref = next((j for j in sorted(self._ready)
                                if self.segments[j][1] == self.longest), None)
                    if ref is not None:
                        return i, ref
                self._cond.wait()
        return None

    def _run(self) -> None:
        try:
            while self.joined < len(self.segments):
                got = self._wait()
                if got is None:           # stopped: the output goes, the segments stay
                    self._drop(None)
                    return
                i, ref = got
                t0 = time.perf_counter()
                if ref is not None:
                    delay = video.decoding_delay(self.parts.segment_file(ref))
                    self._video = video.JoinedVideo(self.parts.out, self.fps, delay,
                                                    _tmp_folder(self.parts))
                self._video.append(self.parts.segment_file(i), self.segments[i][0])
                self._video.sync()
                self.busy_s += time.perf_counter() - t0
                self.joined += 1
        except video.DeeperSegment as exc:   # said once the partial output is gone
            self.joined = 0
            self._drop(exc)
            self.fallback = str(exc)
        except BaseException as exc:
            self._drop(exc)
            self.error = exc                  # raised by whoever feeds the lanes

    def _drop(self, exc: BaseException | None) -> None:
        with self._final:
            if self._video is not None:
                self._video.discard(exc)


def _tmp_folder(parts) -> str | None:
    """The parts folder when the output can be renamed from it (one file system), else None
    (beside the output)."""
    try:
        target = os.path.dirname(target_of(parts.out))
        if os.stat(parts.folder).st_dev == os.stat(target).st_dev:
            return parts.folder
    except OSError:
        pass
    return None
