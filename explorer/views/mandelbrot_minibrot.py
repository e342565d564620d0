"""The Mandelbrot view's "Zoom to minibrot": N (or the side panel's button) looks for the minibrot
of the view (the lowest nucleus period in the disc inscribed in it); Shift+N, then a zoom box
(right- or Shift-drag), looks in the box instead. The search (services.minibrot: the period, then
the nucleus by Newton's method) runs on the worker under the view's "minibrot" key, a step at a
time so that frames still render; the status bar follows it, Esc cancels it (the view stays where
it was), and when it ends the view goes to the minibrot: centred on its nucleus, about twice the
minibrot's extent wide, with iterations enough to show it. It never zooms out: a minibrot wider than
the view is named instead.
"""
from __future__ import annotations

from decimal import Decimal

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QAction, QKeySequence
from PyQt6.QtWidgets import QPushButton

from kernels.mandelbrot.requests.formulas import LABELS, MANDELBROT
from kernels.mandelbrot.requests.request import auto_iterations
from services.minibrot import (
    HANDLERS,
    MinibrotFound,
    MinibrotProgress,
    box_search,
    view_search,
)

TIP = ("Zoom to minibrot (N): find the minibrot in the view — the lowest period of a nucleus in "
       "the circle inscribed in it, up to the iteration limit — by Newton's method, and go "
       "there.\nShift+N, then draw a box (right- or Shift-drag): look in the box instead.\n"
       "Esc cancels.")


class MinibrotZoom:
    """One search at a time for a MandelbrotView. `found` and `failed` hold how the last ended."""

    def __init__(self, view):
        self.view = view
        self.running = False
        self.box_armed = False
        self.found: MinibrotFound | None = None
        self.failed: str | None = None
        for request_type, handler in HANDLERS.items():
            view.scheduler.register(request_type, handler)
        ctx = Qt.ShortcutContext.WidgetWithChildrenShortcut
        self.action = QAction("Zoom to minibrot", view)
        self.action.setShortcut(QKeySequence("N"))
        self.action.setShortcutContext(ctx)
        self.action.setToolTip(TIP)
        self.action.triggered.connect(self.start_view)
        self.box_action = QAction("Zoom to minibrot in a box", view)
        self.box_action.setShortcut(QKeySequence("Shift+N"))
        self.box_action.setShortcutContext(ctx)
        self.box_action.triggered.connect(self.arm_box)
        view.addAction(self.action)
        view.addAction(self.box_action)
        self.button = QPushButton("Zoom to minibrot (N)")
        self.button.setToolTip(TIP)
        self.button.clicked.connect(self.start_view)
        panel = view.controls.export_btn.parentWidget()      # the side panel's Location group
        panel.layout().addWidget(self.button)

    @property
    def key(self) -> str:
        return self.view.side_key("minibrot")

    # ---- starting ------------------------------------------------------------------------------
    def start_view(self) -> bool:
        """Look for the minibrot of the whole view."""
        m = self.view.model
        if not self._mandelbrot():
            return False
        s = m.camera.state
        try:
            search = view_search(s.center_re, s.center_im, s.width, self.view.canvas_size(),
                                 m.iterations())
        except ValueError as exc:
            return self._refuse(str(exc))
        return self._start(search, "the view")

    def arm_box(self):
        """The next zoom box is looked in for a minibrot instead of zoomed to."""
        self.box_armed = True
        self.view.status_message.emit("Zoom to minibrot: draw a box around it (right- or "
                                      "Shift-drag); Esc forgets it", 0)

    def take_box(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        """The view's zoom box, when armed: look in it (True), else leave it to zooming."""
        if not self.box_armed:
            return False
        self.box_armed = False
        if abs(x1 - x0) < 3 and abs(y1 - y0) < 3:
            self.view.status_message.emit("Zoom to minibrot: the box was too small", 4000)
            return True
        if not self._mandelbrot():
            return True
        m = self.view.model
        w, h = self.view.canvas_size()
        s = m.camera.state
        try:
            search = box_search(s.to_complex(x0, y0, w, h), s.to_complex(x1, y1, w, h),
                                s.pixel_size(w), m.iterations())
        except ValueError as exc:
            self._refuse(str(exc))
            return True             # the box was the search's, even though it found nothing
        self._start(search, "the box")
        return True

    def _start(self, search, where: str) -> bool:
        if self.running:
            self.view.status_message.emit("Zoom to minibrot is already looking; Esc cancels it",
                                          4000)
            return False
        self.found = self.failed = None
        self.running = True
        self.view.submit(search, key=self.key)
        self.view.status_message.emit(f"Zoom to minibrot: looking in {where}…   (Esc cancels)", 0)
        return True

    def _mandelbrot(self) -> bool:
        """Whether the view iterates the Mandelbrot set, whose minibrots the search finds (by
        their nuclei, roots of z^2 + c's iterates); else refused in plain words."""
        formula = self.view.model.formula
        if formula == MANDELBROT:
            return True
        return self._refuse(f"it finds the Mandelbrot set's minibrots, not {LABELS[formula]}'s: "
                            "choose the Mandelbrot formula")

    def _refuse(self, why: str) -> bool:
        self.failed = why
        self._say(f"Zoom to minibrot: {why}")
        return False

    def _say(self, text: str):
        """A search's end stays on show (the window's notice bar) until read: a deep frame's
        progress takes the status bar within a second."""
        self.view.status_message.emit(text, 10000)
        self.view.notice.emit(text)

    def cancel(self) -> bool:
        """Esc: stop the search (the view stays where it is) or forget an armed box; False when
        there was neither."""
        if self.box_armed:
            self.box_armed = False
            self.view.status_message.emit("Zoom to minibrot: box forgotten", 3000)
            return True
        if not self.running:
            return False
        self.view.cancel(self.key)
        self.running = False
        self.failed = "cancelled"
        self.view.status_message.emit("Zoom to minibrot cancelled: the view stays where it was",
                                      5000)
        return True

    # ---- results -------------------------------------------------------------------------------
    def on_result(self, item):
        if isinstance(item, MinibrotProgress):
            self.view.status_message.emit(item.text, 0)
            return
        self.running = False
        if not isinstance(item, MinibrotFound):
            return
        width = self.view.model.camera.state.width
        if item.width >= width:     # never a zoom out: the minibrot is in sight already
            self._refuse(f"the minibrot found ({item.summary()}, nucleus at "
                         f"{_short(item.center_re)}{_signed(item.center_im)}i) needs a view "
                         f"{item.width:.3g} wide, wider than this one ({width:.3g}): zoom out "
                         "to see it whole, or look nearer a smaller one")
            return
        self.found = item
        # the minibrot's iterations when the automatic limit there would be too few to show it
        iters = item.iterations if item.iterations > auto_iterations(item.width) else None
        if self.view.go_to(item.center_re, item.center_im, item.width, iters):
            self._say(f"Minibrot found: {item.summary()}")

    def on_failed(self, message: str | None):
        """The search failed (message) or was cancelled (None)."""
        was = self.running
        self.running = False
        if message is None:
            return
        if was:
            self._refuse(message)


def _short(v: str) -> str:
    """A nucleus coordinate (hundreds of digits at depth) in a dozen."""
    return f"{Decimal(v):.10g}"


def _signed(v: str) -> str:
    d = Decimal(v)
    return f"{'-' if d.is_signed() else '+'}{abs(d):.10g}"
