"""Encoding a movie with PyAV (FFmpeg's libraries; no ffmpeg program, no encoder of our own):
which codecs there are and whether one works here, segment files encoded on threads of their own,
and the final file put together from the segments' packets without encoding them again.

PyAV is an optional extra (the `movie` extra): `pyav_missing()` says why it cannot be
used. A codec is checked before any work by opening an encoder at the movie's size and frame rate
and encoding one frame (`check_codec`): a codec FFmpeg lists but that cannot run here (NVENC
without an NVIDIA driver or on a GPU without an encoder, e.g. the H100) is refused in one line.

Each segment is consecutive frames in a file of its own that starts with a keyframe
(`SegmentEncoder`), written to a temporary name and renamed once complete, so a finished segment
is whole and an interrupted one leaves nothing. PyAV releases the GIL while FFmpeg converts RGBA to
YUV (sws_scale) and while it encodes (avcodec_send_frame/receive_packet), so segment encoders on
threads run in parallel; each is given a share of the cores (x264's frame threads: PyAV asks for
slice threads by default, which x264 runs less efficiently). `JoinedVideo` copies the segments'
packets, shifted to their place in time, into one container, a segment at a time as they finish
(services/movie_join.py); `join_segments` all at once.
"""
from __future__ import annotations

import contextlib
import os
from fractions import Fraction

import numpy as np
from kernels.extras import install_hint

from .files import atomic_path

# --codec NAME -> the FFmpeg encoder; the names users know first
CODECS = {
    "h264": "libx264",
    "h265": "libx265",
    "hevc": "libx265",
    "libx264": "libx264",
    "libx265": "libx265",
    "h264_nvenc": "h264_nvenc",
    "hevc_nvenc": "hevc_nvenc",
}
DEFAULT_CODEC = "h264"
# options per encoder: visually lossless for a fractal's fine detail, at a speed that keeps up
# with the GPU (libx264 'veryfast' with crf 18; x265's crf scale sits ~4 above x264's; NVENC's
# p4 preset with constant quality 19, high-quality tuning)
ENCODER_OPTIONS = {
    "libx264": {"preset": "veryfast", "crf": "18"},
    "libx265": {"preset": "veryfast", "crf": "22", "x265-params": "log-level=error"},
    "h264_nvenc": {"preset": "p4", "tune": "hq", "rc": "vbr", "cq": "19", "b": "0"},
    "hevc_nvenc": {"preset": "p4", "tune": "hq", "rc": "vbr", "cq": "21", "b": "0"},
}
# encoders whose threading PyAV's defaults hold back (slice threads): given frame threads
FRAME_THREADED = ("libx264",)
# NVENC runs on the GPU's encoder engines (one to three): more sessions at once add nothing, and
# consumer GPUs refuse more than a few
NVENC_LANES = 2
PIXEL_FORMAT = "yuv420p"
# the container by the output's extension
CONTAINERS = {".mp4": "mp4", ".mkv": "matroska", ".mov": "mov"}
SEGMENT_EXT = ".mp4"
# H.264/H.265 colour tags (FFmpeg's AVCOL_* values): BT.709 in limited range, as the RGB->YUV
# conversion below produces; players then show the colours as rendered
BT709 = 1
LIMITED_RANGE = 1


class CodecUnavailable(ValueError):
    """A codec that cannot encode here, with the one-line reason."""


def pyav_missing() -> str | None:
    """Why a video file cannot be written here (PyAV is not installed), or None."""
    try:
        import av  # noqa: F401
    except ImportError as exc:
        return (f"writing a video needs PyAV ({exc.name or exc} is not installed): "
                f"{install_hint('movie')}, or write PNG frames instead (--movie DIR/frame%05d.png)")
    return None


def encoder_name(codec: str) -> str:
    """The FFmpeg encoder for `--codec codec`; ValueError naming the choices for an unknown one."""
    got = CODECS.get(str(codec).strip().lower())
    if got is None:
        raise ValueError(f"--codec {codec!r} is unknown; choose one of: {', '.join(CODECS)}")
    return got


def container_format(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in CONTAINERS:
        raise ValueError(f"a movie file must end in {', '.join(CONTAINERS)} (or be a PNG pattern "
                         f"such as DIR/frame%05d.png), not {ext or 'nothing'!r}")
    return CONTAINERS[ext]


def _open_stream(container, encoder: str, width: int, height: int, fps: int, threads: int | None):
    options = dict(ENCODER_OPTIONS.get(encoder, {}))
    if threads and encoder == "libx265":      # x265's own pool: this lane's share of the cores
        options["x265-params"] += f":pools={int(threads)}"
    stream = container.add_stream(encoder, rate=fps, options=options)
    stream.width, stream.height = int(width), int(height)
    stream.pix_fmt = PIXEL_FORMAT
    ctx = stream.codec_context
    ctx.time_base = Fraction(1, int(fps))
    ctx.color_primaries = ctx.color_trc = ctx.colorspace = BT709
    ctx.color_range = LIMITED_RANGE
    if threads and encoder in FRAME_THREADED:
        ctx.thread_type = "FRAME"
        ctx.thread_count = int(threads)
    return stream


def to_video_frame(rgba: np.ndarray, threads: int = 1):
    """An (h, w, 4) uint8 RGBA picture as a yuv420p frame in BT.709 limited range (FFmpeg's
    conversion; it runs without the GIL)."""
    import av
    h, w = rgba.shape[:2]
    # copied straight into the frame's plane: numpy copies without the GIL (from_ndarray would
    # make two copies holding it)
    frame = av.VideoFrame(w, h, "rgba")
    plane = frame.planes[0]
    np.copyto(np.ndarray((h, w, 4), np.uint8, buffer=plane, strides=(plane.line_size, 4, 1)), rgba)
    return frame.reformat(format=PIXEL_FORMAT, dst_colorspace="ITU709", dst_color_range="MPEG",
                          threads=threads)


def check_codec(codec: str, width: int, height: int, fps: int) -> str:
    """The encoder for `codec` once it has encoded a frame at this size and rate here; raises
    CodecUnavailable with a one-line reason otherwise (PyAV missing, an encoder FFmpeg does not
    have, a size it refuses, NVENC without a usable GPU)."""
    encoder = encoder_name(codec)
    missing = pyav_missing()
    if missing:
        raise CodecUnavailable(missing)
    import av
    if encoder not in av.codecs_available:
        raise CodecUnavailable(f"--codec {codec}: this FFmpeg (PyAV {av.__version__}) has no "
                               f"{encoder} encoder")
    if width % 2 or height % 2:
        raise ValueError(f"a {encoder} movie needs an even width and height (4:2:0 colour), not "
                         f"{width}x{height}")
    import io

    import av.logging
    level = av.logging.get_level()
    # FFmpeg's own words say why (e.g. "Cannot load libcuda.so.1"): caught, not printed
    av.logging.set_level(av.logging.ERROR)
    try:
        with av.logging.Capture() as said, av.open(io.BytesIO(), "w", format="mp4") as out:
            stream = _open_stream(out, encoder, width, height, fps, threads=1)
            frame = to_video_frame(np.zeros((height, width, 4), np.uint8))
            out.mux(stream.encode(frame))
            out.mux(stream.encode(None))
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise CodecUnavailable(f"--codec {codec} ({encoder}) cannot encode here: "
                               f"{_reason(exc, said, encoder)}") from None
    finally:
        av.logging.set_level(level)
    return encoder


def _reason(exc: BaseException, said, encoder: str) -> str:
    words = [" ".join(str(m[2]).split()) for m in said if len(m) > 2 and str(m[2]).strip()]
    text = words[-1] if words else (getattr(exc, "strerror", None) or " ".join(str(exc).split()))
    if "nvenc" in encoder:
        return (f"{text} (NVENC needs an NVIDIA driver and a GPU with a video encoder; "
                "the A100, H100 and H200 have none)")
    return text


class SegmentEncoder:
    """One segment: frames `add`ed in order, encoded into `path` (a temporary name beside it
    until `finish`). `abort()` (or an exception in `with`) removes the temporary file; a finished
    segment is whole on disk (fsync, then rename)."""

    def __init__(self, path: str, encoder: str, width: int, height: int, fps: int,
                 threads: int = 1):
        import av
        self.path = path
        self.frames = 0
        self._threads = max(1, int(threads))
        self._stack = contextlib.ExitStack()
        try:
            self._tmp = self._stack.enter_context(atomic_path(path))
            self._out = av.open(self._tmp, "w", format=CONTAINERS[SEGMENT_EXT])
            self._stream = _open_stream(self._out, encoder, width, height, fps, self._threads)
        except BaseException as exc:
            self._stack.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._done = False

    def add(self, rgba: np.ndarray) -> None:
        frame = to_video_frame(rgba, threads=self._threads)
        frame.pts = self.frames
        self._out.mux(self._stream.encode(frame))
        self.frames += 1

    def finish(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._out.mux(self._stream.encode(None))
            self._out.close()
        except BaseException as exc:
            self._stack.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._stack.close()       # fsync and rename into place

    def abort(self, exc: BaseException | None = None) -> None:
        if self._done:
            return
        self._done = True
        with contextlib.suppress(Exception):
            self._out.close()
        exc = exc or RuntimeError("the segment was abandoned")
        self._stack.__exit__(type(exc), exc, exc.__traceback__)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.finish()
        else:
            self.abort(exc)
        return False


class DeeperSegment(ValueError):
    """A segment decodes further ahead of its first frame than the delay the join was given."""


def _open_segment(path: str, template: bool = False):
    """A segment file opened for its packets. Opening decodes the first frame to learn the
    stream's parameters, slow for a big keyframe: only the segment whose stream becomes the
    output's template needs them, the others open without decoding."""
    import av
    if template:
        return av.open(path)
    try:
        return av.open(path, stream_options=[{"skip_frame": "all"}])
    except TypeError:       # PyAV 19's open() has no stream_options: options reach every stream
        return av.open(path, options={"skip_frame": "all"})


class JoinedVideo:
    """The output (`out_path`, written atomically: the temporary file in `tmp_folder` or beside
    it) made from segment files appended in order with `append(path, first frame)`: their packets
    copied, shifted to their frame's time, never encoded again; `close()` puts it in place,
    `discard()` removes it.

    A segment that reorders frames (B-frames) starts decoding before its first frame is shown, one
    too short to reorder does not: every segment is given the same decoding delay, `delay` ticks
    of the segments' clock (the deepest of them), or the decoding times would fall back where a
    short segment meets a long one (FFmpeg refuses those). A segment deeper than `delay` is
    refused (DeeperSegment) before any of its packets is written. Segments made by one encoder
    with one set of options share their codec headers; one that does not is refused (ValueError)
    rather than joined into a broken file."""

    def __init__(self, out_path: str, fps: int, delay: int, tmp_folder: str | None = None):
        self.out_path, self.fps, self.delay = out_path, int(fps), int(delay)
        self.frames = 0
        self._format = container_format(out_path)
        self._stack = contextlib.ExitStack()
        self._tmp = self._stack.enter_context(atomic_path(out_path, tmp_folder))
        self._out = self._stream = self._headers = None
        self._done = False

    def append(self, path: str, first: int) -> int:
        """Copy one segment's packets; returns its frames."""
        import av
        with _open_segment(path, template=self._out is None) as inp:
            stream = inp.streams.video[0]
            headers = bytes(stream.codec_context.extradata or b"")
            if self._out is None:
                self._out = av.open(self._tmp, "w", format=self._format)
                self._stream = self._out.add_stream_from_template(stream)
                self._stream.time_base = stream.time_base
                self._headers = headers
            elif headers != self._headers:
                raise ValueError(f"{path} was encoded with other settings than the first "
                                 "segment; remove the parts folder and start again")
            shift = Fraction(int(first), self.fps) / stream.time_base
            if shift.denominator != 1:
                raise ValueError(f"{path}: frame {first} falls between two ticks of the "
                                 f"segment's clock ({stream.time_base})")
            shift = int(shift)
            frames, dts_shift, out, ostream = 0, None, self._out, self._stream
            for packet in inp.demux(stream):
                if packet.size == 0:         # the demuxer's end marker
                    continue
                if dts_shift is None:        # the first packet says how far ahead it decodes
                    delay = max(0, -int(packet.dts or 0))
                    if delay > self.delay:
                        raise DeeperSegment(f"{path} decodes {delay} ticks ahead, the join was "
                                            f"given {self.delay}")
                    dts_shift = shift - (self.delay - delay)
                packet.pts += shift
                packet.dts += dts_shift
                packet.stream = ostream
                out.mux(packet)
                frames += 1
        self.frames += frames
        return frames

    def sync(self) -> None:
        """What is written so far onto the disk (the final fsync then has little left)."""
        if self._out is None:
            return
        fd = os.open(self._tmp, os.O_RDONLY)
        try:
            os.fdatasync(fd)
        finally:
            os.close(fd)

    def close(self) -> int:
        """The trailer written, the file synced and renamed into place; returns the frames."""
        if self._done:
            return self.frames
        self._done = True
        try:
            if self._out is None:
                raise ValueError(f"{self.out_path}: no segment to join")
            self._out.close()
        except BaseException as exc:
            self._stack.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._stack.close()
        return self.frames

    def discard(self, exc: BaseException | None = None) -> None:
        if self._done:
            return
        self._done = True
        if self._out is not None:
            with contextlib.suppress(Exception):
                self._out.close()
        exc = exc or RuntimeError("the join was abandoned")
        self._stack.__exit__(type(exc), exc, exc.__traceback__)


def join_segments(segments: list[tuple[str, int]], out_path: str, fps: int) -> int:
    """Write `out_path` (atomically) from the segment files [(path, first frame index), …] in
    order, each given the deepest decoding delay among them (see JoinedVideo). Returns the
    number of frames."""
    joined = JoinedVideo(out_path, fps, max((decoding_delay(p) for p, _ in segments), default=0))
    try:
        for path, first in segments:
            joined.append(path, first)
    except BaseException as exc:
        joined.discard(exc)
        raise
    return joined.close()


def decoding_delay(path: str) -> int:
    """Ticks of a segment's clock by which its first packet is decoded before it is shown."""
    with _open_segment(path) as inp:
        stream = inp.streams.video[0]
        for packet in inp.demux(stream):
            if packet.size and packet.dts is not None:
                return max(0, -int(packet.dts))
    return 0


def probe_frames(path: str) -> tuple[int, Fraction]:
    """(frames, frame rate) of a video file, by decoding it (tests, and checks after a join)."""
    import av
    with av.open(path) as inp:
        stream = inp.streams.video[0]
        n = sum(1 for _ in inp.decode(stream))
        return n, Fraction(stream.average_rate)
