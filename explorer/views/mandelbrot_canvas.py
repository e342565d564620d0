"""The Mandelbrot view's picture: a pyqtgraph ImageItem shown 1:1 in physical pixels, with the
ViewBox's own pan/zoom replaced by callbacks into the view's camera.

The ViewBox range is pinned to [0, W] × [0, H] physical pixels (y down), so the view coordinates
of a mouse event are canvas pixels, the unit the camera works in. While a gesture runs, the last
frame is moved and scaled with setRect until the next frame replaces it.
"""
from __future__ import annotations

import pyqtgraph as pg
from PyQt6.QtCore import QPointF, QRectF, QSize, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QPen
from PyQt6.QtWidgets import QGraphicsRectItem

WHEEL_STEP = 1.25   # zoom factor per wheel notch (120 units of angle delta)


class CameraViewBox(pg.ViewBox):
    """Reports gestures in canvas pixels instead of changing its own range.

    Signals: drag_started(), panned(dx, dy), drag_finished(), box_zoom(x0, y0, x1, y1),
    wheel_zoom(factor, x, y), double_clicked(x, y).
    """

    drag_started = pyqtSignal()
    panned = pyqtSignal(float, float)
    drag_finished = pyqtSignal()
    box_zoom = pyqtSignal(float, float, float, float)
    wheel_zoom = pyqtSignal(float, float, float)
    double_clicked = pyqtSignal(float, float)

    def __init__(self):
        super().__init__(enableMouse=False, enableMenu=False, invertY=True, defaultPadding=0.0)
        self.disableAutoRange()
        self._band = QGraphicsRectItem()
        pen = QPen(QColor(255, 255, 255, 230), 0)
        pen.setStyle(Qt.PenStyle.DashLine)
        self._band.setPen(pen)
        self._band.setBrush(QColor(255, 255, 255, 40))
        self._band.setZValue(1e9)
        self._band.hide()
        self.addItem(self._band, ignoreBounds=True)
        self._boxing = False
        self._box_cancelled = False

    def pin_range(self, w: int, h: int):
        self.setRange(xRange=(0, max(w, 1)), yRange=(0, max(h, 1)), padding=0.0, update=True)

    def _px(self, pos) -> QPointF:
        return self.mapToView(pos)

    def mouseDragEvent(self, ev, axis=None):
        ev.accept()
        shift = bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        box = ev.button() == Qt.MouseButton.RightButton or (
            ev.button() == Qt.MouseButton.LeftButton and shift)
        if ev.isStart():
            self._boxing = box
            self._box_cancelled = False
            if not box:
                self.drag_started.emit()
        if self._boxing:
            a, b = self._px(ev.buttonDownPos()), self._px(ev.pos())
            if ev.isFinish():
                self._band.hide()
                self._boxing = False
                if not self._box_cancelled:
                    self.box_zoom.emit(a.x(), a.y(), b.x(), b.y())
                self._box_cancelled = False
            elif self._box_cancelled:
                return
            else:
                self._band.setRect(QRectF(a, b).normalized())
                self._band.show()
            return
        if ev.button() in (Qt.MouseButton.LeftButton, Qt.MouseButton.MiddleButton):
            d = self._px(ev.pos()) - self._px(ev.lastPos())
            if d.x() or d.y():
                self.panned.emit(d.x(), d.y())
            if ev.isFinish():
                self.drag_finished.emit()

    def cancel_box(self) -> bool:
        """Escape during a zoom-box drag: forget the box; the release then does nothing."""
        was = self._band.isVisible()
        self._band.hide()
        if self._boxing:
            self._box_cancelled = True
        return was

    def wheelEvent(self, ev, axis=None):
        ev.accept()
        delta = ev.delta() if hasattr(ev, "delta") else ev.angleDelta().y()
        if not delta:
            return
        p = self._px(ev.pos())
        self.wheel_zoom.emit(WHEEL_STEP ** (delta / 120.0), p.x(), p.y())

    def mouseClickEvent(self, ev):
        if ev.double() and ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            p = self._px(ev.pos())
            self.double_clicked.emit(p.x(), p.y())

    def keyPressEvent(self, ev):
        ev.ignore()   # the canvas handles keys; ViewBox's own +/-/Backspace would fight them


class Canvas(pg.GraphicsView):
    """The widget the picture lives in. Emits resized() and key_pressed(QKeyEvent) for keys it
    does not pass on, and hovered(x, y) / left() for the readout."""

    resized = pyqtSignal()
    key_pressed = pyqtSignal(object)
    hovered = pyqtSignal(float, float)

    HANDLED_KEYS = {Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Down,
                    Qt.Key.Key_Plus, Qt.Key.Key_Minus, Qt.Key.Key_Equal, Qt.Key.Key_Home,
                    Qt.Key.Key_Backspace, Qt.Key.Key_Escape}

    def __init__(self, parent=None):
        super().__init__(parent, background="k")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(0, 0)
        self.vb = CameraViewBox()
        self.setCentralItem(self.vb)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setAutoDownsample(False)
        self.vb.addItem(self.image, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._moved)
        self.setToolTip("Drag: pan · wheel: zoom · right- or Shift-drag: zoom box · double-click: "
                        "centre\nArrows: pan · +/−: zoom · Home: reset · Backspace: back\n"
                        "Ctrl+C / Ctrl+V: copy / paste location · Ctrl+E: export\n"
                        "N: zoom to the minibrot in view · Shift+N: in a box drawn next")

    def minimumSizeHint(self):
        return QSize(0, 0)      # a scroll area asks for room for scroll bars it never shows

    def physical_size(self) -> tuple[int, int]:
        vp = self.viewport()
        dpr = vp.devicePixelRatioF() or 1.0
        return int(round(vp.width() * dpr)), int(round(vp.height() * dpr))

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        if getattr(self, "vb", None) is None:   # called from the base constructor
            return
        w, h = self.physical_size()
        self.vb.pin_range(w, h)
        self.resized.emit()

    def keyPressEvent(self, ev):
        if ev.key() in self.HANDLED_KEYS and not (ev.modifiers() & Qt.KeyboardModifier.ControlModifier):
            self.key_pressed.emit(ev)
            ev.accept()
            return
        super().keyPressEvent(ev)

    def _moved(self, scene_pos):
        p = self.vb.mapSceneToView(scene_pos)
        self.hovered.emit(p.x(), p.y())
