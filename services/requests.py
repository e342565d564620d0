"""Requests from places: `place_request` builds a Mandelbrot frame's request from a place (centre,
width, size, iterations, colouring) for the window, movies and the command line alike; the
builders from option strings (`--center/--width/--iters/--palette` for the Mandelbrot view,
`--bounds/--ref/--unit/--strategy/--palette` for the distance heatmap) raise ValueError with a
one-line message naming the valid choices; `check_location` holds every place to the same limits.

Mandelbrot places are decimal strings of any length: where float64 still draws the place at that
many pixels across they give a MandelbrotRequest, else a DeepFrameRequest, rendered by
perturbation around an arbitrary-precision reference orbit (kernels/mandelbrot/requests/number_format.py
is the rule)."""
from __future__ import annotations

import math
import numbers

from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation

from kernels import palettes
from kernels.distance.request import (
    DEFAULT_PALETTE,
    DEFAULT_STRATEGY,
    LONDON,
    WORLD,
    DistanceRequest,
)
from kernels.mandelbrot.requests.deep_request import MAX_CENTRE_CHARS, MIN_WIDTH_EXP10, log10_of
from kernels.mandelbrot.requests.formulas import FORMULAS
from kernels.mandelbrot.requests.number_format import number_format
from kernels.mandelbrot.requests.request import (
    MAPPINGS,
    MAX_ITER_LIMIT,
    DeepFrameRequest,
    MandelbrotRequest,
    auto_iterations,
)

MANDELBROT_OPTIONS = ("center", "width", "iters", "palette", "mapping", "formula")
# a picture's size (pixels) when none is given: --render, --movie and the window's movie dialog
DEFAULT_RENDER_SIZE = (1920, 1080)

# The limits every Mandelbrot location is held to, however it arrives: pasted text, a bookmark
# file, --center/--width/--iters. The set lies within |c| <= 2; these leave room to look around it.
MAX_CENTRE = 1e6
MAX_VIEW_WIDTH = 1e3
# A number of a location past this power of ten is refused as it is read, before any arithmetic:
# nothing that large is a place, and Decimal arithmetic on 1e1000000 overflows (decimal.Overflow).
MAX_NUMBER_EXP10 = 100
# and one nearer 0 than this (twice the most digits a coordinate may have; 1e-10000 is the deepest
# width): no place needs it, and Decimal arithmetic on 1e-99999999999 fails (InvalidOperation)
MIN_NUMBER_EXP10 = -2 * MAX_CENTRE_CHARS
# an iteration count longer than this is refused before it is converted: '1e999999999' would take
# minutes to become an int, and 5,000 digits pass Python's limit for int(str)
MAX_COUNT_CHARS = 40


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
    if not d.is_zero() and d.adjusted() > MAX_NUMBER_EXP10:
        raise ValueError(f"{what} {_short(d)} is far out of range: a centre lies within "
                         f"±{MAX_CENTRE:g} and a width is at most {MAX_VIEW_WIDTH:g}")
    if not d.is_zero() and d.adjusted() < MIN_NUMBER_EXP10:
        raise ValueError(f"{what} {_short(d)} is far out of range: the deepest width supported "
                         f"is 1e{MIN_WIDTH_EXP10}")
    return d


def iteration_count(value, what: str, hint: str = "") -> int:
    """A whole number from 1 to MAX_ITER_LIMIT from an int, a Decimal, a float or text ("5000",
    "1e6"); ValueError naming the limit otherwise ("{what} must be …{hint}; got …"). Text is
    refused by its length and a number by its size before it is turned into an int."""
    form = f"{what} must be a whole number from 1 to {MAX_ITER_LIMIT:,}{hint}"
    if isinstance(value, bool):
        raise ValueError(f"{form}; got {value!r}")
    if isinstance(value, numbers.Integral):
        n = int(value)
        if not 1 <= n <= MAX_ITER_LIMIT:
            shown = f"{n:,}" if n.bit_length() <= 64 else f"a number of {len(hex(n)) - 2:,} hex digits"
            raise ValueError(f"{what} must be from 1 to {MAX_ITER_LIMIT:,}{hint}; got {shown}")
        return n
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_COUNT_CHARS:
            raise ValueError(f"{form}; got a number of {len(text):,} characters")
        try:
            d = Decimal(text)
        except InvalidOperation:
            raise ValueError(f"{form}; got {_clip(text)}") from None
    elif isinstance(value, Decimal):
        d = value
    elif isinstance(value, numbers.Real):
        d = Decimal(repr(float(value))) if math.isfinite(float(value)) else Decimal("nan")
    else:
        raise ValueError(f"{form}; got {_clip(value)}")
    shown = _clip(value) if isinstance(value, str) else _short(d) if d.is_finite() else str(d)
    if not d.is_finite():
        raise ValueError(f"{form}; got {shown}")
    if not d.is_zero() and d.adjusted() > 18:      # a whole number, far past the limit
        raise ValueError(f"{what} must be from 1 to {MAX_ITER_LIMIT:,}{hint}; got {shown}")
    if d != d.to_integral_value():
        raise ValueError(f"{form}; got {shown}")
    n = int(d)
    if not 1 <= n <= MAX_ITER_LIMIT:
        raise ValueError(f"{what} must be from 1 to {MAX_ITER_LIMIT:,}{hint}; got {shown}")
    return n


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
            raise ValueError(f"{what} {_shown(d)} is too far out (at most ±{MAX_CENTRE:g}); the set "
                             "lies within |c| ≤ 2")
    if not w > 0:
        raise ValueError(f"the width must be a positive number, not {_short(w)}")
    if w > Decimal(repr(MAX_VIEW_WIDTH)):
        raise ValueError(f"the width {_shown(w)} is too large (at most {MAX_VIEW_WIDTH:g}); the "
                         "whole set is about 3 wide")
    if log10_of(w) < MIN_WIDTH_EXP10:
        raise ValueError(f"the width {_short(w)} is deeper than the deepest supported, 1e{MIN_WIDTH_EXP10}")
    if iterations is not None:
        ok = isinstance(iterations, numbers.Integral) and not isinstance(iterations, bool)
        if not ok or not 1 <= iterations <= MAX_ITER_LIMIT:
            shown = (repr(iterations) if not ok or iterations.bit_length() <= 64
                     else "a number too large to show")
            raise ValueError(f"the iteration count must be a whole number from 1 to "
                             f"{MAX_ITER_LIMIT:,} (or automatic), not {shown}")


def _shown(d) -> str:
    """A number for a message: plainly where float64 shows it well, else as _short does."""
    return f"{float(d):g}" if d.is_zero() or -20 <= d.adjusted() <= 20 else _short(d)


def _short(d) -> str:
    s = str(d)
    if len(s) <= 30:
        return s
    return f"{float(d.scaleb(-d.adjusted(), _WIDE)):.3g}e{d.adjusted()}"


# arithmetic on a number of any exponent (what the default context would call an overflow)
_WIDE = Context(prec=28, Emin=MIN_EMIN, Emax=MAX_EMAX)


def place_request(center_re, center_im, width, size, max_iter: int, **colouring):
    """The request for a frame of this place at `size` = (w, h) pixels: a MandelbrotRequest where
    float64 draws it (number_format), else a DeepFrameRequest with the centre's and width's digits
    as decimal strings. `colouring`: the requests' other fields (palette, density, offset,
    interior, mapping, want_values, backend, formula: both kinds carry it); a field left out keeps
    each kind's default.
    Not validated here: the command line validates at once, the window when the job runs."""
    w, h = int(size[0]), int(size[1])
    re_, im_, wd = (location_number(v, what) for v, what in (
        (center_re, "the centre's real part"), (center_im, "the centre's imaginary part"),
        (width, "the width")))
    if number_format(re_, im_, wd, w) == "float64":
        req = MandelbrotRequest(float(re_), float(im_), float(wd), (w, h), int(max_iter),
                                **colouring)
    else:
        req = DeepFrameRequest(str(re_), str(im_), str(wd), (w, h), int(max_iter), **colouring)
    return req


def mandelbrot_request(opts: dict, width: int, height: int, want_values: bool, notes=None):
    """Build a request from `--center X,Y --width W --iters N --palette NAME --mapping sqrt|log|
    histogram --formula mandelbrot|burning-ship` (raw strings or None; without --mapping each kind
    of frame keeps its own default, without --formula the Mandelbrot set):
    a MandelbrotRequest where float64 suffices, else a DeepFrameRequest (centre and width kept as
    the decimal strings given, of any length). `notes` is unused: the builders of every view
    take it (distance_request adds lines for the user to it)."""
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
            if "characters" in str(exc) or "out of range" in str(exc):
                raise ValueError(f"--center: {exc}") from None
            raise ValueError(f"--center must be two finite numbers X,Y such as -0.5,0 ({exc})") from None
    view_width = "3"
    if opts.get("width") is not None:
        view_width = str(opts["width"]).strip()
        try:
            w = location_number(view_width, "--width")
        except ValueError as exc:
            if "characters" in str(exc) or "out of range" in str(exc):
                raise
            what = "a finite number" if "finite" in str(exc) else "a number"
            raise ValueError(f"--width must be {what} above 0 such as 3 or 1e-6; "
                             f"got {_clip(opts['width'])}") from None
        if not w > 0:
            raise ValueError(f"--width must be a finite number above 0 such as 3 or 1e-6; "
                             f"got {_clip(opts['width'])}")
    if opts.get("iters") is not None and str(opts["iters"]).strip().lower() != "auto":
        iters = iteration_count(str(opts["iters"]), "--iters", " (or auto)")
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
    colouring = {}
    if opts.get("mapping") is not None:
        mapping = str(opts["mapping"]).strip()
        if mapping not in MAPPINGS:
            raise ValueError(f"--mapping {mapping!r} is unknown; choose one of: {', '.join(MAPPINGS)}")
        colouring["mapping"] = mapping
    if opts.get("formula") is not None:
        formula = str(opts["formula"]).strip()
        if formula not in FORMULAS:
            raise ValueError(f"--formula {_clip(formula)} is unknown; choose one of: "
                             f"{', '.join(FORMULAS)}")
        colouring["formula"] = formula
    try:
        size = (int(width), int(height))
    except (TypeError, ValueError):
        raise ValueError(f"size must be two whole numbers WxH, got {width!r}x{height!r}") from None
    try:
        check_location(cx, cy, view_width, iters)
    except ValueError as exc:
        raise ValueError(f"--center/--width/--iters: {exc}") from None
    return place_request(cx, cy, view_width, size, iters, palette=palette,
                         want_values=bool(want_values), **colouring).validate()


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


# What longitudes mean on the command line (the window's map pans within the same ±540°): a
# reference longitude is any finite number; outside [-180, 180] it is taken modulo 360 into
# [-180, 180), with a note. A box's longitudes lie within [-LON_LIMIT, LON_LIMIT] and span at
# most a full turn, so a box may cross the antimeridian (170 to 190) but never cover a place twice.
LON_LIMIT = 540.0


def wrap_longitude(lon: float) -> float:
    """lon taken into [-180, 180): 190 -> -170, 1000 -> -80; one within [-180, 180] is kept
    exactly as given (180 and -180 are the same meridian)."""
    if -180.0 <= lon <= 180.0:
        return lon
    return (lon + 180.0) % 360.0 - 180.0


def check_bounds_longitudes(lon0: float, lon1: float) -> None:
    """ValueError in plain words when a box's longitudes break the rule above."""
    rule = (f"longitudes lie within [-{LON_LIMIT:g}, {LON_LIMIT:g}] and span at most 360° "
            "(to cross the antimeridian let LON1 exceed 180, e.g. -10,10,170,190)")
    for name, v in (("LON0", lon0), ("LON1", lon1)):
        if not -LON_LIMIT <= v <= LON_LIMIT:
            raise ValueError(f"--bounds {name} = {v:g} is out of range: {rule}")
    if lon1 - lon0 > 360.0:
        raise ValueError(f"--bounds spans {lon1 - lon0:g}° of longitude ({lon0:g} to {lon1:g}), "
                         f"more than a full turn: {rule}")


def distance_request(opts: dict, width: int, height: int, want_values: bool,
                     notes: list | None = None) -> DistanceRequest:
    """Build and validate a request from `--bounds/--ref/--unit/--strategy/--palette` strings.
    A reference longitude outside [-180, 180) is wrapped, with a line for the user in `notes`."""
    opts = opts or {}
    bounds = _numbers(opts.get("bounds"), 4, "bounds", "LAT0,LAT1,LON0,LON1 (e.g. -90,90,-180,180)", WORLD)
    ref = _numbers(opts.get("ref"), 2, "ref", "LAT,LON (e.g. 51.5074,-0.1278)", LONDON)
    # (a value that is not finite is left to DistanceRequest.validate, which says so)
    if math.isfinite(bounds[2]) and math.isfinite(bounds[3]):
        check_bounds_longitudes(bounds[2], bounds[3])
    lon = wrap_longitude(ref[1]) if math.isfinite(ref[1]) else ref[1]
    if lon != ref[1]:
        if notes is not None:
            notes.append(f"--ref longitude {ref[1]:g} is {lon:g} (longitudes wrap to [-180, 180))")
        ref = (ref[0], lon)
    unit = opts.get("unit") or "km"
    strategy = opts.get("strategy") or DEFAULT_STRATEGY
    palette = opts.get("palette") or DEFAULT_PALETTE
    req = DistanceRequest(bounds=bounds, ref=ref, size=(int(width), int(height)), unit=unit,
                          strategy=strategy, palette=palette, want_values=bool(want_values))
    return req.validate()


# view -> (the options it takes, the request builder)
RENDER_VIEWS = {"mandelbrot": (MANDELBROT_OPTIONS, mandelbrot_request),
                "distance": (DISTANCE_OPTIONS, distance_request)}
