"""Zoom movies: what a movie is (`MovieSpec`, as the user gave it), its checks before any work
(`prepare`: the output, the frame count, the place, the codec) and its frames' requests.

Frame k is the location kernels.mandelbrot.keyframes.zoom_path gives, turned into a request by the same
function `--render` uses (services.requests.mandelbrot_request with that frame's --center,
--width, --iters and --palette), so a frame equals `--render` of its location. The parts folder
and resuming are services/movie_parts.py, the encoder lanes services/movie_writer.py; the command
line (cli/movie.py) and the window (services/movie_jobs.py) both make movies from these.
"""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass

from kernels.mandelbrot.requests.formulas import LABELS, MANDELBROT, WHOLE_SETS
from kernels.mandelbrot.requests.formulas import check as check_formula

from .files import check_names_beside, check_writable
from .requests import DEFAULT_RENDER_SIZE, mandelbrot_request

# frames per second (the default, the most), the movie's length when none is given
DEFAULT_FPS = 60
MAX_FPS = 240
DEFAULT_MOVIE_SECONDS = 10.0
MAX_FRAMES = 1_000_000
# Every frame of a command-line movie is coloured with one mapping. Left to each frame's kind, the
# colours would jump where the zoom turns deep (float64 frames: sqrt; deep ones: log) and drift
# through the palette while it is deep (log starts at each frame's smallest count); sqrt depends
# on nothing but the pixel's own count.
MOVIE_MAPPING = "sqrt"


class MovieError(Exception):
    """A movie that cannot start, with a one-line message: a mistake in what was asked, or
    (`unusable`) something this machine cannot do."""

    def __init__(self, message: str, unusable: bool = False):
        super().__init__(message)
        self.unusable = unusable


class OtherMovie(MovieError):
    """The parts folder holds another movie's parts (--restart discards them)."""


class DiskFull(OSError):
    """The disk filled up while writing the movie; `kept` frames are finished."""


def is_png_pattern(out: str) -> bool:
    return os.fspath(out).lower().endswith(".png")


def frame_file(pattern: str, k: int) -> str:
    return pattern % k


def make_frames_folder(out: str) -> None:
    """A PNG sequence's folder is its output: made when only its last level is missing (a new
    folder beside existing ones, as `frames/z%05d.png` asks for). A path missing higher up is
    left for check_writable to name: a typo there must not build a tree of folders."""
    folder = os.path.dirname(os.path.abspath(os.fspath(out)))
    if (not is_png_pattern(out) or os.path.isdir(folder)
            or not os.path.isdir(os.path.dirname(folder))):
        return
    try:
        os.mkdir(folder)
    except FileExistsError:
        pass
    except OSError as exc:
        raise MovieError(f"cannot make the folder {folder} for the frames: "
                         f"{exc.strerror or exc}") from None


def check_output(out: str) -> str:
    """"video" or "png" for a movie written to `out`; MovieError naming what is wrong."""
    out = os.fspath(out)
    if is_png_pattern(out):
        try:
            a, b = out % 0, out % 1
        except (TypeError, ValueError):
            a = b = None
        if a is None or a == b or "%" in os.path.dirname(out):
            raise MovieError(f"--movie {out}: a PNG sequence needs one number pattern in the file "
                             "name, such as DIR/frame%05d.png")
        make_frames_folder(out)
        try:
            check_writable(a)
        except ValueError as exc:
            raise MovieError(str(exc)) from None
        _check_beside(out, (".{}.plan.json", ".{}.lock"))
        return "png"
    from .video import container_format
    try:
        container_format(out)
        check_writable(out)
    except ValueError as exc:
        raise MovieError(str(exc)) from None
    _check_beside(out, ("{}.parts", ".{}.lock"))
    return "video"


def _check_beside(out: str, patterns) -> None:
    try:
        check_names_beside(out, patterns)
    except ValueError as exc:
        raise MovieError(f"--movie {exc}") from None


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
    # offset, interior, mapping, and the formula where it is not Mandelbrot's: formula_field):
    # the movie looks as the view does. On the command line only the mapping (--mapping, else
    # MOVIE_MAPPING) and --formula, so frame k is `--render` of its place with them.
    colouring: tuple = ()
    # frames resampled from exponential-map keyframes (services/movie_keyframes.py) instead of
    # each rendered on its own; `oversample` multiplies the keyframes' sides
    keyframes: bool = False
    oversample: float = 1.0

    @property
    def frames(self) -> int:
        return max(2, round(self.fps * self.seconds))

    @property
    def kind(self) -> str:
        return "png" if is_png_pattern(self.out) else "video"


def formula_field(formula: str | None) -> tuple:
    """The (field, value) pair a MovieSpec's colouring holds for `formula`: none for the
    Mandelbrot set's, so that its movies' plans (and their parts, resumed) stay as they were."""
    if formula is None or formula == MANDELBROT:
        return ()
    return (("formula", check_formula(formula)),)


def movie_formula(spec: MovieSpec) -> str:
    return dict(spec.colouring).get("formula", MANDELBROT)


@dataclass(frozen=True)
class MoviePlace:
    """Where the window's zoom movie goes and how it is coloured: the Mandelbrot view's place as
    typed values (the centre as decimal strings of any length), made into MovieSpec's strings in
    one place (`spec`)."""
    center_re: str
    center_im: str
    width: str
    iters: int | None = None
    palette: str | None = None
    colouring: tuple = ()      # (field, value) pairs: density, offset, interior, mapping

    @property
    def mapping(self) -> str | None:
        """The view's colour mapping, None where the view leaves it to the movie ("auto")."""
        return dict(self.colouring).get("mapping")

    def with_mapping(self, mapping: str) -> MoviePlace:
        colouring = tuple(dict(self.colouring, mapping=mapping).items())
        return dataclasses.replace(self, colouring=colouring)

    def spec(self, out: str, **fields) -> MovieSpec:
        """The MovieSpec of a movie to this place; `fields`: its other fields (size, fps, ...)."""
        return MovieSpec(out=out, center=f"{self.center_re},{self.center_im}",
                         width=str(self.width),
                         iters=None if self.iters is None else str(int(self.iters)),
                         palette=self.palette, colouring=tuple(self.colouring), **fields)


@dataclass
class Movie:
    """A checked MovieSpec: its course, its encoder, and requests for any of its frames."""
    spec: MovieSpec
    path: object            # kernels.mandelbrot.keyframes.zoom_path.ZoomPath
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
        if s.keyframes:     # other frames than a per-frame movie's: never resumed from its parts
            plan["method"] = {"keyframes": True, "oversample": s.oversample}
        if s.colouring:
            plan["colouring"] = {k: list(v) if isinstance(v, tuple) else v for k, v in s.colouring}
        return plan

    def check_renderers(self) -> None:
        """RuntimeError saying what to install when this machine cannot render the movie's frames
        (a zoom that turns deep needs gmpy2), before any work."""
        from kernels.mandelbrot.jobs import check_renderer
        for k in (0, self.frames - 1):
            check_renderer(self.request(k))


def frame_request(path, k: int, palette, size, colouring=()):
    """Frame k's request: built from its --center/--width/--iters/--palette strings as
    `--render` builds it, then given the window's colouring when there is one."""
    w, h = size
    request = mandelbrot_request(path.frame(k).options(palette), w, h, False)
    if colouring:
        request = dataclasses.replace(request, **dict(colouring)).validate()
    return request


def one_mapping(spec: MovieSpec) -> MovieSpec:
    """`spec` with one colour mapping for every frame: its own, else MOVIE_MAPPING (left to each
    frame's kind, deep frames would take log). MovieError for log and histogram: they take each
    frame's own statistics (its smallest count, its histogram), so one count would change colour
    from frame to frame; statistics fixed for the whole zoom would leave its deep frames one
    colour (their counts sit close together far above the shallow frames'), which is what these
    mappings are for."""
    colouring = dict(spec.colouring)
    mapping = colouring.get("mapping") or MOVIE_MAPPING
    if mapping != MOVIE_MAPPING:
        raise MovieError(f"--mapping {mapping}: a movie colours every frame with one mapping that "
                         "depends on each pixel's count alone; log and histogram take each "
                         "frame's own statistics, so the same count would change colour from "
                         f"frame to frame. Use --mapping {MOVIE_MAPPING} (or leave it out)")
    colouring["mapping"] = mapping
    return dataclasses.replace(spec, colouring=tuple(colouring.items()))


def prepare(spec: MovieSpec, open_encoder: bool = True) -> Movie:
    """Check everything that can be checked before any work: the output, the size and frame
    count, the location, the codec (an encoder opened at this size and rate). MovieError (a
    mistake, or with `unusable` what this machine cannot do) with one line."""
    from kernels.mandelbrot.keyframes.zoom_path import Keyframe, zoom_in, zoom_out
    kind = check_output(spec.out)
    spec = one_mapping(spec)
    w, h = spec.size
    if not spec.fps * spec.seconds >= 1.5 or spec.frames > MAX_FRAMES:
        raise MovieError(f"--fps {spec.fps} for --seconds {spec.seconds:g} makes "
                         f"{spec.fps * spec.seconds:g} frames; a movie has from 2 to "
                         f"{MAX_FRAMES:,}")
    opts = {"center": spec.center, "width": spec.width, "iters": spec.iters,
            "palette": spec.palette}
    try:
        end = mandelbrot_request(opts, w, h, False)
    except ValueError as exc:
        raise MovieError(str(exc)) from None
    cx, cy = ([p.strip() for p in spec.center.split(",")] if spec.center is not None
              else ["-0.5", "0"])
    width = spec.width.strip() if spec.width is not None else "3"
    given = spec.iters is not None and str(spec.iters).strip().lower() != "auto"
    key = Keyframe(cx, cy, width, int(end.max_iter) if given else None)
    formula = movie_formula(spec)
    if formula != MANDELBROT and spec.keyframes:
        raise MovieError(f"--keyframes draws the Mandelbrot set only; leave it out for a "
                         f"{LABELS[formula]} movie (each frame is then rendered)")
    whole = {} if formula == MANDELBROT else {"whole": Keyframe(*WHOLE_SETS[formula])}
    course = (zoom_in if spec.zoom == "in" else zoom_out)(key.center_re, key.center_im,
                                                          key.width, key.iters, spec.frames,
                                                          **whole)
    encoder = None
    if kind == "video":
        from .video import DEFAULT_CODEC, CodecUnavailable, check_codec, encoder_name
        codec = spec.codec or DEFAULT_CODEC
        if w % 2 or h % 2:
            raise MovieError(f"a video needs an even width and height (4:2:0 colour), not "
                             f"{w}x{h}; choose another --size or write PNG frames")
        try:
            encoder = encoder_name(codec)
            if open_encoder:
                encoder = check_codec(codec, w, h, spec.fps)
        except CodecUnavailable as exc:
            raise MovieError(str(exc), unusable=True) from None
        except ValueError as exc:
            raise MovieError(str(exc)) from None
    elif spec.codec is not None:
        raise MovieError("--codec applies to a video file (.mp4, .mkv, .mov), not to PNG frames")
    return Movie(spec, course, encoder, spec.palette)


@dataclass(frozen=True)
class MovieFrameJob:
    """A pool job: frame k of the course, its request built where it runs (as `--render` builds
    it, so the feeder does no per-frame work up front), rendered by kernels' FrameJob. Returns
    (rgba, seconds of rendering).

    Deep frames of each encoder lane (`lane`) go to a deep renderer of that lane's own on the
    worker (FrameJob's series): the lanes' frames arrive interleaved, a few of each in turn, and
    one shared renderer would find the last frame's reference orbit at another lane's depth every
    time; each lane's renderer keeps the orbit of its own run of consecutive frames."""
    path: object
    k: int
    palette: str | None
    size: tuple[int, int]
    colouring: tuple = ()
    lane: int = 0

    def __call__(self, worker):
        from kernels.mandelbrot.tiles import FrameJob
        request = frame_request(self.path, self.k, self.palette, self.size, self.colouring)
        t0 = time.perf_counter()
        rgba = FrameJob(request, series=("movie", self.lane))(worker)
        return rgba, time.perf_counter() - t0
