"""The Mandelbrot view's side panel: formula, iterations, colouring, bookmarks, location and export.

The panel holds no camera; it reports what the user changed through signals and the view hands it
to its model (explorer.models.mandelbrot). Every change applies live.
"""
from __future__ import annotations

import math
import os

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtGui import QColor
from PyQt6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from kernels import palettes
from kernels.mandelbrot.requests.formulas import EQUATIONS, FORMULAS, LABELS
from kernels.mandelbrot.requests.request import MAX_ITER_LIMIT

from ..models.bookmarks import (  # noqa: F401  (BadBookmarkFile, load_bookmarks: read from here too)
    BOOKMARKS_PATH,
    BadBookmarkFile,
    Bookmark,
    load_bookmarks,
    read_bookmark_files,
)
from ..models.mandelbrot import MAPPING_CHOICES, Colouring, mapping_for
from ..persisted import set_aside
from .mandelbrot_bookmarks import BookmarkBox

USER_BOOKMARKS_NAME = "bookmarks.json"
FORMAT_COLOURS = {"float64": "#2e7d32", "perturbation": "#1565c0", "extended": "#6a1b9a",
                  "float32": "#00838f"}


def user_bookmarks_path() -> str:
    """The user's own bookmarks (same layout as explorer/resources/bookmarks.json), beside the settings;
    read when it exists. Tests point this elsewhere."""
    from PyQt6.QtCore import QStandardPaths
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppConfigLocation)
    return os.path.join(folder, USER_BOOKMARKS_NAME)


class MandelbrotControls(QWidget):
    """Signals: formula_changed(name), colouring_changed() (palette, density, offset, interior,
    mapping, iterations), bookmark_chosen(Bookmark), copy_requested(), paste_requested(),
    export_requested(), kfr_open_requested(), kfr_save_requested() (Kalles Fraktaler location
    files)."""

    formula_changed = pyqtSignal(str)
    colouring_changed = pyqtSignal()
    bookmark_chosen = pyqtSignal(object)
    copy_requested = pyqtSignal()
    paste_requested = pyqtSignal()
    export_requested = pyqtSignal()
    kfr_open_requested = pyqtSignal()
    kfr_save_requested = pyqtSignal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._interior = (0, 0, 0, 255)
        self._auto_value = 256
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)

        # formula: what is iterated (kernels/mandelbrot/requests/formulas.py)
        fm_box = QGroupBox("Formula")
        fm_lay = QHBoxLayout(fm_box)
        self.formula_combo = QComboBox()
        for name in FORMULAS:
            self.formula_combo.addItem(LABELS[name], name)
            self.formula_combo.setItemData(self.formula_combo.count() - 1, EQUATIONS[name],
                                           Qt.ItemDataRole.ToolTipRole)
        self.formula_combo.setToolTip("The formula iterated from z = 0 for every point c: "
                                      + "; ".join(f"{LABELS[n]}: {EQUATIONS[n]}"
                                                  for n in FORMULAS)
                                      + " (Home shows the chosen set whole)")
        fm_lay.addWidget(self.formula_combo, 1)
        lay.addWidget(fm_box)

        # iterations
        it_box = QGroupBox("Iterations")
        it_lay = QHBoxLayout(it_box)
        self.auto_iters = QCheckBox("Auto")
        self.auto_iters.setChecked(True)
        self.auto_iters.setToolTip("Choose the iteration limit from the zoom depth (deeper needs more)")
        self.iters = QSpinBox()
        self.iters.setRange(1, MAX_ITER_LIMIT)
        self.iters.setGroupSeparatorShown(True)
        self.iters.setValue(self._auto_value)
        self.iters.setEnabled(False)
        self.iters.setKeyboardTracking(False)
        self.iters.setToolTip("Iteration limit (1 to 10,000,000): higher shows finer detail near "
                              "the set's boundary and costs proportionally more time")
        it_lay.addWidget(self.auto_iters)
        it_lay.addWidget(self.iters, 1)
        lay.addWidget(it_box)

        # colouring
        col_box = QGroupBox("Colour")
        form = QFormLayout(col_box)
        self.palette = QComboBox()
        self.palette.addItems(palettes.names())
        self.palette.setCurrentText(palettes.DEFAULT)
        self.palette.setToolTip("Palette the smooth iteration count is mapped through")
        form.addRow("Palette", self.palette)

        self.density = QDoubleSpinBox()
        self.density.setRange(0.01, 100.0)
        self.density.setDecimals(2)
        self.density.setSingleStep(0.1)
        self.density.setValue(1.0)
        self.density.setToolTip("How many times the palette repeats per unit of (log) iteration count")
        self.density_slider = QSlider(Qt.Orientation.Horizontal)
        self.density_slider.setRange(-200, 200)          # log10(density) × 100
        self.density_slider.setToolTip(self.density.toolTip())
        form.addRow("Density", self._pair(self.density_slider, self.density))

        self.offset = QDoubleSpinBox()
        self.offset.setRange(0.0, 1.0)
        self.offset.setDecimals(3)
        self.offset.setSingleStep(0.01)
        self.offset.setWrapping(True)
        self.offset.setToolTip("Shift of the palette along the iteration count (0 to 1, wraps round)")
        self.offset_slider = QSlider(Qt.Orientation.Horizontal)
        self.offset_slider.setRange(0, 1000)
        self.offset_slider.setToolTip(self.offset.toolTip())
        form.addRow("Offset", self._pair(self.offset_slider, self.offset))

        self.mapping = QComboBox()
        self.mapping.addItems(MAPPING_CHOICES)
        self.mapping.setToolTip("How counts become colours: sqrt (of the count), log (of the count "
                                "above the frame's lowest: holds at millions of iterations), "
                                "histogram (every colour covers the same area); auto = sqrt for "
                                "float64 frames, log for deep ones")
        form.addRow("Mapping", self.mapping)

        self.interior_btn = QPushButton()
        self.interior_btn.setToolTip("Colour of the points inside the set (never escape)")
        self.interior_btn.clicked.connect(self._pick_interior)
        form.addRow("Interior", self.interior_btn)
        lay.addWidget(col_box)
        self._show_interior()

        # bookmarks (mandelbrot_bookmarks.BookmarkBox): the files are read through this module's
        # names so that tests can point them elsewhere
        self.bookmark_box = BookmarkBox(
            lambda: read_bookmark_files(BOOKMARKS_PATH, user_bookmarks_path(), set_aside),
            lambda: user_bookmarks_path())
        self.bookmarks = self.bookmark_box.list
        self.bookmark_box.chosen.connect(self.bookmark_chosen)
        lay.addWidget(self.bookmark_box, 1)
        self.load_notes: list[str] = list(self.bookmark_box.load_notes)

        # location and export
        loc_box = QGroupBox("Location")
        loc_lay = QVBoxLayout(loc_box)
        row = QHBoxLayout()
        self.copy_btn = QPushButton("Copy location")
        self.copy_btn.setToolTip("Copy centre, width and iterations as text (Ctrl+C on the image)")
        self.paste_btn = QPushButton("Paste location")
        self.paste_btn.setToolTip("Go to a location pasted as text, e.g. "
                                  "'center=-0.75,0 width=3.5 iters=500' (Ctrl+V on the image)")
        row.addWidget(self.copy_btn)
        row.addWidget(self.paste_btn)
        loc_lay.addLayout(row)
        kf_row = QHBoxLayout()
        self.kfr_open_btn = QPushButton("Open .kfr…")
        self.kfr_open_btn.setToolTip("Go to the place in a Kalles Fraktaler location file")
        self.kfr_save_btn = QPushButton("Save .kfr…")
        self.kfr_save_btn.setToolTip("Save this place as a Kalles Fraktaler location file")
        kf_row.addWidget(self.kfr_open_btn)
        kf_row.addWidget(self.kfr_save_btn)
        loc_lay.addLayout(kf_row)
        self.export_btn = QPushButton("Export PNG…")
        self.export_btn.setToolTip("Render the current view at any size to a PNG (or raw .npy) "
                                   "file (Ctrl+E)")
        loc_lay.addWidget(self.export_btn)
        self.precision = QLabel()
        self.precision.setWordWrap(True)
        self.precision.setToolTip("How close the zoom is to the limit of float64 arithmetic")
        loc_lay.addWidget(self.precision)
        lay.addWidget(loc_box)
        self.set_precision("ok", "")

        self.copy_btn.clicked.connect(self.copy_requested)
        self.paste_btn.clicked.connect(self.paste_requested)
        self.export_btn.clicked.connect(self.export_requested)
        self.kfr_open_btn.clicked.connect(self.kfr_open_requested)
        self.kfr_save_btn.clicked.connect(self.kfr_save_requested)
        self.formula_combo.currentIndexChanged.connect(
            lambda _: self.formula_changed.emit(self.formula()))
        self.auto_iters.toggled.connect(self._auto_toggled)
        self.iters.valueChanged.connect(self._changed)
        self.palette.currentTextChanged.connect(self._changed)
        self.mapping.currentTextChanged.connect(self._changed)
        self.density.valueChanged.connect(self._density_spin)
        self.density_slider.valueChanged.connect(self._density_slide)
        self.offset.valueChanged.connect(self._offset_spin)
        self.offset_slider.valueChanged.connect(self._offset_slide)

    @staticmethod
    def _pair(slider, spin) -> QWidget:
        w = QWidget()
        h = QHBoxLayout(w)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(slider, 1)
        h.addWidget(spin)
        return w

    # ---- values ------------------------------------------------------------------------------
    def formula(self) -> str:
        """The formula chosen (formulas.py's names)."""
        return str(self.formula_combo.currentData())

    def set_formula(self, name: str):
        """Show `name` chosen without reporting a change (a place that names its formula)."""
        i = self.formula_combo.findData(name)
        if i >= 0 and i != self.formula_combo.currentIndex():
            blocked = self.formula_combo.blockSignals(True)
            try:
                self.formula_combo.setCurrentIndex(i)
            finally:
                self.formula_combo.blockSignals(blocked)

    def iterations(self) -> int | None:
        """The user's iteration limit, or None when it is automatic."""
        return None if self.auto_iters.isChecked() else int(self.iters.value())

    def set_iterations(self, n: int | None):
        """Automatic (None) or a fixed limit, clamped to the spin box's range."""
        if n is None:
            self.auto_iters.setChecked(True)
        else:
            self.auto_iters.setChecked(False)
            self.iters.setValue(int(min(max(int(n), 1), MAX_ITER_LIMIT)))

    def show_auto_iterations(self, n: int):
        """Display the automatic limit in the (disabled) spin box."""
        self._auto_value = int(n)
        if self.auto_iters.isChecked():
            self.iters.blockSignals(True)
            self.iters.setValue(int(n))
            self.iters.blockSignals(False)

    def interior(self) -> tuple[int, int, int, int]:
        return self._interior

    def set_interior(self, rgba):
        self._interior = tuple(int(v) for v in rgba)
        self._show_interior()
        self._changed()

    def mapping_for(self, number_format: str) -> str:
        """The colour mapping for a frame in `number_format` (explorer.models.mandelbrot.mapping_for)."""
        return mapping_for(self.mapping.currentText(), number_format)

    def colouring(self) -> Colouring:
        """The colouring the panel shows, for the view's model."""
        return Colouring(palette=self.palette.currentText(), density=float(self.density.value()),
                         offset=float(self.offset.value()), interior=tuple(self._interior),
                         mapping=self.mapping.currentText())

    def set_number_format(self, number_format: str, message: str = ""):
        """Show the arithmetic the frames use: float64, perturbation or extended."""
        colour = FORMAT_COLOURS.get(number_format, "#000")
        self.precision.setText(f"<span style='color:{colour}'>●</span> Numbers: {number_format}")
        self.precision.setToolTip(message or {
            "float64": "Plain 64-bit floats: fine to a width of about 1e-13 around this centre",
            "perturbation": "Deep zoom: each pixel follows a reference orbit computed in arbitrary "
                            "precision, by its difference from it in 64-bit floats",
            "extended": "Deeper than 64-bit floats' range (1e-290): differences carry their own "
                        "exponent"}.get(number_format, ""))

    def set_precision(self, level: str, message: str):
        colours = {"ok": "#2e7d32", "warn": "#b26a00", "limit": "#c62828"}
        words = {"ok": "Precision: fine", "warn": "Precision: near the float64 limit",
                 "limit": "Precision: float64 limit reached"}
        self.precision.setText(f"<span style='color:{colours.get(level, '#000')}'>●</span> "
                               f"{words.get(level, level)}")
        self.precision.setToolTip(message or "How close the zoom is to the limit of float64 arithmetic")

    # ---- internals ---------------------------------------------------------------------------
    def _changed(self, *_):
        self.colouring_changed.emit()

    def _auto_toggled(self, auto: bool):
        self.iters.setEnabled(not auto)
        if auto:
            self.show_auto_iterations(self._auto_value)
        self._changed()

    def _density_spin(self, v: float):
        self.density_slider.blockSignals(True)
        self.density_slider.setValue(int(round(math.log10(max(v, 0.01)) * 100)))
        self.density_slider.blockSignals(False)
        self._changed()

    def _density_slide(self, v: int):
        self.density.setValue(10 ** (v / 100.0))

    def _offset_spin(self, v: float):
        self.offset_slider.blockSignals(True)
        self.offset_slider.setValue(int(round(v * 1000)))
        self.offset_slider.blockSignals(False)
        self._changed()

    def _offset_slide(self, v: int):
        self.offset.setValue(v / 1000.0)

    def _show_interior(self):
        r, g, b, _ = self._interior
        text = "#%02x%02x%02x" % (r, g, b)
        fg = "#fff" if (r * 299 + g * 587 + b * 114) < 128000 else "#000"
        self.interior_btn.setText(text)
        self.interior_btn.setStyleSheet(f"background:{text}; color:{fg}")

    def _pick_interior(self):
        c = QColorDialog.getColor(QColor(*self._interior), self, "Interior colour")
        if c.isValid():
            self.set_interior((c.red(), c.green(), c.blue(), 255))
