"""What a deep-zoom Mandelbrot frame is asked for: the frozen DeepRequest, its validation, and the
deep renderer's number format for a width (`deep_format`). Only the standard library and numpy
here: the view and the command line import it freely, and nothing here needs gmpy2.

Coordinates are decimal strings of any length (a double holds ~16 digits; a frame 1e-1000 wide
needs ~1000), parsed with `decimal`. The width is a decimal string or (mantissa, exponent) meaning
mantissa × 10**exponent, since a float cannot go below ~5e-324.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation

from . import formulas

# below this width the pixel offsets δc (width / pixels) and the deltas δ that start from them fall
# towards float64's smallest normal number (2.2e-308) and lose digits: a float64 mantissa with its
# own integer exponent takes over. 1e-290 leaves ~14 decades for frames up to 10^4 pixels wide and
# for deltas that shrink below δc on the way (where the orbit's derivative dips under 1).
EXTENDED_BELOW = Decimal("1e-290")
# the deepest width accepted: the reference orbit then runs at ~33,000 bits
MIN_WIDTH_EXP10 = -10_000
MAX_WIDTH = Decimal(16)
# centre coordinates: |re|, |im| at most this (the set lies within |c| <= 2)
MAX_CENTRE_ABS = Decimal(4)
# characters of a centre coordinate: digits for a width of 1e-10000 and then some
MAX_CENTRE_CHARS = 20_000
MAX_ITER = 10_000_000
MAX_SIDE = 32_768
MAX_PIXELS = 2 ** 28

FORMATS = ("float64", "perturbation", "extended")
FORCE_CHOICES = ("auto", "perturbation", "extended")

# memory a reference orbit and its approximation table take per iteration: the orbit as float64
# pairs + mantissa pairs + an int32 exponent (36 bytes), the table's levels (~2 entries per
# iteration of 10 float64 + 3 int32, layout.N_TAB); the renderer refuses what would not fit
ORBIT_BYTES_PER_ITER = 36
TABLE_BYTES_PER_ITER = 2 * 92
# a sanity cap on top of free memory: beyond this the job is a mistake, not a picture
MAX_REFERENCE_BYTES = 8 * 2 ** 30


def parse_decimal(value, name: str) -> Decimal:
    """A finite Decimal from a decimal string, an int, a float, or a Decimal; ValueError in plain
    words otherwise. No length limit here (callers check it first)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if isinstance(value, Decimal):
        d = value
    elif isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    elif isinstance(value, str):
        text = value.strip().replace("_", "")
        if not text:
            raise ValueError(f"{name} is empty; give a decimal number such as -0.75 or 1.5e-300")
        try:
            d = Decimal(text)
        except InvalidOperation:
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise ValueError(f"{name} is not a decimal number: {shown!r}") from None
    else:
        raise ValueError(f"{name} must be a decimal string or a number, got {type(value).__name__}")
    if not d.is_finite():
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return d


def add_decimal(*terms) -> str:
    """The exact sum of decimal numbers (strings, Decimals, ints, floats by their repr) as a string:
    moving a 1000-digit centre by a pan must not round it to decimal's default 28 digits."""
    ds = [parse_decimal(t, "term") for t in terms]
    # enough digits for the exact result: from the largest magnitude down to the finest digit
    top = max((d.adjusted() for d in ds if d), default=0)
    low = min((d.as_tuple().exponent for d in ds), default=0)
    prec = max(28, top - low + 2)
    ctx = Context(prec=prec, Emin=MIN_WIDTH_EXP10 * 10, Emax=1000)
    out = Decimal(0)
    for d in ds:
        out = ctx.add(out, d)
    return str(out)


# digits of a band's row spacing (band_shift): any fixed number does, it only has to be the same
# each time so that a band's centre gives its picture's back exactly (DeepRequest.picture)
BAND_STEP_DIGITS = 60


def band_shift(width: Decimal, w: int, tall: int, row0: int, rows: int) -> Decimal:
    """How far up (in im) the centre of rows row0 .. row0 + rows sits from the centre of its picture
    `tall` rows high and `w` pixels wide: (tall/2 - row0 - rows/2) row spacings, the spacing
    rounded to BAND_STEP_DIGITS and the product exact, so bands of bands add up and a band's
    centre minus its shift is its picture's centre to the last digit."""
    step = Context(prec=BAND_STEP_DIGITS).divide(width, Decimal(int(w)))
    half_rows = Decimal(int(tall) - 2 * int(row0) - int(rows)) / 2       # exact: a half-integer
    return Context(prec=2 * BAND_STEP_DIGITS + 20).multiply(half_rows, step)


def parse_width(width) -> Decimal:
    """The width as a Decimal: a decimal string, a number, or (mantissa, exponent) = mantissa × 10^exponent."""
    if isinstance(width, (tuple, list)):
        if len(width) != 2:
            raise ValueError(f"width as a pair must be (mantissa, exponent), got {width!r}")
        mant, exp = width
        if isinstance(exp, bool) or not isinstance(exp, int):
            raise ValueError(f"width exponent must be a whole number, got {exp!r}")
        if abs(exp) > 10 * -MIN_WIDTH_EXP10:
            raise ValueError(f"width exponent {exp} is absurd; widths go down to 1e{MIN_WIDTH_EXP10}")
        return parse_decimal(mant, "width mantissa").scaleb(exp)
    if isinstance(width, str) and len(width) > MAX_CENTRE_CHARS:
        raise ValueError(f"width has {len(width):,} characters; at most {MAX_CENTRE_CHARS:,} are accepted")
    return parse_decimal(width, "width")


def log10_of(d: Decimal) -> float:
    """log10 of a positive Decimal of any exponent, as a float (exact enough to pick formats)."""
    adj = d.adjusted()
    return adj + math.log10(float(d.scaleb(-adj)))


def deep_format(width) -> str:
    """"perturbation" | "extended": the deep renderer's format for a frame `width` wide (a
    decimal string, a number, (mantissa, exponent) or a Decimal). Whether float64 would do
    instead depends on the centre and the pixels too: kernels/mandelbrot/requests/number_format.py."""
    return "extended" if parse_width(width) < EXTENDED_BELOW else "perturbation"


def precision_bits(spacing_log2: float, centre_log2: float = 1.0, guard: int = 48) -> int:
    """Bits of the reference orbit for a pixel spacing of 2**spacing_log2 around a centre of size
    2**centre_log2: enough to tell pixels apart, plus guard bits for the round-off that the orbit
    amplifies, rounded up to a multiple of 64."""
    bits = max(0.0, centre_log2) - spacing_log2 + guard
    return int(math.ceil(max(bits, 64) / 64.0) * 64)


@dataclass(frozen=True)
class DeepRequest:
    """One deep-zoom frame. `center_re`, `center_im`: decimal strings of any length (numbers are
    accepted and converted exactly); `width`: extent of the real axis across the picture, a decimal
    string or (mantissa, exponent); `size` = (W, H) pixels; `max_iter`: the iteration limit.
    `number_format`: "auto" (by depth) or force "perturbation" / "extended" (tests, comparisons).
    `bla`: skip iterations with the bilinear approximation table (off = plain perturbation).
    `within` = (H, row0): this frame is rows row0 .. of a picture H rows tall and as wide (a band
    or strip, deep_frames.band_request); its table is built for the whole picture's bound on |δc|,
    so that every band of the picture is drawn with one table (renderer.FrameGeometry).
    `polar` > 0: the pixels are a log-polar grid around the centre (an exponential-map keyframe,
    kernels/mandelbrot/keyframes/expmap.py) of `polar` columns per octave of radius and size[1] rows
    around from row `polar_row0` (loop_args.PixelGrid); `width` is then its inner radius (so the
    spacing rule below stays about right)."""
    center_re: object
    center_im: object
    width: object
    size: tuple[int, int]
    max_iter: int
    number_format: str = "auto"
    bla: bool = True
    within: tuple[int, int] | None = None
    polar: int = 0
    polar_row0: int = 0
    formula: str = "mandelbrot"        # formulas.py's names

    def validate(self) -> DeepRequest:
        """Raise ValueError in plain words when the frame cannot be rendered; return self."""
        for name in ("center_re", "center_im"):
            v = getattr(self, name)
            label = name.replace("_", " ").replace("center", "centre")
            if isinstance(v, str) and len(v) > MAX_CENTRE_CHARS:
                raise ValueError(f"{label} has {len(v):,} characters; at most {MAX_CENTRE_CHARS:,} "
                                 f"are accepted (enough for a width of 1e{MIN_WIDTH_EXP10})")
            d = parse_decimal(v, label)
            if abs(d) > MAX_CENTRE_ABS:
                raise ValueError(f"{label} must lie between -{MAX_CENTRE_ABS} and {MAX_CENTRE_ABS} "
                                 f"(the Mandelbrot set lies within |c| <= 2), got {_short(v)}")
        w = parse_width(self.width)
        if w <= 0:
            raise ValueError(f"width must be greater than 0, got {_short(self.width)}")
        if w > MAX_WIDTH:
            raise ValueError(f"width must be at most {MAX_WIDTH}, got {_short(self.width)}")
        if log10_of(w) < MIN_WIDTH_EXP10:
            raise ValueError(f"width {_short(self.width)} is deeper than the deepest supported, "
                             f"1e{MIN_WIDTH_EXP10}")
        size = self.size
        if (not isinstance(size, (tuple, list)) or len(size) != 2
                or not all(_is_int(s) for s in size)):
            raise ValueError(f"size must be two whole numbers (width, height) in pixels, got {size!r}")
        if size[0] <= 0 or size[1] <= 0:
            raise ValueError(f"size must be at least 1×1 pixels, got {size[0]}×{size[1]}")
        if size[0] > MAX_SIDE or size[1] > MAX_SIDE or size[0] * size[1] > MAX_PIXELS:
            raise ValueError(f"size {size[0]}×{size[1]} is too large: at most {MAX_SIDE} pixels a "
                             f"side and {MAX_PIXELS:,} pixels in all")
        if not _is_int(self.max_iter):
            raise ValueError(f"iterations must be a whole number, got {self.max_iter!r}")
        if not 1 <= self.max_iter <= MAX_ITER:
            raise ValueError(f"iterations must be between 1 and {MAX_ITER:,}, got {self.max_iter:,}")
        if self.number_format not in FORCE_CHOICES:
            raise ValueError(f"unknown number format {self.number_format!r}; choose one of: "
                             f"{', '.join(FORCE_CHOICES)}")
        if self.number_format == "perturbation" and self.spacing_log2 < -1000:
            raise ValueError(f"a pixel spacing of 2^{self.spacing_log2:.0f} is below what float64 "
                             "perturbation can hold (about 2^-1000); use the extended format")
        if not isinstance(self.bla, bool):
            raise ValueError(f"bla must be True or False, got {self.bla!r}")
        if self.within is not None:
            ok = (isinstance(self.within, (tuple, list)) and len(self.within) == 2
                  and all(_is_int(v) for v in self.within))
            if not ok or not (0 <= self.within[1] and self.within[1] + size[1] <= self.within[0]):
                raise ValueError(f"a band of {size[1]} rows must lie within its picture: got "
                                 f"(picture rows, first row) = {self.within!r}")
        if (not _is_int(self.polar) or self.polar < 0 or not _is_int(self.polar_row0)
                or (self.polar and self.within is not None)):
            raise ValueError(f"polar must be a whole number of columns per octave (0: none), "
                             f"and a log-polar grid is never a band; got {self.polar!r}")
        formulas.check(self.formula)
        self.check_reference_memory()
        return self

    def picture(self) -> DeepRequest:
        """The whole picture this frame is a band of (itself when it is no band): its centre
        exactly (band_shift), its size; what the reference orbit and the pixels' places are
        taken from, so that a pixel's value does not depend on how its picture was cut."""
        if self.within is None:
            return self
        import dataclasses
        tall, row0 = int(self.within[0]), int(self.within[1])
        shift = band_shift(self.width_decimal, int(self.size[0]), tall, row0, int(self.size[1]))
        return dataclasses.replace(self, center_im=add_decimal(self.center_im, shift.copy_negate()),
                                   size=(int(self.size[0]), tall), within=None)

    # ---- derived quantities (call validate() first) ---------------------------------------------
    @property
    def width_decimal(self) -> Decimal:
        return parse_width(self.width)

    @property
    def width_log10(self) -> float:
        return log10_of(self.width_decimal)

    @property
    def spacing_log2(self) -> float:
        """log2 of the pixel spacing width / W."""
        return self.width_log10 * math.log2(10.0) - math.log2(int(self.size[0]))

    @property
    def format(self) -> str:
        """The number format the kernels use: "perturbation" or "extended" (never "float64": the
        deep renderer perturbs even where float64 would do)."""
        if self.number_format != "auto":
            return self.number_format
        return deep_format(self.width_decimal)

    @property
    def precision(self) -> int:
        """Bits of the reference orbit for this frame."""
        return self.precision_deeper(0)

    def precision_deeper(self, doublings: float) -> int:
        """Bits of a reference orbit that serves this frame and its zooms in by up to
        2**doublings (the rule applied to a pixel spacing that much finer)."""
        centre = max(abs(parse_decimal(self.center_re, "centre re")),
                     abs(parse_decimal(self.center_im, "centre im")), Decimal(1))
        return precision_bits(self.spacing_log2 - doublings, math.log2(float(centre)))

    def reference_bytes(self) -> int:
        """Host memory for a reference orbit of max_iter iterations and its table, roughly."""
        n = int(self.max_iter) + 1
        # + the orbit's complex128 buffer while it is computed (doubling: up to 32 bytes a point)
        return n * (ORBIT_BYTES_PER_ITER + TABLE_BYTES_PER_ITER + 32)

    def check_reference_memory(self, available: int | None = None) -> None:
        """ValueError when the reference orbit would need more memory than is sensible here."""
        need = self.reference_bytes()
        if available is None:
            from ...buffers import host_available_bytes
            available = host_available_bytes()
        cap = MAX_REFERENCE_BYTES if available is None else min(MAX_REFERENCE_BYTES, int(0.5 * available))
        if need > cap:
            why = ("the most one frame may take" if cap == MAX_REFERENCE_BYTES
                   else "half the memory free now")
            raise ValueError(f"a reference orbit of {self.max_iter:,} iterations at {self.precision:,} "
                             f"bits with its approximation table needs about {need / 2**30:.1f} GiB, "
                             f"more than {why} ({cap / 2**30:.1f} GiB); lower the iterations")


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def _is_int(v) -> bool:
    import numpy as np
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)
