"""Locations as text the user can copy, paste and share, e.g.

    center=-0.7436438870371,0.1318259043 width=0.01 iters=2000
    center=-1.7557,-0.0284 width=0.05 iters=1000 formula=burning-ship

(no formula: the Mandelbrot set). Centres and widths are decimals of any length (a view 1e-1000 wide needs a ~1000-digit centre), so
they stay Decimal from the text to the camera. Kalles Fraktaler location text (`Re: … Im: …
Zoom: …`, a .kfr file's lines) is read too; its Zoom fixes the height, so the width needs the
picture's aspect. Parsing is forgiving about spacing, separators and key spelling, and strict about
numbers: anything that is not a finite, sensible location raises ValueError with a plain message.

Qt-free: the window (explorer.models.location re-exports it) and the command line's --location
(services.location_file) read locations with this one parser.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from kernels.mandelbrot.requests import formulas
from kernels.mandelbrot.requests.deep_request import MAX_CENTRE_CHARS, log10_of
from . import kfr
from .requests import check_location, iteration_count, location_number

EXAMPLE = "center=-0.75,0 width=3.5 iters=500"
# two coordinates of the longest accepted length, the width and the keys
MAX_TEXT_CHARS = 2 * MAX_CENTRE_CHARS + 1000
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf(?:inity)?)"
_KEYS = {"center": "center", "centre": "center", "c": "center",
         "re": "re", "x": "re", "real": "re",
         "im": "im", "y": "im", "imag": "im",
         "width": "width", "w": "width", "span": "width",
         "iters": "iters", "iter": "iters", "iterations": "iters", "max_iter": "iters", "n": "iters"}


@dataclass(frozen=True)
class Location:
    center_re: Decimal
    center_im: Decimal
    width: Decimal           # any depth: 1e-1000 is no float
    iterations: int | None   # None = automatic
    formula: str = formulas.MANDELBROT


def _digits_for(width) -> int:
    """Decimal places that pin the centre to 1e-10 of the view width (far below a pixel)."""
    try:
        w = location_number(width, "the width")
    except ValueError:
        return 20
    return max(4, int(math.ceil(-log10_of(w))) + 10) if w > 0 else 20


def width_text(width) -> str:
    """The width with 6 significant digits, at any depth: '0.01', '1.5e-300', '2.5e-1000'."""
    w = location_number(width, "the width")
    if not w > 0:
        return str(w)
    if Decimal("1e-4") <= w < Decimal("1e6"):
        return f"{float(w):.6g}"
    exp = w.adjusted()
    mant = w.scaleb(-exp)
    m = f"{float(mant):.6g}"
    if m.startswith("10"):          # 9.9999995 rounds up: carry into the exponent
        m, exp = f"{float(mant) / 10:.6g}", exp + 1
    return f"{m}e{exp}"


def _plain(d: Decimal, places: int) -> str:
    if not d.is_finite():         # never held by the camera; written plainly all the same
        return str(d).lower()
    # a centre typed or pasted with a few more digits keeps them all; one computed by panning
    # (60 digits) is rounded to what the zoom needs
    exact = -d.as_tuple().exponent <= max(places, 17)
    text = format(d, "f") if exact else f"{d:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def format_location(center_re, center_im, width, iterations: int | None,
                    formula: str = formulas.MANDELBROT) -> str:
    """The place as text; the formula is written only where it is not the Mandelbrot set's, so
    that text without one (every older copy) reads as before."""
    places = _digits_for(width)
    re_s, im_s = _plain(Decimal(str(center_re)), places), _plain(Decimal(str(center_im)), places)
    iters = "auto" if iterations is None else str(int(iterations))
    text = f"center={re_s},{im_s} width={width_text(width)} iters={iters}"
    if formulas.check(formula) != formulas.MANDELBROT:
        text += f" formula={formula}"
    return text


_FORMULA = re.compile(r"\bformula\s*[=:]\s*([^\s,;]*)", re.IGNORECASE)


def _formula_in(text: str) -> str:
    """The formula named in our text (`formula=burning-ship`), the Mandelbrot set's when none is;
    ValueError naming the formulas there are for an unknown one."""
    m = _FORMULA.search(text)
    if m is None:
        return formulas.MANDELBROT
    name = m.group(1).lower()
    if name not in formulas.FORMULAS:
        shown = name if len(name) <= 30 else name[:27] + "..."
        raise ValueError(f"unknown formula {shown!r}; choose one of: {', '.join(formulas.FORMULAS)}")
    return name


def _number(text: str, what: str) -> Decimal:
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"{what} {text!r} is not a number") from None
    if not d.is_finite():
        raise ValueError(f"{what} must be a finite number, not {text}")
    return location_number(d, what)      # 1e1000000 is refused here, before any arithmetic


def _exact_aspect(aspect) -> tuple[Decimal, Decimal]:
    """The picture's width / height as the ratio of two whole numbers (1920/1080, not the float
    1.7777777777777777), so that a KF Zoom read and written again comes back as it was."""
    ratio = Fraction(aspect).limit_denominator(1 << 20)
    return Decimal(ratio.numerator), Decimal(ratio.denominator)


def parse_location(text: str, aspect: float = 16 / 9) -> Location:
    """Read a location from `text` (ours, or Kalles Fraktaler's Re:/Im:/Zoom: lines, whose width is
    its height times `aspect` = picture width / height); ValueError with a plain message when it
    is not one."""
    t = (text or "").strip()
    if not t:
        raise ValueError(f"nothing to paste: expected text like '{EXAMPLE}'")
    if len(t) > MAX_TEXT_CHARS:
        raise ValueError(f"the pasted text has {len(t):,} characters, too many for a location "
                         f"(coordinates of up to {MAX_CENTRE_CHARS:,} digits are accepted)")
    if kfr.looks_like_kfr(t):
        k = kfr.parse_kfr(t)      # its Zoom and Iterations refused by size before any arithmetic
        across, down = _exact_aspect(aspect)
        width = k.width(across, down)
        c_re, c_im = Decimal(k.center_re), Decimal(k.center_im)
        iterations = k.iterations
        check_location(c_re, c_im, width, iterations)
        return Location(c_re, c_im, width, iterations, k.formula)
    found: dict[str, str] = {}
    pair = re.compile(r"([A-Za-z_]+)\s*[=:]\s*(\(?\s*(?:" + _NUM + r")(?:\s*[, ]\s*(?:" + _NUM +
                      r"))*\s*\)?|auto)", re.IGNORECASE)
    for m in pair.finditer(t):
        key = _KEYS.get(m.group(1).lower())
        if key and key not in found:
            found[key] = m.group(2).strip().strip("()").strip()
    if "center" in found:
        parts = [p for p in re.split(r"[,\s]+", found["center"]) if p]
        if len(parts) != 2:
            raise ValueError(f"the centre needs two numbers, re,im (e.g. '{EXAMPLE}')")
        re_s, im_s = parts
    elif "re" in found and "im" in found:
        re_s, im_s = found["re"], found["im"]
    else:
        raise ValueError(f"no centre found: expected text like '{EXAMPLE}'")
    c_re, c_im = _number(re_s, "the real part"), _number(im_s, "the imaginary part")
    if "width" not in found:
        raise ValueError(f"no width found: expected text like '{EXAMPLE}'")
    width = _number(found["width"].split(",")[0].split()[0], "the width")
    if not width > 0:
        raise ValueError(f"the width must be a positive number, not {found['width']}")
    iterations = None
    raw = found.get("iters")
    if raw is not None and raw.lower() != "auto":
        iterations = iteration_count(raw.split(",")[0].split()[0], "iters", " (or auto)")
    check_location(c_re, c_im, width, iterations)    # the limits a bookmark or --center meets
    return Location(c_re, c_im, width, iterations, _formula_in(t))


def location_from_values(center_re, center_im, width, iterations,
                         formula=formulas.MANDELBROT) -> Location:
    """A Location from stored values (a bookmark file's entry): numbers as Decimal, int or float
    (text is refused, as are bools), iterations None, "auto" or a whole number, formula one of
    formulas.FORMULAS. ValueError in plain words otherwise, with the same limits as pasted
    text."""
    if formula not in formulas.FORMULAS:
        shown = repr(formula) if isinstance(formula, str) and len(formula) <= 30 else "that"
        raise ValueError(f"the formula {shown} is unknown; choose one of: "
                         f"{', '.join(formulas.FORMULAS)}")
    def decimal(v, what):
        if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
            raise ValueError(f"{what} must be a number, not {v!r}")
        d = Decimal(str(v)) if not isinstance(v, Decimal) else v
        if not d.is_finite():
            raise ValueError(f"{what} must be a finite number, not {v}")
        return location_number(d, what) if what != "the iteration count" else d
    c_re = decimal(center_re, "the centre's real part")
    c_im = decimal(center_im, "the centre's imaginary part")
    w = decimal(width, "the width")
    if iterations in (None, "auto"):
        iterations = None
    else:      # by size before it becomes an int: 1e999999999 would take minutes
        iterations = iteration_count(decimal(iterations, "the iteration count"),
                                     "the iteration count")
    check_location(c_re, c_im, w, iterations)
    return Location(c_re, c_im, w, iterations, formula)
