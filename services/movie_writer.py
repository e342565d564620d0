"""The encoder lanes of a movie: `MovieWriter` takes rendered frames (`put`), in the order
`render_order()` gives, from whoever renders them (the command line's pool, the window's
scheduler), and makes the movie.

Rendering and encoding overlap. The movie is cut into segments of consecutive frames
(services/movie_parts.py), each encoded into a file of its own (services.video.SegmentEncoder) by
one of several encoder lanes, threads that run at once (PyAV releases the GIL while FFmpeg converts
and encodes). The frames are rendered in an order that feeds every lane (a few frames for lane 0, a
few for lane 1, …), each lane's queue holds a few frames, and the renderer keeps a few in flight:
memory stays bounded whatever the length, a full queue holds the renderer back, and an empty one
shows the encoders waiting for frames. Each segment's packets are copied into OUT (no second
encode) as soon as it and the segments before it are finished (services/movie_join.py), so that
little is left to join after the last frame.
"""
from __future__ import annotations

import errno
import os
import queue
import threading
import time
from dataclasses import dataclass

import numpy as np

from kernels.lent_arrays import LENT

from .files import write_png
from .movie import DiskFull, Movie
from .movie_join import SegmentJoiner
from .movie_parts import OutputLock, Parts

# encoder lanes: at most this many, and at least two cores each (x264 threads within a lane)
MAX_LANES = 8
# frames rendered for one lane before the next lane's, and frames a lane's queue holds
CHUNK = 4
QUEUE_FRAMES = 8
# frames in flight on all lanes together are capped by memory too
IN_FLIGHT_BYTES = 1 << 30
# rendered frames that may wait for their turn in the pool's order (half of IN_FLIGHT_BYTES at most)
MAX_WINDOW_FRAMES = 64

_STOP = object()


def default_lanes(kind: str, size: tuple[int, int]) -> int:
    cores = os.cpu_count() or 1
    if kind == "png":
        return max(1, min(MAX_LANES, cores))
    return max(1, min(MAX_LANES, cores // 2))


@dataclass
class LaneStats:
    busy_s: float = 0.0          # converting and encoding (or writing PNGs)
    idle_s: float = 0.0          # waiting for a frame
    frames: int = 0


class _Lane(threading.Thread):
    """One encoder thread: the segments it was given, in order, each from frames taken off its
    queue."""

    def __init__(self, writer: MovieWriter, index: int, segments: list[int], threads: int):
        super().__init__(name=f"movie-lane-{index}", daemon=True)
        self.writer, self.segments, self.threads = writer, segments, threads
        self.queue: queue.Queue = queue.Queue(writer.queue_frames)
        self.error: BaseException | None = None
        self.stats = LaneStats()

    def run(self):
        w = self.writer
        try:
            for i in self.segments:
                first, n = w.parts.segments[i]
                sink = w.open_sink(i, self.threads)
                try:
                    for k in range(first, first + n):
                        t0 = time.perf_counter()
                        item = self.queue.get()
                        t1 = time.perf_counter()
                        self.stats.idle_s += t1 - t0
                        if item is _STOP:
                            sink.abort()
                            return
                        got, rgba = item
                        if got != k:
                            raise RuntimeError(f"lane got frame {got}, expected {k}")
                        sink.add(rgba)
                        LENT.give(rgba)     # a keyframe movie's frame: copied out, lent again
                        self.stats.busy_s += time.perf_counter() - t1
                        self.stats.frames += 1
                        w.frame_encoded()
                    t1 = time.perf_counter()
                    sink.finish()
                    self.stats.busy_s += time.perf_counter() - t1
                except BaseException as exc:
                    sink.abort(exc)
                    raise
                w.segment_done(i)
        except BaseException as exc:          # handed to the thread that feeds the lanes
            self.error = exc


class _PngSink:
    """A PNG sequence's segment: one frame, written atomically."""

    def __init__(self, path: str):
        self.path = path

    def add(self, rgba):
        write_png(self.path, rgba)

    def finish(self):
        pass

    def abort(self, exc=None):
        pass


class MovieWriter:
    """Frames in, finished movie out. `render_order()` lists the frames still to make in the
    order to render them; `put(k, rgba)` hands frame k to its lane (waiting while that lane's
    queue is full); `finish()` waits for the lanes and puts the movie together; `abort()` stops
    the lanes, keeping the finished segments. `progress(fraction)` is called on lane threads."""

    def __init__(self, movie: Movie, restart: bool = False, lanes: int | None = None,
                 progress=None):
        self.movie = movie
        spec = movie.spec
        self.lanes_wanted = lanes or default_lanes(spec.kind, spec.size)
        if movie.encoder and movie.encoder.endswith("_nvenc"):
            from .video import NVENC_LANES
            self.lanes_wanted = min(self.lanes_wanted, NVENC_LANES)
        self.parts = Parts(movie, self.lanes_wanted)
        # one run at a time on an output: a second is refused (MovieBusy) while this one lives
        self.lock = OutputLock(movie.spec.out)
        self.lock.acquire()
        try:
            self.resumed = self.parts.open(restart)
        except BaseException:
            self.lock.release()
            raise
        self.progress = progress
        w, h = spec.size
        frame_bytes = w * h * 4
        per_lane = max(2, min(QUEUE_FRAMES, IN_FLIGHT_BYTES // max(1, frame_bytes * self.lanes_wanted)))
        self.queue_frames = per_lane
        self.chunk = max(1, min(CHUNK, per_lane // 2))
        self._lock = threading.Lock()
        self.encoded = self.resumed
        self.finished_segments = len(self.parts.segments) - len(self.parts.pending())
        pending = self.parts.pending()
        n = max(1, min(self.lanes_wanted, len(pending)))
        threads = max(1, (os.cpu_count() or 1) // n)
        # segments go round the lanes (each gets as many); a PNG sequence's one-frame segments
        # then come in the movie's order, one per lane in turn
        self.lanes = [_Lane(self, j, pending[j::n], threads) for j in range(n)]
        if self.parts.png:
            self.chunk = 1
        self.lane_of: dict[int, _Lane] = {}
        for lane in self.lanes:
            for i in lane.segments:
                first, count = self.parts.segments[i]
                for k in range(first, first + count):
                    self.lane_of[k] = lane
        self.put_wait_s = 0.0
        self.join_s = 0.0            # joining after the last lane finished
        self.joined_ahead = 0        # segments joined before that
        self.joined_ahead_s = 0.0
        # a PNG sequence's frames are its output: nothing to join
        self.joiner = None if self.parts.png else SegmentJoiner(self.parts, spec.fps)
        self._started = False

    # what is left
    @property
    def total(self) -> int:
        return self.movie.frames

    def render_order(self) -> list[int]:
        """The frames still to make: a chunk for each lane in turn, so all lanes encode at once."""
        streams = []
        for lane in self.lanes:
            frames = []
            for i in lane.segments:
                first, n = self.parts.segments[i]
                frames.extend(range(first, first + n))
            streams.append(frames)
        order, pos = [], 0
        longest = max((len(s) for s in streams), default=0)
        while pos < longest:
            for s in streams:
                order.extend(s[pos:pos + self.chunk])
            pos += self.chunk
        return order

    def start(self) -> None:
        if not self._started:
            self._started = True
            if self.joiner is not None:
                self.joiner.start()
            for lane in self.lanes:
                lane.start()

    # called on lane threads
    def open_sink(self, i: int, threads: int):
        path = self.parts.segment_file(i)
        if self.parts.png:
            return _PngSink(path)
        from .video import SegmentEncoder
        w, h = self.movie.spec.size
        return SegmentEncoder(path, self.movie.encoder, w, h, self.movie.spec.fps, threads)

    def frame_encoded(self) -> None:
        with self._lock:
            self.encoded += 1
            done = self.encoded
        if self.progress is not None:
            self.progress(done / self.total)

    def segment_done(self, i: int) -> None:
        with self._lock:
            self.finished_segments += 1
        if self.joiner is not None:
            self.joiner.segment_done(i)

    # called by whoever renders
    def put(self, k: int, rgba: np.ndarray, cancel=None, timeout: float | None = None) -> bool:
        """Hand frame k to its lane; waits while the lane is full (up to `timeout` seconds, then
        returns False). A lane's failure is raised here (OSError, e.g. a full disk, as
        DiskFull); `cancel.check()` is called while waiting."""
        self.start()
        lane = self.lane_of[k]
        t0 = time.perf_counter()
        try:
            while True:
                self._raise_lane_error()
                if cancel is not None:
                    cancel.check()
                try:
                    lane.queue.put((k, rgba), timeout=0.05)
                    return True
                except queue.Full:
                    if timeout is not None and time.perf_counter() - t0 >= timeout:
                        return False
        finally:
            self.put_wait_s += time.perf_counter() - t0

    def _raise_lane_error(self) -> None:
        joiner = [self.joiner] if self.joiner is not None else []
        for lane in self.lanes + joiner:
            if lane.error is not None:
                exc = lane.error
                if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise DiskFull(exc.errno, str(exc)) from exc
                raise exc

    def wait_lanes(self, timeout: float) -> bool:
        """Wait up to `timeout` s for the lanes to finish their segments; True once all have
        (a caller that must not block long, such as the window's scheduler, polls this)."""
        self.start()
        deadline = time.perf_counter() + timeout
        for lane in self.lanes:
            lane.join(max(0.0, deadline - time.perf_counter()))
        self._raise_lane_error()
        return not any(lane.is_alive() for lane in self.lanes)

    def finish(self) -> int:
        """Wait for the lanes, then write the output (a video from its segments). Returns the
        number of frames in the movie."""
        self.start()
        # a lane that failed is reported at once, not after the others are waited for
        while not self.wait_lanes(0.1):
            pass
        LENT.clear()        # every frame is encoded: the lent arrays' memory goes back
        missing = self.parts.pending()
        if missing:
            raise RuntimeError(f"{len(missing)} segments were never finished")
        t0 = time.perf_counter()
        if self.joiner is not None:
            self.joined_ahead, self.joined_ahead_s = self.joiner.joined, self.joiner.busy_s
            try:
                self.joiner.finish()
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise DiskFull(exc.errno, str(exc)) from exc
                raise
        self.join_s = time.perf_counter() - t0
        self.parts.remove()
        self.lock.release()
        return self.total

    def abort(self, grace_s: float = 5.0) -> None:
        """Stop every lane; the segment each was writing is dropped, the finished ones kept."""
        for lane in self.lanes:
            if not lane.is_alive():
                continue
            while True:          # make room for the stop mark
                try:
                    lane.queue.put_nowait(_STOP)
                    break
                except queue.Full:
                    try:
                        lane.queue.get_nowait()
                    except queue.Empty:
                        pass
        deadline = time.perf_counter() + grace_s
        for lane in self.lanes:
            if lane.is_alive():
                lane.join(max(0.0, deadline - time.perf_counter()))
        LENT.clear()
        if self.joiner is not None:
            # a moment at least: the output's temporary file goes before the segments are counted
            self.joiner.abort(max(1.0, deadline - time.perf_counter()))
        self.lock.release()

    def kept(self) -> tuple[int, int]:
        """(frames, segments) finished and kept on disk."""
        return self.parts.done_frames(), len(self.parts.segments) - len(self.parts.pending())

    def lane_stats(self) -> list[LaneStats]:
        return [lane.stats for lane in self.lanes]
