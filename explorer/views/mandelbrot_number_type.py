"""The Mandelbrot view's number type: a side-panel box to choose auto / float32 / float64 for
float64-depth frames, which says what the frame uses and why (kernels/mandelbrot/requests/number_type.py's
rule), and the comparison mode: the current frame drawn both ways in a window beside the view,
the pixels where float32 departs from the exact (float64) picture marked, and the widths at which
each type runs out at this place. The comparison runs on the worker under the view's "compare"
key (kernels/mandelbrot/compare.py)."""
from __future__ import annotations

import math

import numpy as np
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtGui import QImage, QKeySequence, QPixmap, QShortcut
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from kernels.mandelbrot.compare import NumberTypeComparison
from kernels.mandelbrot.requests.deep_request import log10_of, parse_width
from kernels.mandelbrot.requests.number_type import NUMBER_TYPES, choose, choose_deep, device_rates

TYPE_COLOURS = {"float32": "#00838f", "float64": "#2e7d32"}
COMPARE_SHORTCUT = "Ctrl+Shift+F"
PROVE_SHORTCUT = "P"
PROVE_TIP = ("Deep frames: iterate the pixels float64 deltas cannot place again in double-double, "
             "with a sound error bound, as a --render and an export do (seconds at the hardest "
             "places); off, they keep the loop's value and are marked (the readout counts them, "
             f"the Redone overlay shows them)  [{PROVE_SHORTCUT}]")
PANEL_PIXELS = 320          # the comparison's pictures are shown this wide and tall at most


class NumberTypeBox(QGroupBox):
    """auto / float32 / float64, the type in use and why, and the comparison's button."""

    changed = pyqtSignal(str)
    compare_requested = pyqtSignal()
    prove_changed = pyqtSignal(bool)

    def __init__(self, parent=None):
        super().__init__("Number type", parent)
        lay = QVBoxLayout(self)
        self.combo = QComboBox()
        for t in NUMBER_TYPES:
            self.combo.addItem({"auto": "Auto"}.get(t, t), t)
        self.combo.setToolTip("The arithmetic of float64-depth frames. Auto: float32 where it "
                              "draws what float64 draws and this GPU runs float64 slowly "
                              "(GeForce/RTX: 1/64 of float32's rate), else float64")
        self.chosen = QLabel()
        self.chosen.setWordWrap(True)
        self.compare_btn = QPushButton("Compare float32 / float64…")
        self.compare_btn.setToolTip("Draw this frame both ways and mark where float32 departs "
                                    f"from the exact picture ({COMPARE_SHORTCUT})")
        self.prove = QCheckBox(f"Prove doubtful deep pixels ({PROVE_SHORTCUT})")
        self.prove.setToolTip(PROVE_TIP)
        lay.addWidget(self.combo)
        lay.addWidget(self.chosen)
        lay.addWidget(self.compare_btn)
        lay.addWidget(self.prove)
        self.combo.currentIndexChanged.connect(lambda _: self.changed.emit(self.wanted()))
        self.compare_btn.clicked.connect(self.compare_requested)
        self.prove.toggled.connect(self.prove_changed)

    def wanted(self) -> str:
        return str(self.combo.currentData())

    def show_choice(self, number_type: str, reason: str, auto: bool, deep: bool = False):
        colour = TYPE_COLOURS.get(number_type, "#555")
        how = " (auto)" if auto else ""
        what = " deltas" if deep else ""
        self.chosen.setText(f"<span style='color:{colour}'>●</span> Using {number_type}{what}{how}")
        self.chosen.setToolTip(reason)


def _pixmap(rgba: np.ndarray) -> QPixmap:
    h, w = rgba.shape[:2]
    data = np.ascontiguousarray(rgba)
    image = QImage(data.data, w, h, 4 * w, QImage.Format.Format_RGBA8888).copy()
    return QPixmap.fromImage(image)


def summary_text(comparison) -> str:
    """The comparison's findings in a few lines (rich text)."""
    w32, w64 = comparison.run_out()
    n, f = comparison.departed, comparison.departed_fraction
    state = comparison.float32_state()
    deep = comparison.deep
    kind = "float32 deltas" if deep else "float32"
    verdict = {"ok": f"{kind} are exact enough here" if deep else "float32 is exact enough here",
               "warn": "float32 departs from the exact picture here",
               "limit": f"{kind} have run out here" if deep else
                        "float32 has run out of digits here"}[state]
    after = "extended exponents" if deep else "deep zoom by perturbation"
    s = "" if deep else "s"
    width = format(parse_width(comparison.request.width), ".3g")
    t64 = comparison.timings64.phases_ms.get("kernel")
    t32 = comparison.timings32.phases_ms.get("kernel")
    times = ""
    if t64 and t32:
        times = (f"<br>Kernel time: float64 {t64:.1f} ms, float32 {t32:.1f} ms (float32 at "
                 f"{t64 / t32:.2f}× float64's speed)")
    return (f"<b>{verdict}.</b> {kind} change{s} the escape count of <b>{n:,}</b> of "
            f"{comparison.departs.size:,} pixels ({100 * f:.3g} %), marked in magenta.<br>"
            f"At this centre and {comparison.request.size[0]} pixels across, {kind} draw{s} "
            f"exactly down to a width of <b>{w32:.3g}</b>, float64 down to <b>{w64:.3g}</b> "
            f"(then {after}). This view is {width} wide.{times}")


class ComparisonDialog(QDialog):
    """The comparison, beside the view (not modal): float64, float32 and the departures."""

    refresh_requested = pyqtSignal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("float32 against float64")
        self.setMinimumWidth(3 * PANEL_PIXELS // 2)
        outer = QVBoxLayout(self)
        grid = QGridLayout()
        outer.addLayout(grid)
        self.pictures = {}
        for col, (key, caption) in enumerate((("f64", "float64 (the exact picture)"),
                                              ("f32", "float32"),
                                              ("marked", "where float32 departs"))):
            head = QLabel(caption)
            head.setAlignment(Qt.AlignmentFlag.AlignCenter)
            pic = QLabel()
            pic.setAlignment(Qt.AlignmentFlag.AlignCenter)
            pic.setMinimumSize(160, 90)
            grid.addWidget(head, 0, col)
            grid.addWidget(pic, 1, col)
            self.pictures[key] = pic
        self.summary = QLabel("Comparing…")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        outer.addWidget(self.summary)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.refresh_btn = buttons.addButton("Compare this view again",
                                             QDialogButtonBox.ButtonRole.ActionRole)
        self.refresh_btn.setToolTip("Draw the view as it is now both ways")
        buttons.rejected.connect(self.close)
        self.refresh_btn.clicked.connect(self.refresh_requested)
        outer.addWidget(buttons)
        self.comparison = None

    def busy(self):
        self.summary.setText("Drawing the frame in float64 and in float32…")

    def failed(self, message: str):
        self.summary.setText(message)

    def show_comparison(self, comparison):
        self.comparison = comparison
        for key, rgba in (("f64", comparison.rgba64), ("f32", comparison.rgba32),
                          ("marked", comparison.marked())):
            pix = _pixmap(rgba)
            # within a square box, portrait or landscape, and never smaller than the picture: a
            # QLabel squeezed by the layout crops its pixmap (a portrait view lost its ends)
            if pix.width() > PANEL_PIXELS or pix.height() > PANEL_PIXELS:
                pix = pix.scaled(PANEL_PIXELS, PANEL_PIXELS, Qt.AspectRatioMode.KeepAspectRatio,
                                 Qt.TransformationMode.FastTransformation)
            self.pictures[key].setPixmap(pix)
            self.pictures[key].setMinimumSize(pix.size())
        self.summary.setText(summary_text(comparison))
        self.layout().activate()        # the new pictures' sizes first, then the dialog's
        self.adjustSize()


class NumberTypeControls:
    """Ties the box and the comparison to a MandelbrotView (its model, scheduler and status bar)."""

    def __init__(self, view):
        self.view = view
        self.box = NumberTypeBox()
        view.controls.layout().addWidget(self.box)
        self.dialog: ComparisonDialog | None = None
        self._shown = None
        self._label = "float64"
        self.box.changed.connect(self.set_wanted)
        self.box.compare_requested.connect(self.compare)
        shortcut = QShortcut(QKeySequence(COMPARE_SHORTCUT), view)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.compare)
        self.box.prove_changed.connect(self.set_prove)
        prove = QShortcut(QKeySequence(PROVE_SHORTCUT), view)
        prove.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        prove.activated.connect(self.box.prove.toggle)
        self.refresh(announce=False)

    def set_prove(self, on: bool):
        """Deep frames prove their doubtful pixels (or mark them): the view is drawn again."""
        self.view.model.prove_pixels = bool(on)
        self.view.status_message.emit(
            "Deep frames: the pixels float64 cannot place are iterated in double-double"
            if on else "Deep frames: the pixels float64 cannot place are marked", 4000)
        self.view.request_render()

    def set_wanted(self, wanted: str):
        self.view.model.number_type = wanted
        self.refresh(announce=True)
        self.view._update_readout()     # it names the type in use
        self.view.request_render()

    def refresh(self, announce: bool = True):
        """Show the type the current camera's frames use, and why; say a change in the status
        bar."""
        model = self.view.model
        s = model.camera.state
        w = max(1, self.view.canvas_size()[0])
        rates = device_rates(model.backend)
        if model.format != "float64":
            spacing_log2 = log10_of(parse_width(s.width)) * math.log2(10.0) - math.log2(w)
            choice = choose_deep(model.format, spacing_log2, rates, model.number_type)
        else:
            choice = choose(s.center_re, s.center_im, s.width, w, rates, model.number_type,
                            model.formula)
        shown = (choice.number_type, choice.reason)
        self.box.show_choice(choice.number_type, choice.reason, not choice.forced,
                             deep=model.format != "float64")
        self._label = model.format if model.format != "float64" else choice.number_type
        if model.format != "float64" and choice.number_type == "float32":
            self._label += ", float32 deltas"
        # the panel's number-format line and the readout name the type in use too
        self.view.controls.set_number_format(self._label, choice.reason)
        if announce and self._shown is not None and shown[0] != self._shown[0]:
            self.view.status_message.emit(f"Number type: {shown[1]}", 5000)
        self._shown = shown

    def label(self) -> str:
        """The arithmetic of the current camera's frames in a few words: the number format, and
        float32 where it is used."""
        return self._label

    # ---- the comparison ---------------------------------------------------------------------
    def compare(self):
        view = self.view
        if self.dialog is None:
            self.dialog = ComparisonDialog(view)
            self.dialog.refresh_requested.connect(self.compare)
        self.dialog.show()
        self.dialog.raise_()
        w, h = view.canvas_size()
        if view.model.formula != "mandelbrot":     # float32 kernels iterate z^2 + c only
            self.dialog.failed("float32 draws the Mandelbrot set only: there is nothing to "
                               "compare for this formula")
            return
        try:
            req = view.model.build_request(max(1, w), max(1, h))
            req.validate()
        except ValueError as exc:
            self.dialog.failed(f"This view cannot be drawn: {exc}")
            return
        self.dialog.busy()
        view.submit(NumberTypeComparison(req, view.backend), key=view.side_key("compare"),
                    replace_running=True)

    def done(self, comparison):
        if self.dialog is None or comparison is None or not hasattr(comparison, "departs"):
            return
        self.dialog.show_comparison(comparison)
        self.view.status_message.emit(
            f"float32 departs from float64 on {comparison.departed:,} pixels "
            f"({100 * comparison.departed_fraction:.3g} %)", 6000)

    def failed(self, message: str | None):
        if self.dialog is not None:
            self.dialog.failed("The comparison was cancelled." if message is None
                               else f"The comparison failed: {message}")

    def close(self):
        if self.dialog is not None:
            self.dialog.close()
