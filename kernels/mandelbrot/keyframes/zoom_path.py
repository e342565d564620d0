"""Where each frame of a zoom movie looks: keyframes (centre and width as decimal strings, an
optional iteration count) in, the location of frame k of N out. Pure Python with `decimal`: no
numba, no numpy, so the command line and the window plan a movie without loading a kernel.

Between two keyframes (c0, w0) and (c1, w1) the width changes exponentially, w(t) = w0·r^t with
r = w1/w0 and t from 0 to 1, so every frame zooms by the same factor. The centre moves so that the
zoom is about one fixed point p, the point that stays where it is on the screen:
c(t) = p + (c0 − p)·s with s = w(t)/w0, where p = (c1 − c0·r)/(1 − r) makes c(1) = c1 (two
keyframes of one width are joined by a plain pan instead). p is computed once per pair with all the
digits the deepest frame needs; an error ε in s then moves the centre by ε·|c0 − p|/w0 of the
frame's own width at any depth, so s needs only a few dozen digits (more where r is near 1 and p
lies far away). Each centre is rounded to CENTRE_DIGITS_BELOW_WIDTH digits below its frame's width
(sub-pixel at any picture size).

Frames are spread over the keyframe pairs by how far each pair travels (its e-folds of zoom and
screens of pan), so the zoom runs at one speed through the whole movie.

Iterations: a keyframe without an iteration count uses the depth's automatic limit
(kernels.mandelbrot.requests.request.auto_iterations); one with a count sets the ratio count/automatic
there, and frames between take the automatic limit of their own width times that ratio,
interpolated log-linearly. So the limit grows steadily with depth and never jumps. Why this looks
steady: the colour of an escaped pixel depends on its smooth escape count only (escape.py's count
does not involve the limit, and colour.py's sqrt and log mappings use the limit only to tell the
inside from the outside), so a frame with a larger limit changes no escaped pixel's colour; it only
turns the few pixels that escape between the two limits from the interior colour to theirs, which
is the set's edge resolving as the zoom deepens. A fixed limit (the deepest frame's) would look the
same but cost the shallow frames the deep frames' iterations on every interior pixel.
(What would move between frames is the log mapping's origin, the frame's smallest escaped count,
with which --render colours deep frames, and the mapping itself where the zoom turns deep (float64
frames: sqrt): so a movie colours every frame with one mapping, sqrt unless told otherwise, which
depends on nothing but each pixel's own count; services.movie.MOVIE_MAPPING.)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal, localcontext

from ..requests.deep_request import parse_decimal, parse_width
from ..requests.request import MAX_ITER_LIMIT, auto_iterations

# the whole set as the window's Home shows it (and as --render draws it without --center/--width)
WHOLE_SET_CENTRE = ("-0.5", "0")
WHOLE_SET_WIDTH = "3"
# a frame's centre is kept to this many decimal digits below the leading digit of its width:
# 1e-12 of the width is 1e-9 of a pixel at 1920 pixels across
CENTRE_DIGITS_BELOW_WIDTH = 12
# significant digits of each frame's width (and of the zoom factor s used for the centre)
WIDTH_DIGITS = 20
RATIO_DIGITS = 40
MAX_FRAMES = 10_000_000
# widths above this are taken as floats for the automatic iteration count (same value, quicker)
_TINY = Decimal("1e-300")


@dataclass(frozen=True)
class Keyframe:
    """A place the movie passes through: centre (decimal strings of any length), width (a
    decimal string) and an iteration limit (None: automatic from the width)."""
    center_re: str
    center_im: str
    width: str
    iters: int | None = None

    def __post_init__(self):
        for name in ("center_re", "center_im"):
            parse_decimal(getattr(self, name), name.replace("_", " ").replace("center", "centre"))
        w = parse_width(self.width)
        if not w > 0:
            raise ValueError(f"a keyframe's width must be above 0, got {self.width!r}")
        if self.iters is not None:
            if isinstance(self.iters, bool) or not isinstance(self.iters, int) \
                    or not 1 <= self.iters <= MAX_ITER_LIMIT:
                raise ValueError(f"a keyframe's iteration count must be a whole number from 1 to "
                                 f"{MAX_ITER_LIMIT:,}, got {self.iters!r}")


WHOLE_SET = Keyframe(*WHOLE_SET_CENTRE, WHOLE_SET_WIDTH)


@dataclass(frozen=True)
class FrameLocation:
    """Frame `index` of a movie: what `main.py --render mandelbrot` takes to draw it alone."""
    index: int
    center_re: str
    center_im: str
    width: str
    iters: int

    def options(self, palette: str | None = None) -> dict:
        """The --center/--width/--iters/--palette strings (services.requests.mandelbrot_request's
        `opts`): rendering them is rendering this frame."""
        return {"center": f"{self.center_re},{self.center_im}", "width": self.width,
                "iters": str(self.iters), "palette": palette}


class ZoomPath:
    """`frames` frames through `keyframes` (at least two), the first frame at the first
    keyframe and the last at the last, both exactly as given."""

    def __init__(self, keyframes, frames: int):
        keys = list(keyframes)
        if len(keys) < 2:
            raise ValueError("a zoom needs at least two keyframes")
        if isinstance(frames, bool) or not isinstance(frames, int) or not 1 <= frames <= MAX_FRAMES:
            raise ValueError(f"a movie has from 1 to {MAX_FRAMES:,} frames, got {frames!r}")
        self.keyframes = tuple(keys)
        self.frames = frames
        self._c = [(Decimal(parse_decimal(k.center_re, "centre")),
                    Decimal(parse_decimal(k.center_im, "centre"))) for k in keys]
        self._w = [parse_width(k.width) for k in keys]
        # digits that hold every keyframe exactly and reach below the deepest frame's pixels
        held = max(_digits(d) for pair in self._c for d in pair)
        top = max(max(abs(d) for d in pair).adjusted() for pair in self._c)
        deepest = min(w.adjusted() for w in self._w)
        lost = max(_digits_lost(a, b) for a, b in zip(self._w, self._w[1:]))
        self._prec = max(held, max(top, 0) - deepest + CENTRE_DIGITS_BELOW_WIDTH) + lost + 10
        # how far each pair travels: e-folds of zoom and screens of pan, never nothing
        self._weights = []
        for (c0, c1, w0, w1) in zip(self._c, self._c[1:], self._w, self._w[1:]):
            zoom = abs(_ln(w1) - _ln(w0))
            pan = float(max(abs(c1[0] - c0[0]), abs(c1[1] - c0[1])) / max(w0, w1))
            self._weights.append(math.hypot(zoom, pan) or 1e-9)
        # the fixed point of each pair (None for a pan at one width), with all the digits
        self._fixed = []
        with localcontext(Context(prec=self._prec, rounding=ROUND_HALF_EVEN)):
            for (c0, c1, w0, w1) in zip(self._c, self._c[1:], self._w, self._w[1:]):
                r = w1 / w0
                self._fixed.append(None if w0 == w1 else
                                   tuple((c1[j] - c0[j] * r) / (1 - r) for j in range(2)))
        # per pair: ln(w1/w0) for the widths between, and the keyframes' iteration ratios
        self._ln_ratio = []
        for w0, w1 in zip(self._w, self._w[1:]):
            with localcontext(Context(prec=RATIO_DIGITS + _digits_lost(w0, w1))):
                self._ln_ratio.append((w1 / w0).ln())
        self._key_ratio = [self._iters_at_key(i) / auto_iterations(str(w))
                           for i, w in enumerate(self._w)]
        total = sum(self._weights)
        self._starts = [sum(self._weights[:i]) / total for i in range(len(self._weights))] + [1.0]

    def __len__(self) -> int:
        return self.frames

    def __iter__(self):
        return (self.frame(k) for k in range(self.frames))

    def time_of(self, k: int) -> float:
        """Where frame k lies on the movie's course, 0 (first keyframe) to 1 (last)."""
        return 0.0 if self.frames == 1 else k / (self.frames - 1)

    def frame(self, k: int) -> FrameLocation:
        if not 0 <= k < self.frames:
            raise IndexError(f"frame {k} of a {self.frames}-frame movie")
        u = self.time_of(k)
        for i in range(len(self._weights)):
            if u <= self._starts[i + 1] or i == len(self._weights) - 1:
                break
        t = (u - self._starts[i]) / (self._starts[i + 1] - self._starts[i])
        t = min(1.0, max(0.0, t))
        # the keyframes themselves come out exactly as given
        if t == 0.0:
            return self._at_key(k, i)
        if t == 1.0:
            return self._at_key(k, i + 1)
        return self._between(k, i, t)

    def _at_key(self, k: int, i: int) -> FrameLocation:
        key = self.keyframes[i]
        return FrameLocation(k, str(key.center_re).strip(), str(key.center_im).strip(),
                             str(key.width).strip(), self._iters_at_key(i))

    def _iters_at_key(self, i: int) -> int:
        key = self.keyframes[i]
        return key.iters if key.iters is not None else auto_iterations(str(self._w[i]))

    def _between(self, k: int, i: int, t: float) -> FrameLocation:
        (c0, c1), (w0, w1) = (self._c[i], self._c[i + 1]), (self._w[i], self._w[i + 1])
        tt = Decimal(repr(t))
        with localcontext(Context(prec=RATIO_DIGITS + _digits_lost(w0, w1))):
            s = (tt * self._ln_ratio[i]).exp()        # w(t)/w0
        with localcontext(Context(prec=WIDTH_DIGITS, rounding=ROUND_HALF_EVEN)):
            width = +(w0 * s)
        quantum = Decimal(1).scaleb(width.adjusted() - CENTRE_DIGITS_BELOW_WIDTH)
        with localcontext(Context(prec=self._prec, rounding=ROUND_HALF_EVEN)):
            p = self._fixed[i]
            if p is None:                             # one width: a pan
                re_, im_ = (c0[j] + (c1[j] - c0[j]) * tt for j in range(2))
            else:
                re_, im_ = (p[j] + (c0[j] - p[j]) * s for j in range(2))
            re_, im_ = re_.quantize(quantum), im_.quantize(quantum)
        return FrameLocation(k, _plain(re_), _plain(im_), _plain(width),
                             self._iters_between(i, t, width))

    def _iters_between(self, i: int, t: float, width: Decimal) -> int:
        # the automatic limit of this width, scaled by the keyframes' own ratios to theirs
        ratios = self._key_ratio[i:i + 2]
        ratio = math.exp((1 - t) * math.log(ratios[0]) + t * math.log(ratios[1]))
        n = round(auto_iterations(float(width)) * ratio) if width > _TINY else \
            round(auto_iterations(str(width)) * ratio)
        return int(min(MAX_ITER_LIMIT, max(1, n)))


def zoom_in(center_re: str, center_im: str, width: str, iters: int | None, frames: int,
            whole: Keyframe = WHOLE_SET) -> ZoomPath:
    """From the whole set (`whole`: another formula's) in to the place (its iteration count, or
    automatic)."""
    return ZoomPath([whole, Keyframe(center_re, center_im, width, iters)], frames)


def zoom_out(center_re: str, center_im: str, width: str, iters: int | None, frames: int,
             whole: Keyframe = WHOLE_SET) -> ZoomPath:
    """From the place out to the whole set (`whole`: another formula's)."""
    return ZoomPath([Keyframe(center_re, center_im, width, iters), whole], frames)


def _digits(d: Decimal) -> int:
    return len(d.as_tuple().digits)


def _ln(d: Decimal) -> float:
    adj = d.adjusted()
    return adj * math.log(10) + math.log(float(d.scaleb(-adj)))


def _digits_lost(w0: Decimal, w1: Decimal) -> int:
    """Digits that 1 − r loses to cancellation when r = w1/w0 is near 1 (a pan with a little
    zoom): the ratio is computed with that many more."""
    if w0 == w1:
        return 0
    rel = abs(w1 - w0) / max(w0, w1)
    return max(0, -rel.adjusted())


def _plain(d: Decimal) -> str:
    """A decimal string as short as the value allows: no trailing zeros, exponent form only
    where plain digits would be long (1e-40 rather than forty zeros)."""
    if d == 0:
        return "0"
    d = d.normalize(Context(prec=max(1, _digits(d))))     # no rounding: only zeros go
    text = str(d)
    if "E" in text or "e" in text:
        plain = format(d, "f")
        return plain if len(plain) <= len(text) + 6 else text.replace("E", "e")
    return text
