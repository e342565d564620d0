"""The Mandelbrot view's camera: where in the complex plane the window looks, and how gestures move it.

Pure Python, no Qt, so every gesture's arithmetic is testable on its own. Pixel coordinates are
the canvas's physical pixels, x to the right and y down (row 0 = top), with pixel (col, row)
covering [col, col+1) x [row, row+1); the imaginary axis points up.

The centre and the width are decimal.Decimal: a view 1e-1000 wide needs a centre of a thousand
digits and a width below float64's range. The arithmetic carries the digits the depth needs
(`digits_for`: ~40 more than the width's decades), so pans and zooms never round a deep centre.
Zooming in stops at MIN_WIDTH (1e-10000, the deep renderer's limit), zooming out at MAX_WIDTH.
"""
from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

# digits carried by the centre at shallow depths; deeper, digits_for(width) more
CENTRE_DIGITS = 60
# digits beyond the width's decades: pixels (~4 decades) and sub-pixel positions, with room to spare
GUARD_DIGITS = 40
MIN_WIDTH = Decimal("1e-10000")     # the deep renderer's deepest (kernels/mandelbrot/requests/deep_request.py)
_CTX = decimal.Context(prec=CENTRE_DIGITS, Emin=-10 ** 6, Emax=10 ** 6)

PAN_STEP = 0.10     # arrow keys move the view by this fraction of its size
KEY_ZOOM = 2.0      # +/- zoom factor
MAX_WIDTH = 64.0    # zooming out further shows nothing new
MAX_HISTORY = 500
HOME_WIDTH = 3.5    # the first view (Home) shows the whole set: magnification 1


def to_decimal(value) -> Decimal:
    """A Decimal from a float (its shortest repr, not its binary expansion), int, str or Decimal."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        return Decimal(repr(value))
    return Decimal(str(value))


def digits_for(width: Decimal) -> int:
    """Significant digits that keep a centre exact to far below a pixel of a view `width` wide."""
    if not (width.is_finite() and width > 0):
        return CENTRE_DIGITS
    return max(CENTRE_DIGITS, -width.adjusted() + GUARD_DIGITS)


def _ctx(width: Decimal) -> decimal.Context:
    digits = digits_for(width)
    if digits == CENTRE_DIGITS:
        return _CTX
    return decimal.Context(prec=digits, Emin=_CTX.Emin, Emax=_CTX.Emax)


@dataclass(frozen=True)
class CameraState:
    center_re: Decimal
    center_im: Decimal
    width: Decimal        # the complex-plane span of the canvas's horizontal axis

    @staticmethod
    def of(center_re, center_im, width) -> "CameraState":
        return CameraState(to_decimal(center_re), to_decimal(center_im), to_decimal(width))

    def pixel_size(self, w: int) -> Decimal:
        return _ctx(self.width).divide(self.width, Decimal(max(int(w), 1)))

    def to_complex(self, px: float, py: float, w: int, h: int) -> tuple[Decimal, Decimal]:
        """The complex point at canvas position (px, py)."""
        ctx = _ctx(self.width)
        s = self.pixel_size(w)
        re = ctx.add(self.center_re, ctx.multiply(to_decimal(float(px) - w / 2.0), s))
        im = ctx.subtract(self.center_im, ctx.multiply(to_decimal(float(py) - h / 2.0), s))
        return re, im

    def to_pixel(self, re, im, w: int, h: int) -> tuple[float, float]:
        """The canvas position of a complex point (inverse of to_complex), in Decimal until the
        offsets are counted in pixels (a deep view's offsets are far below float64's range)."""
        ctx = _ctx(self.width)
        s = self.pixel_size(w)
        dx = ctx.divide(ctx.subtract(to_decimal(re), self.center_re), s)
        dy = ctx.divide(ctx.subtract(to_decimal(im), self.center_im), s)
        return float(dx) + w / 2.0, -float(dy) + h / 2.0


PrecisionCheck = Callable[[float, float, float, int], tuple[str, str]]


def _no_precision_limit(re, im, width, w):
    return "ok", ""


class Camera:
    """The current view plus a history of earlier views (one entry per completed gesture).

    Zooming in is refused (the method returns False and `refusal` says why) below MIN_WIDTH, and,
    when a `precision(re, im, width, canvas_w)` check is given (floats; it answers
    ("ok"|"warn"|"limit", message)), where it says "limit"; zooming out and panning always work.
    The app gives no precision check: past float64's digits the deep renderer draws.
    """

    def __init__(self, home: CameraState | None = None, precision: PrecisionCheck | None = None):
        self.home = home or CameraState.of("-0.75", "0", HOME_WIDTH)
        self.precision = precision or _no_precision_limit
        self._state = self.home
        self._history: list[CameraState] = []
        self._gesture_start: CameraState | None = None
        self.refusal = ""

    # ---- state -------------------------------------------------------------------------------
    @property
    def state(self) -> CameraState:
        return self._state

    @property
    def center(self) -> tuple[Decimal, Decimal]:
        return self._state.center_re, self._state.center_im

    @property
    def width(self) -> Decimal:
        return self._state.width

    @property
    def history_depth(self) -> int:
        return len(self._history)

    def precision_state(self, w: int) -> tuple[str, str]:
        s = self._state
        return self.precision(float(s.center_re), float(s.center_im), float(s.width), max(int(w), 1))

    # ---- gestures and history ----------------------------------------------------------------
    def begin_gesture(self):
        """Start a drag or a burst of wheel steps; the view before it becomes one history entry."""
        if self._gesture_start is None:
            self._gesture_start = self._state

    def end_gesture(self):
        start, self._gesture_start = self._gesture_start, None
        if start is not None and start != self._state:
            self._remember(start)

    @property
    def in_gesture(self) -> bool:
        return self._gesture_start is not None

    def _remember(self, state: CameraState):
        self._history.append(state)
        del self._history[:-MAX_HISTORY]

    def _apply(self, new: CameraState, w: int, *, jump: bool = False) -> bool:
        """Move to `new` unless it zooms in past the deepest width (or the precision check's
        limit), or (a jump to a bookmark or a pasted location) lands past it at any width.
        One-shot moves made outside a gesture get their own history entry."""
        self.refusal = ""
        width = new.width
        if not (width.is_finite() and width > 0):
            self.refusal = "That zoom is out of range."
            return False
        if not (new.center_re.is_finite() and new.center_im.is_finite()):
            self.refusal = "That centre is not a finite number."
            return False
        new = CameraState(new.center_re, new.center_im, min(width, Decimal(repr(MAX_WIDTH))))
        if new.width < MIN_WIDTH and (jump or new.width < self._state.width):
            self.refusal = (f"{'That place is' if jump else 'Cannot zoom in further:'} deeper than "
                            f"the deepest width supported, 1e{MIN_WIDTH.adjusted()}")
            return False
        if jump or new.width < self._state.width:
            level, message = self.precision(float(new.center_re), float(new.center_im),
                                            float(new.width), max(int(w), 1))
            if level == "limit":
                if jump:
                    self.refusal = ("That place is past the precision of 64-bit floats: "
                                    + (message or "the picture would come out flat"))
                else:
                    self.refusal = (f"Cannot zoom in further: {message}" if message else
                                    "Cannot zoom in further: float64 precision is exhausted here")
                return False
        if new == self._state:
            return True
        if self._gesture_start is None:
            self._remember(self._state)
        self._state = new
        return True

    def back(self) -> bool:
        """Return to the view before the last completed gesture; False when there is none."""
        if self._gesture_start is not None:
            self.end_gesture()
        if not self._history:
            return False
        self._state = self._history.pop()
        return True

    def reset(self) -> bool:
        return self._apply(self.home, 1)

    def go_to(self, state: CameraState, w: int) -> bool:
        """Jump to a bookmark or a pasted location (refused past the precision limit, wherever
        the current view is)."""
        return self._apply(state, w, jump=True)

    # ---- moves -------------------------------------------------------------------------------
    def pan_pixels(self, dx: float, dy: float, w: int) -> bool:
        """Drag the picture by (dx, dy) canvas pixels: the point under the cursor follows it."""
        ctx = _ctx(self._state.width)
        s = self._state.pixel_size(w)
        re = ctx.subtract(self._state.center_re, ctx.multiply(to_decimal(float(dx)), s))
        im = ctx.add(self._state.center_im, ctx.multiply(to_decimal(float(dy)), s))
        return self._apply(CameraState(re, im, self._state.width), w)

    def pan_fraction(self, fx: float, fy: float, w: int, h: int) -> bool:
        """Move the view by a fraction of its size: fx > 0 looks right, fy > 0 looks up."""
        return self.pan_pixels(-fx * w, fy * h, w)

    def zoom_about(self, factor: float, px: float, py: float, w: int, h: int) -> bool:
        """Zoom by `factor` (> 1 zooms in) keeping the point at canvas (px, py) where it is."""
        if not (math.isfinite(factor) and factor > 0):
            return False
        re, im = self._state.to_complex(px, py, w, h)
        width = _ctx(self._state.width).divide(self._state.width, to_decimal(float(factor)))
        ctx = _ctx(width)
        s = ctx.divide(width, Decimal(max(int(w), 1)))
        c_re = ctx.subtract(re, ctx.multiply(to_decimal(float(px) - w / 2.0), s))
        c_im = ctx.add(im, ctx.multiply(to_decimal(float(py) - h / 2.0), s))
        return self._apply(CameraState(c_re, c_im, width), w)

    def zoom_centre(self, factor: float, w: int, h: int) -> bool:
        return self.zoom_about(factor, w / 2.0, h / 2.0, w, h)

    def zoom_to_box(self, x0: float, y0: float, x1: float, y1: float, w: int, h: int) -> bool:
        """Zoom so that the canvas rectangle (x0, y0)-(x1, y1) fills the view (whole box visible)."""
        bw, bh = abs(x1 - x0), abs(y1 - y0)
        if bw < 1 and bh < 1:
            return False
        re, im = self._state.to_complex((x0 + x1) / 2.0, (y0 + y1) / 2.0, w, h)
        fit = max(bw / max(w, 1), bh / max(h, 1))
        width = _ctx(self._state.width).multiply(self._state.width, to_decimal(float(fit)))
        return self._apply(CameraState(re, im, width), w)

    def centre_on(self, px: float, py: float, w: int, h: int) -> bool:
        re, im = self._state.to_complex(px, py, w, h)
        return self._apply(CameraState(re, im, self._state.width), w)
