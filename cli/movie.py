"""`main.py --movie OUT …`: a zoom movie from the whole set in to `--center/--width` (or back out),
rendered through a pool of GPUs (kernels.spread) and encoded while it renders.

Frame k is the location kernels.mandelbrot.zoom_path gives, turned into a request by the same
function `--render` uses (cli.requests.mandelbrot_request with that frame's --center, --width,
--iters and --palette), so a frame equals `--render` of its location.

Rendering and encoding overlap. The movie is cut into segments of consecutive frames, each encoded
into a file of its own (cli.video.SegmentEncoder) by one of several encoder lanes, threads that
run at once (PyAV releases the GIL while FFmpeg converts and encodes). The frames are rendered in
an order that feeds every lane (a few frames for lane 0, a few for lane 1, …), each lane's queue
holds a few frames, and the pool keeps a few in flight: memory stays bounded whatever the length,
a full queue holds the renderer back, and an empty one shows the encoders waiting for frames.
Once every segment is finished, their packets are copied into OUT (no second encode).

`OUT.parts/` holds `plan.json` (what the movie is, and its segments) and the finished segments,
each written whole or not at all. After an interruption (Ctrl+C, a full disk) the same command
skips the finished segments; a parts folder of another movie is refused with one line (--restart
discards it). A PNG sequence (`--movie DIR/frame%05d.png`) works the same way with one file per
frame and the plan in `DIR/.frame%05d.png.plan.json`; it needs no PyAV.

`MovieWriter` is the part the window shares: it takes rendered frames (`put`), in the order
`render_order()` gives, from whoever renders them.
"""
from __future__ import annotations

import errno
import json
import math
import os
import queue
import shutil
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from .args import DEFAULT_FPS, DEFAULT_MOVIE_SECONDS, DEFAULT_RENDER_SIZE
from .failures import UNUSABLE, USAGE, fail, interrupted, note
from .files import check_writable, write_json, write_png

PLAN_VERSION = 1
MAX_FRAMES = 1_000_000
# a segment is about this long (the plan's cut is made once, and kept when the movie resumes)
SEGMENT_SECONDS = 1.0
# encoder lanes: at most this many, and at least two cores each (x264 threads within a lane)
MAX_LANES = 8
# frames rendered for one lane before the next lane's, and frames a lane's queue holds
CHUNK = 4
QUEUE_FRAMES = 8
# frames in flight on all lanes together are capped by memory too
IN_FLIGHT_BYTES = 1 << 30
# rendered frames that may wait for their turn in the pool's order (half of IN_FLIGHT_BYTES at most)
MAX_WINDOW_FRAMES = 64


class MovieError(Exception):
    """A movie that cannot start: `code` (USAGE or UNUSABLE) and a one-line message."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class OtherMovie(MovieError):
    """The parts folder holds another movie's parts (--restart discards them)."""


class DiskFull(OSError):
    """The disk filled up while writing the movie; `kept` frames are finished."""


def is_png_pattern(out: str) -> bool:
    return os.fspath(out).lower().endswith(".png")


def frame_file(pattern: str, k: int) -> str:
    return pattern % k


def check_output(out: str) -> str:
    """"video" or "png" for a movie written to `out`; MovieError(USAGE) naming what is wrong."""
    out = os.fspath(out)
    if is_png_pattern(out):
        try:
            a, b = out % 0, out % 1
        except (TypeError, ValueError):
            a = b = None
        if a is None or a == b or "%" in os.path.dirname(out):
            raise MovieError(USAGE, f"--movie {out}: a PNG sequence needs one number pattern in "
                                    "the file name, such as DIR/frame%05d.png")
        try:
            check_writable(a)
        except ValueError as exc:
            raise MovieError(USAGE, str(exc)) from None
        return "png"
    from .video import container_format
    try:
        container_format(out)
        check_writable(out)
    except ValueError as exc:
        raise MovieError(USAGE, str(exc)) from None
    return "video"


@dataclass(frozen=True)
class MovieSpec:
    """What the user asked for, as the strings they gave (None: the default)."""
    out: str
    size: tuple[int, int] = DEFAULT_RENDER_SIZE
    fps: int = DEFAULT_FPS
    seconds: float = DEFAULT_MOVIE_SECONDS
    zoom: str = "in"
    center: str | None = None
    width: str | None = None
    iters: str | None = None
    palette: str | None = None
    codec: str | None = None
    # the window's colouring, as (field, value) pairs applied to every frame's request (density,
    # offset, interior, mapping): the movie looks as the view does. On the command line only the
    # mapping (--mapping, else MOVIE_MAPPING), so frame k is `--render` of its place with it.
    colouring: tuple = ()

    @property
    def frames(self) -> int:
        return max(2, round(self.fps * self.seconds))

    @property
    def kind(self) -> str:
        return "png" if is_png_pattern(self.out) else "video"


@dataclass
class Movie:
    """A checked MovieSpec: its course, its encoder, and requests for any of its frames."""
    spec: MovieSpec
    path: object            # kernels.mandelbrot.zoom_path.ZoomPath
    encoder: str | None     # the FFmpeg encoder (None for a PNG sequence)
    palette: str | None

    @property
    def frames(self) -> int:
        return self.spec.frames

    def request(self, k: int):
        """Frame k's request, built as `--render` builds it from that frame's options."""
        return frame_request(self.path, k, self.palette, self.spec.size, self.spec.colouring)

    def plan(self) -> dict:
        s = self.spec
        end = self.path.keyframes[-1 if s.zoom == "in" else 0]
        plan = {"size": list(s.size), "fps": s.fps, "frames": self.frames, "zoom": s.zoom,
                "center": [end.center_re, end.center_im], "width": end.width,
                "iters": end.iters, "palette": self.palette, "kind": s.kind,
                "encoder": self.encoder}
        if s.colouring:
            plan["colouring"] = {k: list(v) if isinstance(v, tuple) else v for k, v in s.colouring}
        return plan


def frame_request(path, k: int, palette, size, colouring=()):
    """Frame k's request: built from its --center/--width/--iters/--palette strings as
    `--render` builds it, then given the window's colouring when there is one."""
    from .requests import mandelbrot_request
    w, h = size
    request = mandelbrot_request(path.frame(k).options(palette), w, h, False)
    if colouring:
        import dataclasses
        request = dataclasses.replace(request, **dict(colouring)).validate()
    return request


def prepare(spec: MovieSpec, open_encoder: bool = True) -> Movie:
    """Check everything that can be checked before any work: the output, the size and frame
    count, the location, the codec (an encoder opened at this size and rate). MovieError
    (USAGE for a mistake, UNUSABLE for what this machine cannot do) with one line."""
    from kernels.mandelbrot.zoom_path import Keyframe, zoom_in, zoom_out

    from .requests import mandelbrot_request
    kind = check_output(spec.out)
    w, h = spec.size
    if not spec.fps * spec.seconds >= 1.5 or spec.frames > MAX_FRAMES:
        raise MovieError(USAGE, f"--fps {spec.fps} for --seconds {spec.seconds:g} makes "
                                f"{spec.fps * spec.seconds:g} frames; a movie has from 2 to "
                                f"{MAX_FRAMES:,}")
    opts = {"center": spec.center, "width": spec.width, "iters": spec.iters,
            "palette": spec.palette}
    try:
        end = mandelbrot_request(opts, w, h, False)
    except ValueError as exc:
        raise MovieError(USAGE, str(exc)) from None
    cx, cy = ([p.strip() for p in spec.center.split(",")] if spec.center is not None
              else ["-0.5", "0"])
    width = spec.width.strip() if spec.width is not None else "3"
    given = spec.iters is not None and str(spec.iters).strip().lower() != "auto"
    key = Keyframe(cx, cy, width, int(end.max_iter) if given else None)
    course = (zoom_in if spec.zoom == "in" else zoom_out)(key.center_re, key.center_im,
                                                          key.width, key.iters, spec.frames)
    encoder = None
    if kind == "video":
        from .video import DEFAULT_CODEC, CodecUnavailable, check_codec, encoder_name
        codec = spec.codec or DEFAULT_CODEC
        if w % 2 or h % 2:
            raise MovieError(USAGE, f"a video needs an even width and height (4:2:0 colour), not "
                                    f"{w}x{h}; choose another --size or write PNG frames")
        try:
            encoder = encoder_name(codec)
            if open_encoder:
                encoder = check_codec(codec, w, h, spec.fps)
        except CodecUnavailable as exc:
            raise MovieError(UNUSABLE, str(exc)) from None
        except ValueError as exc:
            raise MovieError(USAGE, str(exc)) from None
    elif spec.codec is not None:
        raise MovieError(USAGE, "--codec applies to a video file (.mp4, .mkv, .mov), not to PNG "
                                "frames")
    return Movie(spec, course, encoder, spec.palette)


# ---- the parts folder ---------------------------------------------------------------------------

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


def cut_segments(frames: int, fps: int, lanes: int) -> list[tuple[int, int]]:
    """(first frame, frames) of each segment: about SEGMENT_SECONDS long, and a multiple of
    `lanes` of them so that every lane gets as many."""
    per = max(1, round(fps * SEGMENT_SECONDS))
    count = lanes * math.ceil(frames / (lanes * per))
    count = max(1, min(count, frames))
    edges = [round(i * frames / count) for i in range(count + 1)]
    return [(a, b - a) for a, b in zip(edges, edges[1:]) if b > a]


class Parts:
    """The finished parts of one movie: which segments (video) or frames (PNG) are done."""

    def __init__(self, movie: Movie, lanes: int):
        self.movie = movie
        self.out = os.fspath(movie.spec.out)
        self.folder = parts_dir(self.out)
        self.plan_file = plan_path(self.out)
        self.png = movie.spec.kind == "png"
        self.segments = ([(k, 1) for k in range(movie.frames)] if self.png else
                         cut_segments(movie.frames, movie.spec.fps, lanes))

    def segment_file(self, i: int) -> str:
        if self.png:
            return frame_file(self.out, self.segments[i][0])
        return os.path.join(self.folder, f"segment-{i:05d}.mp4")

    def _old_plan(self):
        if not os.path.exists(self.plan_file):
            return None
        try:
            with open(self.plan_file, encoding="utf-8") as fh:
                got = json.load(fh)
            return got if isinstance(got, dict) else {}
        except (OSError, ValueError):
            return {}

    def check(self, restart: bool = False) -> None:
        """Nothing written: MovieError (USAGE) when the folder holds another movie's parts and
        `restart` is not given."""
        if restart:
            return
        plan = self.movie.plan()
        old = self._old_plan()
        if old is not None and (old.get("version") != PLAN_VERSION or old.get("movie") != plan):
            what = "frames" if self.png else "parts"
            raise OtherMovie(USAGE, f"{self._where()} holds the {what} of another movie (other "
                                    "location, size, length or codec); remove "
                                    f"{'them' if self.png else 'that folder'} or add --restart to "
                                    "start afresh")
        elif old is None and self.png and os.path.exists(self.segment_file(0)):
            raise OtherMovie(USAGE, f"{self.segment_file(0)} exists and belongs to no movie made "
                                    "here; remove the frames or add --restart to replace them")

    def open(self, restart: bool = False) -> int:
        """Make or reopen the folder (check() first); returns the number of frames already
        finished."""
        self.check(restart)
        if restart:
            self.discard()
        old = self._old_plan()
        if old and not self.png and old.get("segments"):
            self.segments = [tuple(s) for s in old["segments"]]
        plan = self.movie.plan()
        os.makedirs(self.folder, exist_ok=True)
        write_json(self.plan_file, {"version": PLAN_VERSION, "movie": plan,
                                    "segments": None if self.png else self.segments})
        return sum(n for i, (_, n) in enumerate(self.segments) if self.is_done(i))

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
            shutil.rmtree(self.folder, ignore_errors=True)


# ---- lanes: the encoders ------------------------------------------------------------------------

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
        self.resumed = self.parts.open(restart)
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
        self.join_s = 0.0
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
        for lane in self.lanes:
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
        for lane in self.lanes:
            lane.join()
        self._raise_lane_error()
        missing = self.parts.pending()
        if missing:
            raise RuntimeError(f"{len(missing)} segments were never finished")
        t0 = time.perf_counter()
        if not self.parts.png:
            from .video import join_segments
            try:
                join_segments([(self.parts.segment_file(i), first)
                               for i, (first, _) in enumerate(self.parts.segments)],
                              self.movie.spec.out, self.movie.spec.fps)
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise DiskFull(exc.errno, str(exc)) from exc
                raise
        self.join_s = time.perf_counter() - t0
        self.parts.remove()
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

    def kept(self) -> tuple[int, int]:
        """(frames, segments) finished and kept on disk."""
        return self.parts.done_frames(), len(self.parts.segments) - len(self.parts.pending())

    def lane_stats(self) -> list[LaneStats]:
        return [lane.stats for lane in self.lanes]


# ---- the command ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class MovieFrameJob:
    """A pool job: frame k of the course, its request built where it runs (as `--render` builds
    it, so the feeder does no per-frame work up front), rendered by kernels' FrameJob. Returns
    (rgba, seconds of rendering).

    Deep frames of each encoder lane (`lane`) go to a deep renderer of that lane's own on the
    worker: the lanes' frames arrive interleaved, a few of each in turn, and one shared renderer
    would find the last frame's reference orbit at another lane's depth every time; each lane's
    renderer keeps the orbit of its own run of consecutive frames."""
    path: object
    k: int
    palette: str | None
    size: tuple[int, int]
    colouring: tuple = ()
    lane: int = 0

    def __call__(self, worker):
        from kernels.mandelbrot.request import DeepFrameRequest
        from kernels.mandelbrot.tiles import FrameJob
        request = frame_request(self.path, self.k, self.palette, self.size, self.colouring)
        t0 = time.perf_counter()
        if isinstance(request, DeepFrameRequest):
            from kernels.mandelbrot.deep_frames import DeepFrameRenderer
            renderer = worker.renderer(("movie-deep", worker.backend.name, self.lane),
                                       lambda: DeepFrameRenderer(worker.backend))
            rgba = np.array(renderer.render(request, cancel=worker.cancel).rgba, copy=True)
        else:
            rgba = FrameJob(request)(worker)
        return rgba, time.perf_counter() - t0


@dataclass
class MovieTimes:
    wall_s: float = 0.0
    render_s: float = 0.0            # the jobs' own time, summed over the workers
    wait_render_s: float = 0.0       # the feeder waiting for the next rendered frame
    wait_encode_s: float = 0.0       # the feeder waiting for a lane with room
    join_s: float = 0.0
    frames: int = 0
    lanes: list = field(default_factory=list)

    def bound(self) -> str:
        if self.wait_encode_s > self.wait_render_s:
            return "encoding (the renderer waited for the encoders)"
        return "rendering (the encoders waited for frames)"


# Every frame of a command-line movie is coloured with one mapping. Left to each frame's kind, the
# colours would jump where the zoom turns deep (float64 frames: sqrt; deep ones: log) and drift
# through the palette while it is deep (log starts at each frame's smallest count); sqrt depends
# on nothing but the pixel's own count.
MOVIE_MAPPING = "sqrt"


def spec_from_args(args) -> MovieSpec:
    return MovieSpec(out=args.movie, size=args.size or DEFAULT_RENDER_SIZE,
                     fps=args.fps or DEFAULT_FPS, seconds=args.seconds or DEFAULT_MOVIE_SECONDS,
                     zoom=args.zoom or "in", center=args.center, width=args.width,
                     iters=args.iters, palette=args.palette, codec=args.codec,
                     colouring=(("mapping", getattr(args, "mapping", None) or MOVIE_MAPPING),))


def run_movie(args) -> int:
    from .environment import prepare_kernels
    from .failures import resolve_backend
    spec = spec_from_args(args)
    restart = bool(getattr(args, "restart", False))
    try:
        movie = prepare(spec)
        Parts(movie, default_lanes(spec.kind, spec.size)).check(restart)
    except MovieError as exc:
        return fail(exc.code, str(exc))
    prepare_kernels()
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(UNUSABLE, why)
    from kernels.backend import BackendUnavailable
    from kernels.mandelbrot.request import DeepFrameRequest
    if any(isinstance(movie.request(k), DeepFrameRequest) for k in (0, movie.frames - 1)):
        from kernels.mandelbrot.deep.reference import gmpy2_module
        try:
            gmpy2_module()
        except RuntimeError as exc:
            return fail(UNUSABLE, str(exc))
    from kernels.spread import open_pool
    try:        # a GPU that does not exist, a cluster that does not answer: before any work
        pool = open_pool(be, gpus=args.gpus, scheduler=args.scheduler)
    except (ValueError, BackendUnavailable, RuntimeError) as exc:
        return fail(USAGE if isinstance(exc, ValueError) else UNUSABLE, str(exc))
    with pool:
        return _run(spec, movie, pool, restart=restart)


def _run(spec: MovieSpec, movie: Movie, pool, restart: bool) -> int:
    from kernels.scheduler import Cancelled, CancelToken

    from .progress import RenderProgress
    from .interruptible import run_interruptibly
    try:
        writer = MovieWriter(movie, restart=restart)
    except MovieError as exc:
        return fail(exc.code, str(exc))
    except OSError as exc:
        return fail(UNUSABLE, f"cannot write {parts_dir(spec.out)}: {exc.strerror or exc}")
    w, h = spec.size
    total = movie.frames
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
        results = pool.ordered(jobs, cancel=token, window=window)
        while True:
            t1 = time.perf_counter()
            try:
                i, (rgba, seconds) = next(results)
            except StopIteration:
                break
            times.wait_render_s += time.perf_counter() - t1
            times.render_s += seconds
            writer.put(order[i], rgba, cancel=token)
        writer.finish()
        times.wall_s = time.perf_counter() - t0

    t_start = time.perf_counter()
    try:
        run_interruptibly(work, token, tick=progress.tick)
    except (KeyboardInterrupt, Cancelled):
        progress.close()
        writer.abort()
        frames, segs = writer.kept()
        return interrupted(f"{_kept(writer, frames, segs)}; run the same command again to finish")
    except DiskFull as exc:
        progress.close()
        writer.abort()
        frames, segs = writer.kept()
        return fail(UNUSABLE, f"the disk is full ({exc.strerror or exc}): "
                              f"{_kept(writer, frames, segs)}; free some space and run the same "
                              "command again to finish")
    except (OSError, ValueError, RuntimeError, MemoryError) as exc:
        progress.close()
        writer.abort()
        frames, segs = writer.kept()
        return fail(UNUSABLE, f"{exc}; {_kept(writer, frames, segs)}")
    progress.close()
    times.wait_encode_s = writer.put_wait_s
    times.join_s = writer.join_s
    times.lanes = writer.lane_stats()
    wall = time.perf_counter() - t_start
    made = total - writer.resumed
    print(f"wrote {spec.out} ({total} frames, {w}x{h}, {spec.fps} fps, {total / spec.fps:g} s, "
          f"{what}, on {pool.describe()}) in {wall:.1f} s: {made / max(wall, 1e-9):.1f} frames/s")
    if made:
        print(summary(times, writer))
    return 0


def _kept(writer: MovieWriter, frames: int, segments: int) -> str:
    if writer.parts.png:
        return f"{frames} of {writer.total} frames are written"
    return (f"{frames} of {writer.total} frames are kept in {segments} finished segments in "
            f"{writer.parts.folder}")


def summary(times: MovieTimes, writer: MovieWriter) -> str:
    """One line: where the time went, and what bound the movie."""
    lanes = times.lanes or []
    busy = [s.busy_s for s in lanes]
    return (f"render {times.render_s:.2f} s (jobs), encode {sum(busy):.2f} s on {len(lanes)} "
            f"lane{'s' if len(lanes) != 1 else ''} (busiest {max(busy, default=0):.2f} s), "
            f"join {times.join_s:.2f} s; the feeder waited {times.wait_render_s:.2f} s for frames "
            f"and {times.wait_encode_s:.2f} s for encoders: bound by {times.bound()}")
