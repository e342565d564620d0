"""The Mandelbrot view's hover readout: the complex point under the mouse in the status bar, then
the smooth count of that pixel, read back from the frame's values on the device (one pixel, on
the worker, under the view's "hover" key: at most one read in flight, the newest position next).
"""
from __future__ import annotations

from kernels.scheduler import PixelValue, ReadPixel

from .mandelbrot_readout import centre_places, coordinate_text


def point_text(re_, im_, pixel_size) -> str:
    """'c = -0.7436 +0.1318i' with the places that tell pixels of `pixel_size` apart."""
    places = centre_places(pixel_size)
    re_s, im_s = coordinate_text(re_, places), coordinate_text(im_, places)
    return f"c = {'' if re_ < 0 else '+'}{re_s} {'' if im_ < 0 else '+'}{im_s}i"


class HoverReadout:
    """Reports through the view's status_message and hover_value(row, col, smooth count)."""

    def __init__(self, view):
        self.view = view
        self.text = ""
        self._busy = False
        self._next = None

    def moved(self, x: float, y: float):
        view, model = self.view, self.view.model
        w, h = view.canvas_size()
        if not (0 <= x < w and 0 <= y < h):
            return
        state = model.camera.state
        re_, im_ = state.to_complex(x, y, w, h)
        self.text = point_text(re_, im_, state.pixel_size(max(w, 1)))
        view.status_message.emit(self.text, 0)
        frame = model.frame_at(w, h)
        if frame is None:
            return
        self._next = (int(y), int(x), frame)
        if not self._busy:
            self._submit()

    def _submit(self):
        row, col, frame = self._next
        self._next = None
        self._busy = True
        view = self.view
        view.submit(ReadPixel(frame.fetch_value, row, col, view.backend), key=view.side_key("hover"))

    def done(self, value: PixelValue | None):
        """The read came back (None: it failed or was cancelled)."""
        self._busy = False
        if value is not None:
            row, col, v = value.row, value.col, value.value
            if v == v:          # NaN: that frame's values have been reused since
                frame = self.view.model.frame
                limit = frame.request.max_iter if frame is not None else None
                inside = limit is not None and v >= limit
                what = "inside the set" if inside else f"smooth count {v:,.2f}"
                self.view.status_message.emit(f"{self.text}   {what}", 0)
                self.view.hover_value.emit(float(row), float(col), float(v))
        if self._next is not None:
            self._submit()
