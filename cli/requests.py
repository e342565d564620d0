"""Requests from command-line strings: `--center/--width/--iters/--palette` for the Mandelbrot view,
`--bounds/--ref/--unit/--strategy/--palette` for the distance heatmap. Each raises ValueError with a
one-line message naming the valid choices."""
from __future__ import annotations

import math

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
)

MANDELBROT_OPTIONS = ("center", "width", "iters", "palette")


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
