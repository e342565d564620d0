"""Requests from command-line strings: `--center/--width/--iters/--palette` for the Mandelbrot view,
`--bounds/--ref/--unit/--strategy/--palette` for the distance heatmap. Each raises ValueError with a
one-line message naming the valid choices.

Mandelbrot places are decimal strings of any length: a width that float64 can still draw gives a
MandelbrotRequest, a deeper one (or one past float64's digits at that centre) a DeepFrameRequest,
rendered by perturbation around an arbitrary-precision reference orbit."""
from __future__ import annotations

import math
import numbers
from decimal import Decimal, InvalidOperation

from kernels import palettes
from kernels.distance.request import (
    DEFAULT_PALETTE,
    DEFAULT_STRATEGY,
    LONDON,
    WORLD,
    DistanceRequest,
)
from kernels.mandelbrot.deep.request import MAX_CENTRE_CHARS, MIN_WIDTH_EXP10, log10_of
from kernels.mandelbrot.request import (
    MAX_ITER_LIMIT,
    DeepFrameRequest,
    MandelbrotRequest,
    auto_iterations,
    precision_state,
)

MANDELBROT_OPTIONS = ("center", "width", "iters", "palette")

# The limits every Mandelbrot location is held to, however it arrives: pasted text, a bookmark
# file, --center/--width/--iters. The set lies within |c| <= 2; these leave room to look around it.
MAX_CENTRE = 1e6
MAX_VIEW_WIDTH = 1e3


def location_number(value, what: str) -> Decimal:
    """A finite Decimal from a number, a Decimal or a decimal string of up to MAX_CENTRE_CHARS
    characters; ValueError in plain words otherwise (nothing of an absurd string is parsed)."""
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number, not {value!r}")
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_CENTRE_CHARS:
            raise ValueError(f"{what} has {len(text):,} characters; at most {MAX_CENTRE_CHARS:,} are "
                             f"accepted (enough for a width of 1e{MIN_WIDTH_EXP10})")
        try:
            d = Decimal(text)
        except InvalidOperation:
            shown = text if len(text) <= 30 else text[:27] + "..."
            raise ValueError(f"{what} must be a number, not {shown!r}") from None
    elif isinstance(value, Decimal):
        d = value
    elif isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{what} must be a finite number, not {value!r}")
        d = Decimal(repr(f)) if isinstance(value, float) else Decimal(int(value))
    else:
        raise ValueError(f"{what} must be a number, not {value!r}")
    if not d.is_finite():
        raise ValueError(f"{what} must be a finite number, not {value!r}")
    return d


def check_location(center_re, center_im, width, iterations=None) -> None:
    """Raise ValueError in plain words when a location cannot be shown: a centre or width that is
    not a finite number (decimal strings of any length up to MAX_CENTRE_CHARS are fine) or lies
    out of range, a width deeper than 1e-10000, or an iteration count that is not a whole number
    from 1 to MAX_ITER_LIMIT (None = automatic). Widths past float64's precision are fine: they
    render by perturbation (kernels/mandelbrot/deep)."""
    re_ = location_number(center_re, "the centre's real part")
    im_ = location_number(center_im, "the centre's imaginary part")
    w = location_number(width, "the width")
    for what, d in (("the centre's real part", re_), ("the centre's imaginary part", im_)):
        if abs(d) > Decimal(repr(MAX_CENTRE)):
            raise ValueError(f"{what} {float(d):g} is too far out; the set lies within |c| ≤ 2")
    if not w > 0:
        raise ValueError(f"the width must be a positive number, not {_short(w)}")
    if w > Decimal(repr(MAX_VIEW_WIDTH)):
        raise ValueError(f"the width {float(w):g} is too large; the whole set is about 3 wide")
    if log10_of(w) < MIN_WIDTH_EXP10:
        raise ValueError(f"the width {_short(w)} is deeper than the deepest supported, 1e{MIN_WIDTH_EXP10}")
    if iterations is not None:
        ok = isinstance(iterations, numbers.Integral) and not isinstance(iterations, bool)
        if not ok or not 1 <= iterations <= MAX_ITER_LIMIT:
            raise ValueError(f"the iteration count must be a whole number from 1 to "
                             f"{MAX_ITER_LIMIT:,} (or automatic), not {iterations!r}")


def _short(d) -> str:
    s = str(d)
    return s if len(s) <= 30 else f"{float(d.scaleb(-d.adjusted())):.3g}e{d.adjusted()}"


def needs_deep(center_re, center_im, width, pixels: int) -> bool:
    """Whether float64 cannot draw this place at `pixels` across: the width is below what a
    double holds well, or the pixel spacing is past float64's digits at that centre."""
    re_, im_, w = (location_number(v, "value") for v in (center_re, center_im, width))
    if w < Decimal("1e-290"):
        return True
    return precision_state(float(re_), float(im_), float(w), max(1, int(pixels)))[0] == "limit"


def mandelbrot_request(opts: dict, width: int, height: int, want_values: bool):
    """Build a request from `--center X,Y --width W --iters N --palette NAME` (raw strings or None):
    a MandelbrotRequest where float64 suffices, else a DeepFrameRequest (centre and width kept as
    the decimal strings given, of any length)."""
    opts = opts or {}
    center = opts.get("center")
    cx, cy = "-0.5", "0"
    if center is not None:
        parts = [p.strip() for p in str(center).split(",")]
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"--center must be two numbers X,Y such as -0.5,0; got {_clip(center)}")
        cx, cy = parts
        try:
            location_number(cx, "X")
            location_number(cy, "Y")
        except ValueError as exc:
            raise ValueError(f"--center must be two finite numbers X,Y such as -0.5,0 ({exc})") from None
    view_width = "3"
    if opts.get("width") is not None:
        view_width = str(opts["width"]).strip()
        try:
            w = location_number(view_width, "--width")
        except ValueError:
            raise ValueError(f"--width must be a finite number above 0 such as 3 or 1e-6; "
                             f"got {_clip(opts['width'])}") from None
        if not w > 0:
            raise ValueError(f"--width must be a finite number above 0 such as 3 or 1e-6; "
                             f"got {_clip(opts['width'])}")
    if opts.get("iters") is not None and str(opts["iters"]).strip().lower() != "auto":
        raw = str(opts["iters"]).strip()
        try:
            iters = int(raw)
        except ValueError:
            try:  # "1e6" is a fine way to say a million, "2.5" is not a count
                f = float(raw)
                iters = int(f) if math.isfinite(f) and f == int(f) else None
            except (ValueError, OverflowError):
                iters = None
            if iters is None:
                raise ValueError(f"--iters must be a whole number from 1 to {MAX_ITER_LIMIT:,} "
                                 f"(or auto); got {raw!r}") from None
        if not 1 <= iters <= MAX_ITER_LIMIT:
            raise ValueError(f"--iters must be from 1 to {MAX_ITER_LIMIT:,} (or auto); got {raw!r}")
    else:
        iters = auto_iterations(view_width)
    palette = palettes.DEFAULT
    if opts.get("palette") is not None:
        palette = str(opts["palette"]).strip()
        try:
            palettes.lut(palette)
        except ValueError:
            raise ValueError(f"--palette {palette!r} is unknown; choose one of: "
                             f"{', '.join(palettes.names())}") from None
    try:
        size = (int(width), int(height))
    except (TypeError, ValueError):
        raise ValueError(f"size must be two whole numbers WxH, got {width!r}x{height!r}") from None
    try:
        check_location(cx, cy, view_width, iters)
    except ValueError as exc:
        raise ValueError(f"--center/--width/--iters: {exc}") from None
    if needs_deep(cx, cy, view_width, size[0]):
        req = DeepFrameRequest(str(Decimal(cx)), str(Decimal(cy)), str(Decimal(view_width)), size, iters,
                               palette=palette, want_values=bool(want_values))
    else:
        req = MandelbrotRequest(float(Decimal(cx)), float(Decimal(cy)), float(Decimal(view_width)),
                                size, iters, palette=palette, want_values=bool(want_values))
    req.validate()
    return req


def _clip(text) -> str:
    s = repr(str(text))
    return s if len(s) <= 60 else s[:57] + "...'"


DISTANCE_OPTIONS = ("bounds", "ref", "unit", "strategy", "palette")


def _numbers(text, count: int, option: str, shape: str, default):
    if text is None or str(text).strip() == "":
        return tuple(default)
    parts = [t.strip() for t in str(text).split(",")]
    try:
        vals = tuple(float(t) for t in parts)
    except ValueError:
        vals = ()
    if len(vals) != count:
        raise ValueError(f"--{option} needs {count} comma-separated numbers {shape}, got {text!r}")
    return vals


def distance_request(opts: dict, width: int, height: int, want_values: bool) -> DistanceRequest:
    """Build and validate a request from `--bounds/--ref/--unit/--strategy/--palette` strings."""
    opts = opts or {}
    bounds = _numbers(opts.get("bounds"), 4, "bounds", "LAT0,LAT1,LON0,LON1 (e.g. -90,90,-180,180)", WORLD)
    ref = _numbers(opts.get("ref"), 2, "ref", "LAT,LON (e.g. 51.5074,-0.1278)", LONDON)
    unit = opts.get("unit") or "km"
    strategy = opts.get("strategy") or DEFAULT_STRATEGY
    palette = opts.get("palette") or DEFAULT_PALETTE
    req = DistanceRequest(bounds=bounds, ref=ref, size=(int(width), int(height)), unit=unit,
                          strategy=strategy, palette=palette, want_values=bool(want_values))
    return req.validate()


# view -> (the options it takes, the request builder)
RENDER_VIEWS = {"mandelbrot": (MANDELBROT_OPTIONS, mandelbrot_request),
                "distance": (DISTANCE_OPTIONS, distance_request)}
