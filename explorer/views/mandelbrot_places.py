"""The Mandelbrot view's place in and out of the window: copy and paste it as text (the
clipboard), open and save Kalles Fraktaler .kfr files. The model reads and writes the text
(explorer.models.mandelbrot); this says in the status bar what happened, and keeps a failure on
show until it is read (the window's notice bar).
"""
from __future__ import annotations

from PyQt6.QtGui import QGuiApplication
from PyQt6.QtWidgets import QFileDialog

from services.files import write_text
from services.location_file import read_location_text

from .export_fields import remember_folder, start_folder, start_path


def _reason(exc: Exception) -> str:
    return getattr(exc, "strerror", None) or str(exc)


class PlaceActions:
    """Copy/paste location and .kfr open/save for a MandelbrotView."""

    def __init__(self, view):
        self.view = view

    def _say(self, text: str, ms: int):
        self.view.status_message.emit(text, ms)

    def _fail(self, text: str):
        """A failure stays on show until read: a frame's progress overwrites the status bar."""
        self.view.status_message.emit(text, 6000)
        self.view.notice.emit(text)

    def copy(self):
        try:
            text = self.view.model.location_text()
        except (ValueError, ArithmeticError) as exc:     # never expected: the camera is checked
            self._fail(f"Cannot copy the location: {exc}")
            return
        QGuiApplication.clipboard().setText(text)
        self._say(f"Copied: {text}", 4000)

    def paste(self, text: str | None = None) -> bool:
        """Go to the location in `text` (default: the clipboard). Bad text leaves the view
        unchanged and says why in the status bar."""
        if text is None:
            text = QGuiApplication.clipboard().text()
        model = self.view.model
        try:
            loc = model.place_from_text(text)
        except (ValueError, ArithmeticError) as exc:   # an exception must never leave a slot
            self._fail(f"Cannot paste location: {exc}")
            return False
        if not self.view.go_to(loc.center_re, loc.center_im, loc.width, loc.iterations,
                               formula=loc.formula):
            self._fail(f"Cannot paste location: {model.camera.refusal}")
            return False
        self._say("Pasted location", 2000)
        return True

    def open_kfr(self, path: str) -> bool:
        """Go to the place in the .kfr file at `path`; a file that cannot be read or holds no
        place leaves the view unchanged and says why (the file is checked as --location checks
        it: services.location_file)."""
        model = self.view.model
        try:
            text = read_location_text(path)
        except ValueError as exc:       # missing, a folder, huge, binary: it names the file
            self._fail(f"Cannot open the location: {exc}")
            return False
        try:
            re_, im_, width, iterations, formula = model.place_from_kfr(text)
        except (OSError, ValueError, ArithmeticError) as exc:
            self._fail(f"Cannot open {path}: {_reason(exc)}")
            return False
        if not self.view.go_to(re_, im_, width, iterations, formula=formula):
            self._fail(f"Cannot open {path}: {model.camera.refusal}")
            return False
        self._say(f"Opened {path}", 3000)
        return True

    def save_kfr(self, path: str) -> bool:
        """Write the current place as a .kfr file (KF's Zoom from this canvas's aspect)."""
        try:
            text = self.view.model.kfr_text()
            write_text(path, text, newline="")   # whole or not at all: a failure keeps the old file
        except (OSError, ValueError, ArithmeticError) as exc:
            self._fail(f"Cannot save {path}: {_reason(exc)}")
            return False
        self._say(f"Saved {path}", 3000)
        return True

    def open_kfr_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self.view, "Open a Kalles Fraktaler location",
                                              start_folder(),
                                              "KF locations (*.kfr);;All files (*)")
        if path:
            remember_folder(path)
            self.open_kfr(path)

    def save_kfr_dialog(self):
        path, _ = QFileDialog.getSaveFileName(self.view, "Save as a Kalles Fraktaler location",
                                              start_path("location.kfr"), "KF locations (*.kfr)")
        if path:
            remember_folder(path)
            self.save_kfr(path)
