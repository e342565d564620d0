"""Kalles Fraktaler location files (.kfr): the place they hold, read and written.

A .kfr file is lines of `Key: value` (CR LF in the files KF writes). The place is
`Re:` and `Im:` (the centre, decimal strings of any length), `Zoom:` (a magnification, in plain or
E notation) and `Iterations:` (the iteration limit); `FractalType:` names the formula by KF's
number (kernels/mandelbrot/requests/formulas.py: 0 Mandelbrot, 1 Burning Ship; absent means 0, any other is
refused); KF also wants a `Colors:` line (its palette, r,g,b,r,g,b,…) and ignores keys it does not
know. KF's Zoom sets the view's half-height: the
picture spans 2/Zoom above and below the centre (Kalles Fraktaler 2+, CFraktalSFT::SetPosition,
radius = 2 / zoom, pixel spacing = 2·radius / height), so it is 4/Zoom tall and 4/Zoom · W/H wide.
Our locations keep the width across, so converting needs the picture's aspect: `KfrLocation.width`
and `format_kfr` take the size.

Qt-free (the window's import and export and the command line share it).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation

from kernels.mandelbrot.requests import formulas
from kernels.mandelbrot.requests.deep_request import MIN_WIDTH_EXP10

from .requests import iteration_count, location_number

KF_HEIGHT_AT_ZOOM_1 = Decimal(4)
# a location file is a few kilobytes even with 10,000-digit coordinates
MAX_KFR_BYTES = 1_000_000
_CTX = Context(prec=40, Emin=-10 ** 6, Emax=10 ** 6)
# palette keys written to the Colors line (KF interpolates between them)
COLOUR_KEYS = 12
# a Zoom whose power of ten lies outside this range is no place (the widest view is 1e3, the
# deepest 1e-10000; a little room for the aspect): refused before any arithmetic overflows
ZOOM_EXP10 = (-5, -MIN_WIDTH_EXP10 + 5)
# significant digits of a written Zoom: at least this many, or the width's own count
ZOOM_DIGITS = 40


@dataclass(frozen=True)
class KfrLocation:
    center_re: str        # decimal strings, exactly as in the file
    center_im: str
    zoom: Decimal         # KF's magnification
    iterations: int | None
    formula: str = formulas.MANDELBROT     # from FractalType

    def height(self) -> Decimal:
        """Extent of the imaginary axis across the picture."""
        return _CTX.divide(KF_HEIGHT_AT_ZOOM_1, self.zoom)

    def width(self, w: int, h: int) -> Decimal:
        """Extent of the real axis across a picture of w × h pixels."""
        return _CTX.divide(_CTX.multiply(self.height(), Decimal(int(w))), Decimal(int(h)))


def _fields(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out.setdefault(key.strip().lower(), value.strip())
    return out


def looks_like_kfr(text: str) -> bool:
    """Whether pasted text is a KF location (Re:, Im: and Zoom: lines) rather than ours."""
    f = _fields(text or "")
    return {"re", "im", "zoom"} <= set(f)


def parse_kfr(text: str) -> KfrLocation:
    """The place in a .kfr file's text; ValueError in plain words when it holds none."""
    if text is None or not str(text).strip():
        raise ValueError("the location file is empty; a .kfr file has Re:, Im: and Zoom: lines")
    if len(text) > MAX_KFR_BYTES:
        raise ValueError(f"the file has {len(text):,} characters; a location file is far smaller "
                         f"(at most {MAX_KFR_BYTES:,})")
    f = _fields(text)
    missing = [k for k in ("Re", "Im", "Zoom") if k.lower() not in f]
    if missing:
        raise ValueError(f"not a Kalles Fraktaler location: no {', '.join(missing)} line "
                         "(expected 'Re: …', 'Im: …', 'Zoom: …')")
    re_ = location_number(f["re"], "Re")
    im_ = location_number(f["im"], "Im")
    zoom = _zoom(f["zoom"])
    iterations = None
    if "iterations" in f:      # refused by its length and size before it becomes an int
        iterations = iteration_count(f["iterations"], "Iterations")
    formula = _formula(f["fractaltype"]) if "fractaltype" in f else formulas.MANDELBROT
    if "power" in f and f["power"].strip() != "2":     # KF's types are families of powers
        shown = f["power"].strip()[:30]
        raise ValueError(f"Power {shown} is not drawn here: this app iterates power 2 only "
                         "(z² + c and its Burning Ship)")
    return KfrLocation(_plain(re_), _plain(im_), zoom, iterations, formula)


def _formula(text: str) -> str:
    """The formula of a FractalType line; ValueError naming the types this app draws."""
    text = text.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 4):
        shown = text if len(text) <= 30 else text[:27] + "..."
        raise ValueError(f"FractalType must be a whole number such as 0 or 1, not {shown!r}")
    return formulas.from_kf_type(int(text))


def _zoom(text: str) -> Decimal:
    text = text.strip()
    shown = text if len(text) <= 30 else text[:27] + "..."
    if len(text) > 100:
        raise ValueError(f"Zoom has {len(text):,} characters; a magnification is a short number "
                         "such as 1.5E+300")
    try:
        zoom = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"Zoom must be a number, not {shown!r}") from None
    if not zoom.is_finite() or not zoom > 0:
        raise ValueError(f"Zoom must be a positive magnification, not {shown!r}")
    lo, hi = ZOOM_EXP10
    if not lo <= zoom.adjusted() <= hi:
        raise ValueError(f"Zoom {shown} is out of range: from 1e{lo} (wider than the whole set) "
                         f"to 1e{hi} (the deepest supported width, 1e{MIN_WIDTH_EXP10})")
    return zoom


def _plain(d: Decimal) -> str:
    """A decimal string without an exponent, every digit kept."""
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def zoom_for(width, w: int, h: int) -> Decimal:
    """KF's Zoom for a picture `width` across at w × h pixels: computed exactly enough, then
    rounded to the digits the width has (at least ZOOM_DIGITS) less two, so that the rounding of
    a width read from a Zoom (1000 -> 0.0071111…) does not come back as 1000.00000000000000002."""
    width = location_number(width, "the width")
    digits = max(ZOOM_DIGITS, len(width.as_tuple().digits))
    exact = Context(prec=digits + 10, Emin=_CTX.Emin, Emax=_CTX.Emax)
    zoom = exact.divide(exact.multiply(KF_HEIGHT_AT_ZOOM_1, Decimal(int(w))),
                        exact.multiply(width, Decimal(int(h))))
    return Context(prec=digits - 2, Emin=_CTX.Emin, Emax=_CTX.Emax).plus(zoom)


def format_kfr(center_re, center_im, width, size: tuple[int, int], iterations: int,
               colours=None, formula: str = formulas.MANDELBROT) -> str:
    """A .kfr file's text for this place (CR LF line ends, as KF writes them). `colours`: an
    (N, 3+) array of RGB(A) rows for KF's Colors line (default: grey ramp); `formula` written as
    KF's FractalType (with Power 2: KF's types are families of powers)."""
    kf_type = formulas.KF_TYPES[formulas.check(formula)]
    w, h = int(size[0]), int(size[1])
    re_ = _plain(location_number(center_re, "the centre's real part"))
    im_ = _plain(location_number(center_im, "the centre's imaginary part"))
    zoom = zoom_for(width, w, h)
    if colours is None:
        keys = [(v, v, v) for v in (0, 64, 128, 192, 255, 192, 128, 64)]
    else:
        n = len(colours)
        pick = [colours[min(n - 1, round(i * (n - 1) / (COLOUR_KEYS - 1)))] for i in range(COLOUR_KEYS)]
        keys = [tuple(int(c) for c in row[:3]) for row in pick]
    lines = [f"Re: {re_}", f"Im: {im_}", f"Zoom: {format(zoom.normalize(Context(prec=len(zoom.as_tuple().digits))), 'E')}",
             f"Iterations: {int(iterations)}", f"FractalType: {kf_type}", "Power: 2",
             "IterDiv: 1.000000", "SmoothMethod: 0",
             "ColorMethod: 0", "Smooth: 1",
             "Colors: " + ",".join(f"{r},{g},{b}" for r, g, b in keys) + ","]
    return "\r\n".join(lines) + "\r\n"
