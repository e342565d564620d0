"""What a Mandelbrot frame is asked for: the frozen requests (float64 frames, deep-zoom frames,
coarse-then-full pairs), their validation, the iteration limit and how far float64 reaches at a
given zoom. No numba here: the view and the CLI import it freely."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import palettes
from ...backend import Backend
from . import formulas
from .deep_request import MAX_ITER, DeepRequest

# colour mappings (colour.py holds the kernels; repeated here so that no numba is imported)
MAPPINGS = ("sqrt", "log", "histogram")

MAX_ITER_LIMIT = MAX_ITER          # one limit for every frame (requests/deep_request.py)

# float64 runs out of digits when the pixel spacing nears the spacing of representable numbers at
# the centre (2.2e-16 x |centre|). Coordinates are rounded to the nearest double, so at a spacing of
# k ulps each pixel lands up to 0.5/k of a pixel off its place. At 1e-13 x scale (~450 ulps) that
# error is ~0.1% of a pixel and the picture is perfect, but two more decades of zoom reach the end:
# warn there. At 2e-15 x scale (~9 ulps) pixels sit up to ~6% off and round-off in the iteration
# itself starts to show as jagged, noisy filaments: that is the limit.
PRECISION_WARN = 1e-13
PRECISION_LIMIT = 2e-15


@dataclass(frozen=True)
class MandelbrotRequest:
    center_re: float
    center_im: float
    width: float                       # extent of the real axis across the picture
    size: tuple[int, int]              # (W, H) pixels
    max_iter: int
    palette: str = palettes.DEFAULT
    density: float = 1.0               # palette passes scale (> 0)
    offset: float = 0.0                # palette phase, 0..1 (wraps)
    interior: tuple[int, int, int, int] = (0, 0, 0, 255)  # RGBA of points inside the set
    want_values: bool = False
    # where it runs: the scheduler reads it; a Renderer, made for one backend, ignores it
    backend: Backend | None = None
    mapping: str = "sqrt"              # value → palette phase: "sqrt" | "log" | "histogram"
    # the escape arithmetic: "float64" | "float32" (number_type.py chooses; jobs.renderer_kind)
    number_type: str = "float64"
    overlay: str = ""                  # drawn instead of the picture (overlays.py's names; "" none)
    formula: str = formulas.DEFAULT    # what is iterated (formulas.py's names)

    def validate(self) -> MandelbrotRequest:
        """Raise ValueError in plain words when the request cannot be rendered; return self."""
        for name in ("center_re", "center_im", "width"):
            v = getattr(self, name)
            if not _is_real(v) or not math.isfinite(v):
                raise ValueError(f"{name.replace('_', ' ')} must be a finite number, got {v!r}")
        if self.width <= 0:
            raise ValueError(f"width must be greater than 0, got {self.width!r}")
        size = self.size
        if (not isinstance(size, (tuple, list)) or len(size) != 2
                or not all(_is_int(s) for s in size)):
            raise ValueError(f"size must be two whole numbers (width, height) in pixels, got {size!r}")
        if size[0] <= 0 or size[1] <= 0:
            raise ValueError(f"size must be at least 1×1 pixels, got {size[0]}×{size[1]}")
        if not _is_int(self.max_iter):
            raise ValueError(f"iterations must be a whole number, got {self.max_iter!r}")
        if not 1 <= self.max_iter <= MAX_ITER_LIMIT:
            raise ValueError(f"iterations must be between 1 and {MAX_ITER_LIMIT:,}, got {self.max_iter:,}")
        if self.number_type not in ("float64", "float32"):
            raise ValueError(f"number type must be float64 or float32, got {self.number_type!r}")
        validate_formula(self)
        validate_colouring(self)        # last: the palette's look-up leaves this module
        return self

    @property
    def pixel_size(self) -> float:
        return self.width / self.size[0]

    @property
    def height(self) -> float:
        """Extent of the imaginary axis (pixels are square)."""
        return self.pixel_size * self.size[1]

    def pixel_to_complex(self, row: float, col: float) -> tuple[float, float]:
        """Centre of pixel (row, col) in the complex plane (row 0 = top = largest imaginary part)."""
        w, h = self.size
        step = self.width / w
        return (self.center_re + (col + 0.5 - w / 2) * step,
                self.center_im - (row + 0.5 - h / 2) * step)


def validate_colouring(req) -> None:
    """ValueError in plain words when a request's colour fields (palette, density, offset,
    interior, mapping) cannot be used."""
    if not _is_real(req.density) or not math.isfinite(req.density) or req.density <= 0:
        raise ValueError(f"palette density must be a finite number above 0, got {req.density!r}")
    if not _is_real(req.offset) or not math.isfinite(req.offset):
        raise ValueError(f"palette offset must be a finite number (0..1), got {req.offset!r}")
    it = req.interior
    if (not isinstance(it, (tuple, list)) or len(it) != 4
            or not all(_is_int(v) and 0 <= v <= 255 for v in it)):
        raise ValueError(f"interior colour must be four integers 0..255 (R, G, B, A), got {it!r}")
    if req.mapping not in MAPPINGS:
        raise ValueError(f"unknown colour mapping {req.mapping!r}; choose one of: {', '.join(MAPPINGS)}")
    palettes.lut(req.palette)  # raises ValueError naming the palettes there are


def validate_formula(req, deep: bool = False) -> None:
    """ValueError in plain words for an unknown formula, and for what only the Mandelbrot set
    has: overlays, and the float32 kernels of float64-format frames (number_type.py keeps other
    formulas in float64; a `deep` frame's deltas are the deep renderer's)."""
    if req.formula == formulas.MANDELBROT:
        return
    label = formulas.LABELS.get(req.formula)
    if label is None:       # formulas.check's words, said here (a validation stays in this module)
        raise ValueError(f"unknown formula {req.formula!r}; choose one of: "
                         f"{', '.join(formulas.FORMULAS)}")
    if req.overlay:
        raise ValueError(f"overlays are drawn for the Mandelbrot set only, not {label}; "
                         f"leave out the overlay {req.overlay!r}")
    if req.number_type == "float32" and not deep:
        raise ValueError(f"{label} frames are computed in float64 only; choose float64 (or "
                         "auto)")


def _is_real(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


# beyond float64's depths (width 1e-13, ~28,500 iterations) the limit grows by this many iterations
# per decade of zoom: the published deep locations escape at ~29,000 (1e-100), ~57,000 (1e-300)
# and ~570,000 (1e-1000) iterations; minibrots there need more (see benches/bench.py)
DEEP_ITERATIONS_PER_DECADE = 1000
_FLOAT64_DEPTH = 13.0


def auto_iterations(width) -> int:
    """A sensible iteration limit for a view `width` wide (a number, a decimal string, a Decimal
    or (mantissa, exponent)): 256 for the whole set (width 3), ~2000 at width 0.01, ~28,500 at
    1e-13, then DEEP_ITERATIONS_PER_DECADE more per decade: ~115,000 at 1e-100, ~1,000,000 at
    1e-1000. More detail needs more iterations as the zoom deepens."""
    try:
        if isinstance(width, (int, float)) and not isinstance(width, bool):
            ok = math.isfinite(width) and width > 0
            log_w = math.log10(width) if ok else None
        else:
            from .deep_request import log10_of, parse_width
            d = parse_width(width)
            log_w = log10_of(d) if d > 0 else None
    except (ValueError, ArithmeticError):
        log_w = None
    if log_w is None:
        return 256
    depth = max(0.0, math.log10(3.0) - log_w)
    n = 256 + 380 * min(depth, _FLOAT64_DEPTH) ** 1.68
    if depth > _FLOAT64_DEPTH:
        n += DEEP_ITERATIONS_PER_DECADE * (depth - _FLOAT64_DEPTH)
    return int(min(MAX_ITER_LIMIT, round(n)))


def precision_state(center_re: float, center_im: float, width: float, w_pixels: int) -> tuple[str, str]:
    """("ok" | "warn" | "limit", message) for how close float64 is to running out at this zoom."""
    scale = max(abs(center_re), abs(center_im), 1e-300)
    spacing = width / max(1, int(w_pixels))
    if spacing < PRECISION_LIMIT * scale:
        return ("limit", "zoom limit of 64-bit floats reached: deeper views turn blocky and noisy")
    if spacing < PRECISION_WARN * scale:
        return ("warn", "approaching the precision limit of 64-bit floats "
                        f"(about {math.log10(spacing / (PRECISION_LIMIT * scale)):.1f} decades of zoom left)")
    return ("ok", "")


# DeepFrameRequest.pixels' values ("" leaves it to the renderer)
PIXEL_MODES = ("", "marked", "proved", "exact")
# the progress stage a deep frame reports while those pixels are iterated again (seconds at the
# hardest places; redo/exact_redo.py)
DOUBTFUL_STAGE = "doubtful pixels"
# each DeepProgress stage in the words the command line's bar and the window's status line say
# ("{when}": numba_cache.compile_when())
DEEP_STAGE_WORDS = {"compile": "compiling the deep-zoom kernels ({when})",
                    "reference": "reference orbit", "table": "approximation table",
                    "pixels": "pixels",
                    DOUBTFUL_STAGE: "proving the pixels float64 cannot place (double-double)"}


@dataclass(frozen=True)
class DeepFrameRequest(DeepRequest):
    """A deep-zoom frame for the scheduler: DeepRequest's place (centre as decimal strings of any
    length, width as a decimal string or (mantissa, exponent)), size and iterations, plus the
    colouring and the backend of a MandelbrotRequest. Rendered by the scheduler's DeepRenderer,
    which keeps the reference orbit and the approximation table for the next frame."""
    palette: str = palettes.DEFAULT
    density: float = 1.0
    offset: float = 0.0
    interior: tuple[int, int, int, int] = (0, 0, 0, 255)
    mapping: str = "log"               # deep counts are large and close together: see colour.py
    want_values: bool = False
    backend: Backend | None = None
    # the deltas' type: "float64" | "float32" (perturbation format only: number_type.py chooses)
    number_type: str = "float64"
    overlay: str = ""                  # drawn instead of the picture (overlays.py's names; "" none)
    # the pixels float64 deltas cannot place (redo/exact_redo.py): "marked" keeps the loop's value
    # and marks them, "proved" iterates them in double-double first, "exact" then in MPFR; "" is
    # the renderer's own setting. A field of the picture, so every band of a poster does the same.
    pixels: str = ""

    def validate(self) -> DeepFrameRequest:
        super().validate()
        if self.number_type not in ("float64", "float32"):
            raise ValueError(f"number type must be float64 or float32, got {self.number_type!r}")
        if self.pixels not in PIXEL_MODES:
            raise ValueError(f"pixels must be one of {', '.join(m for m in PIXEL_MODES if m)}, "
                             f"got {self.pixels!r}")
        validate_formula(self, deep=True)
        validate_colouring(self)        # last: the palette's look-up leaves this module
        return self


@dataclass(frozen=True)
class DeepProgress:
    """How far a deep frame has got: `stage` "compile" (the deep kernels' first compile),
    "reference" (the reference orbit, in arbitrary precision on the host: seconds at great depths),
    "table", "pixels" or DOUBTFUL_STAGE; `fraction` 0..1 of that stage."""
    fraction: float
    stage: str


@dataclass(frozen=True)
class ProgressiveRequest:
    """A frame drawn twice: `coarse` (a fraction of the pixels) first, delivered as progress so a
    slow backend still answers the mouse, then `full` as the result. Both are MandelbrotRequests
    or both DeepFrameRequests."""
    full: MandelbrotRequest | DeepFrameRequest
    coarse: MandelbrotRequest | DeepFrameRequest

    @property
    def backend(self):
        return self.full.backend
