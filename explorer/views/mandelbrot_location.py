"""Locations as text the user can copy, paste and share, e.g.

    center=-0.7436438870371,0.1318259043 width=0.01 iters=2000

Parsing is forgiving about spacing, separators and key spelling, and strict about numbers:
anything that is not a finite, sensible location raises ValueError with a plain message.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from cli.requests import check_location
from kernels.mandelbrot.request import MAX_ITER_LIMIT

EXAMPLE = "center=-0.75,0 width=3.5 iters=500"
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
    width: float
    iterations: int | None   # None = automatic


def _digits_for(width: float) -> int:
    """Decimal places that pin the centre to 1e-10 of the view width (far below a pixel)."""
    return max(4, int(math.ceil(-math.log10(width))) + 10) if 0 < width < math.inf else 20


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


def format_location(center_re, center_im, width: float, iterations: int | None) -> str:
    places = _digits_for(width)
    re_s, im_s = _plain(Decimal(str(center_re)), places), _plain(Decimal(str(center_im)), places)
    iters = "auto" if iterations is None else str(int(iterations))
    return f"center={re_s},{im_s} width={float(width):.6g} iters={iters}"


def _number(text: str, what: str) -> Decimal:
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"{what} {text!r} is not a number") from None
    if not d.is_finite():
        raise ValueError(f"{what} must be a finite number, not {text}")
    return d


def parse_location(text: str) -> Location:
    """Read a location from `text`; ValueError with a plain message when it is not one."""
    t = (text or "").strip()
    if not t:
        raise ValueError(f"nothing to paste: expected text like '{EXAMPLE}'")
    if len(t) > 2000:
        raise ValueError("the pasted text is too long to be a location")
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
    w = _number(found["width"].split(",")[0].split()[0], "the width")
    width = float(w)
    if not (width > 0 and math.isfinite(width)):
        raise ValueError(f"the width must be a positive number, not {found['width']}")
    iterations = None
    raw = found.get("iters")
    if raw is not None and raw.lower() != "auto":
        n = _number(raw.split(",")[0].split()[0], "the iteration count")
        if n != n.to_integral_value() or not (1 <= n <= MAX_ITER_LIMIT):
            raise ValueError(f"iters must be a whole number from 1 to {MAX_ITER_LIMIT:,} (or auto), not {raw}")
        iterations = int(n)
    check_location(c_re, c_im, width, iterations)    # the limits a bookmark or --center meets
    return Location(c_re, c_im, width, iterations)


def location_from_values(center_re, center_im, width, iterations) -> Location:
    """A Location from stored values (a bookmark file's entry): numbers as Decimal, int or float
    (text is refused, as are bools), iterations None, "auto" or a whole number. ValueError in
    plain words otherwise, with the same limits as pasted text."""
    def decimal(v, what):
        if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
            raise ValueError(f"{what} must be a number, not {v!r}")
        d = Decimal(str(v)) if not isinstance(v, Decimal) else v
        if not d.is_finite():
            raise ValueError(f"{what} must be a finite number, not {v}")
        return d
    c_re = decimal(center_re, "the centre's real part")
    c_im = decimal(center_im, "the centre's imaginary part")
    w = float(decimal(width, "the width"))
    if iterations in (None, "auto"):
        iterations = None
    else:
        n = decimal(iterations, "the iteration count")
        if n != n.to_integral_value():
            raise ValueError(f"the iteration count must be a whole number, not {iterations}")
        iterations = int(n)
    check_location(c_re, c_im, w, iterations)
    return Location(c_re, c_im, w, iterations)
