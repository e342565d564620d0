"""Requests from command-line strings: `--center/--width/--iters/--palette` for the Mandelbrot view,
`--bounds/--ref/--unit/--strategy/--palette` for the distance heatmap. Each raises ValueError with a
one-line message naming the valid choices."""
from __future__ import annotations

import math
import numbers

from kernels import palettes
from kernels.distance.request import (
    DEFAULT_PALETTE,
    DEFAULT_STRATEGY,
    LONDON,
    WORLD,
    DistanceRequest,
)
from kernels.mandelbrot.request import (
    MAX_ITER_LIMIT,
    MandelbrotRequest,
    auto_iterations,
    precision_state,
)

MANDELBROT_OPTIONS = ("center", "width", "iters", "palette")

# The limits every Mandelbrot location is held to, however it arrives: pasted text, a bookmark
# file, --center/--width/--iters. The set lies within |c| <= 2; these leave room to look around it.
MAX_CENTRE = 1e6
MAX_VIEW_WIDTH = 1e3


def check_location(center_re, center_im, width, iterations=None, pixels: int | None = None) -> None:
    """Raise ValueError in plain words when a location cannot be shown: a centre or width that is
    not a finite number or lies out of range, an iteration count that is not a whole number from
    1 to MAX_ITER_LIMIT (None = automatic), or, given the picture's width in `pixels`, a zoom past
    the precision of 64-bit floats (the picture would come out flat)."""
    values = {}
    for what, v in (("the centre's real part", center_re), ("the centre's imaginary part", center_im),
                    ("the width", width)):
        try:
            f = float(v)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{what} must be a number, not {v!r}") from None
        if isinstance(v, bool) or not math.isfinite(f):
            raise ValueError(f"{what} must be a finite number, not {v!r}")
        values[what] = f
    re_, im_, w = values.values()
    for what, f in (("the centre's real part", re_), ("the centre's imaginary part", im_)):
        if abs(f) > MAX_CENTRE:
            raise ValueError(f"{what} {f:g} is too far out; the set lies within |c| ≤ 2")
    if not w > 0:
        raise ValueError(f"the width must be a positive number, not {w:g}")
    if w > MAX_VIEW_WIDTH:
        raise ValueError(f"the width {w:g} is too large; the whole set is about 3 wide")
    if iterations is not None:
        ok = isinstance(iterations, numbers.Integral) and not isinstance(iterations, bool)
        if not ok or not 1 <= iterations <= MAX_ITER_LIMIT:
            raise ValueError(f"the iteration count must be a whole number from 1 to "
                             f"{MAX_ITER_LIMIT:,} (or automatic), not {iterations!r}")
    if pixels is not None:
        level, message = precision_state(re_, im_, w, max(1, int(pixels)))
        if level == "limit":
            raise ValueError(f"width {w:g} at this centre is past the precision of 64-bit floats "
                             f"({message})")


def mandelbrot_request(opts: dict, width: int, height: int, want_values: bool) -> MandelbrotRequest:
    """Build a request from `--center X,Y --width W --iters N --palette NAME` (raw strings or None)."""
    opts = opts or {}
    center = opts.get("center")
    cx, cy = -0.5, 0.0
    if center is not None:
        parts = [p.strip() for p in str(center).split(",")]
        try:
            if len(parts) != 2:
                raise ValueError
            cx, cy = float(parts[0]), float(parts[1])
        except ValueError:
            raise ValueError(f"--center must be two numbers X,Y such as -0.5,0; got {center!r}") from None
        if not (math.isfinite(cx) and math.isfinite(cy)):
            raise ValueError(f"--center must be two finite numbers X,Y such as -0.5,0; got {center!r}")
    view_width = 3.0
    if opts.get("width") is not None:
        raw = opts["width"]
        try:
            view_width = float(raw)
        except ValueError:
            raise ValueError(f"--width must be a number above 0 such as 3 or 1e-6; got {raw!r}") from None
        if not math.isfinite(view_width) or view_width <= 0:
            raise ValueError(f"--width must be a finite number above 0 such as 3 or 1e-6; got {raw!r}")
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
        check_location(cx, cy, view_width, iters, pixels=size[0])
    except ValueError as exc:
        raise ValueError(f"--center/--width/--iters: {exc}") from None
    req = MandelbrotRequest(cx, cy, view_width, size, iters, palette=palette,
                            want_values=bool(want_values))
    req.validate()
    return req


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
