"""Where the Mandelbrot picture looks: a small label over the canvas's lower-left corner with the
centre, the width (and the magnification against the full set), the iteration limit and the number
format the frames use (float64, perturbation, extended), updated with every camera change, and for
a deep frame on show its reference orbit (bits, points, and its period where it stopped at one).
`readout_text` is the pure formatting, tested on its own. Widths and magnifications may lie far
outside float64's range (1e-1000): they are written from their Decimal digits.
"""
from __future__ import annotations

import math
from decimal import Decimal

from PyQt6.QtCore import QEvent, QObject, Qt
from PyQt6.QtWidgets import QLabel, QWidget

from ..models.camera import (
    HOME_WIDTH,  # magnification 1: the first view, the whole set
)

PLAIN_RANGE = (1e-3, 1e4)   # numbers inside it are written plainly, outside as m·10^k
MARGIN_PX = 6
READOUT_PADDING_PX = 16     # the label's padding and border, left and right together
# the centre is written with the places that tell pixels apart, but at most this many (a view
# 1e-1000 wide would need a thousand): "…" marks the cut; Copy location gives every digit
MAX_SHOWN_PLACES = 24
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(x, digits: int = 2) -> str:
    """x (a float or a Decimal of any exponent) written for reading: plainly (0.25, 3, 1,500) in
    PLAIN_RANGE, else as 2.5·10⁻¹²."""
    if isinstance(x, Decimal):
        if not x.is_finite() or x == 0:
            return str(x)
        if abs(x.adjusted()) < 300:
            return power_of_ten(float(x), digits)
        k = x.adjusted()
        m = float(x.scaleb(-k))
        if round(abs(m), digits - 1) >= 10:
            m, k = m / 10, k + 1
        return f"{m:.{digits - 1}f}·10{str(k).translate(_SUPERSCRIPT)}"
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    if PLAIN_RANGE[0] <= abs(x) < PLAIN_RANGE[1]:
        return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.{digits + 1}g}"
    k = math.floor(math.log10(abs(x)))
    m = x / 10.0 ** k
    if round(abs(m), digits - 1) >= 10:      # 9.99 rounds up to 10.0: carry into the exponent
        m, k = m / 10, k + 1
    return f"{m:.{digits - 1}f}·10{str(k).translate(_SUPERSCRIPT)}"


def centre_places(pixel_size) -> int:
    """Decimal places that tell one pixel from the next (at least 3); pixel_size a float or a
    Decimal of any exponent."""
    if not pixel_size > 0:
        return 3
    if isinstance(pixel_size, Decimal):
        log10 = pixel_size.adjusted() + math.log10(float(pixel_size.scaleb(-pixel_size.adjusted())))
    else:
        log10 = math.log10(pixel_size)
    return max(3, int(math.ceil(-log10)) + 1)


def coordinate_text(d: Decimal, places: int) -> str:
    """d with `places` decimal places, cut at MAX_SHOWN_PLACES (marked …)."""
    if places <= MAX_SHOWN_PLACES:
        return f"{d:.{places}f}"
    return f"{d:.{MAX_SHOWN_PLACES}f}…"


def reference_text(meta: dict | None) -> str | None:
    """A deep frame's reference orbit in words, from its Frame.meta: 'reference 3,424 bits,
    671,046 points, period 139' (the period only where the orbit stopped at it), then how many
    of its pixels float64 deltas could not place and are marked (the window does not iterate
    them again: a --render proves them; the Redone overlay shows them as 2); None for a frame
    without one (float64)."""
    if not meta or meta.get("reference_points") is None:
        return None
    bits = meta.get("precision_bits")
    parts = [f"reference {int(bits):,} bits" if bits else "reference",
             f"{int(meta['reference_points']):,} points"]
    if meta.get("reference_period"):
        parts.append(f"period {int(meta['reference_period']):,}")
    text = ", ".join(parts)
    marked = int((meta.get("stats") or {}).get("marked_pixels", 0))
    if marked:      # never silently wrong: a part of its own (a line where the canvas is narrow)
        text += f"   {marked:,} pixel{'s' if marked != 1 else ''} marked: float64 cannot place them"
    return text


def readout_text(center_re, center_im, width, canvas_w: int, iterations: int,
                 automatic: bool, number_format: str | None = None,
                 reference: str | None = None) -> str:
    """'c = -0.7436 + 0.1318i   width 1.0·10⁻⁵ (×3.0·10⁵)   2,000 iterations (auto)   float64'.
    The centre (a Decimal, a float or a string) is written with the places that tell pixels apart
    (at most MAX_SHOWN_PLACES); the width is a float or a Decimal; `number_format`, when given,
    names the arithmetic the frame uses; `reference` (reference_text) the deep frame's orbit."""
    if isinstance(width, Decimal):
        pixel = width / max(int(canvas_w), 1)
        zoom = Decimal(repr(HOME_WIDTH)) / width
    else:
        pixel = width / max(int(canvas_w), 1)
        zoom = HOME_WIDTH / width
    places = centre_places(pixel)
    re_, im_ = Decimal(str(center_re)), Decimal(str(center_im))
    text = (f"c = {coordinate_text(re_, places)} {'-' if im_ < 0 else '+'} {coordinate_text(abs(im_), places)}i   "
            f"width {power_of_ten(width)} (×{power_of_ten(zoom)})   "
            f"{int(iterations):,} iterations{' (auto)' if automatic else ''}")
    text = f"{text}   {number_format}" if number_format else text
    return f"{text}   {reference}" if reference else text


class CoordinateReadout(QLabel):
    """The label over the canvas: follows the canvas's size, lets the mouse through."""

    def __init__(self, canvas: QWidget):
        super().__init__(canvas)
        self.setObjectName("MandelbrotReadout")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        # dark enough behind the text to read it over the brightest palette colours
        self.setStyleSheet("#MandelbrotReadout { background: rgba(0, 0, 0, 190); color: #ffffff;"
                           " padding: 2px 6px; border-radius: 3px; }")
        self._full = ""
        font = self.font()
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
        self.setFont(font)
        self._follower = _FollowParent(self)
        canvas.installEventFilter(self._follower)

    def set_text(self, text: str):
        """The readout's text (its parts separated by three spaces); shown on one line where it
        fits, else a part per line, each part elided in the middle if even that is too wide."""
        if text != self._full:
            self._full = text
            self.place()

    def full_text(self) -> str:
        return self._full

    def _fitted(self, room: int) -> str:
        """The text as it fits `room` pixels (text and padding): one line, else a part per line
        (the centre, which may be long, elided in the middle)."""
        fm = self.fontMetrics()
        avail = max(10, room - READOUT_PADDING_PX)
        if fm.horizontalAdvance(self._full) <= avail:
            return self._full
        parts = [p.strip() for p in self._full.split("   ") if p.strip()]
        if parts:
            parts[0] = fm.elidedText(parts[0], Qt.TextElideMode.ElideMiddle, avail)
        return "\n".join(parts)

    def place(self):
        parent = self.parentWidget()
        room = max(0, parent.width() - 2 * MARGIN_PX)
        text = self._fitted(room)
        if text != self.text():
            self.setText(text)
        self.adjustSize()
        width = min(self.sizeHint().width(), room)
        self.resize(width, self.sizeHint().height())
        self.move(MARGIN_PX, max(0, parent.height() - self.height() - MARGIN_PX))
        self.raise_()


class _FollowParent(QObject):
    def __init__(self, label: CoordinateReadout):
        super().__init__(label)
        self.label = label

    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Resize:
            self.label.place()
        return False
