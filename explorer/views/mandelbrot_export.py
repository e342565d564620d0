"""The export dialog: an output size independent of the window, and a file to write. The path
and size are checked before the dialog closes (the problem beside its field, the dialog still
open), a large output is asked about with its size, a file that exists before it is replaced, and
the next dialog of the session opens with what was typed last."""
from __future__ import annotations

import os

from PyQt6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                             QHBoxLayout, QLineEdit, QPushButton, QSpinBox, QWidget)

from services.files import check_export_path, ensure_host_fits

from .export_fields import (confirm_large_output, confirm_replace, error_label, remember_folder,
                            show_error, start_path, sync_size_list)

DEFAULT_SIZE = (3840, 2160)
PRESETS = (("4K UHD 3840×2160", (3840, 2160)), ("Full HD 1920×1080", (1920, 1080)),
           ("8K 7680×4320", (7680, 4320)), ("Square 4096×4096", (4096, 4096)),
           ("Window size", None), ("Custom", None))
MAX_SIDE = 65_535
_last: dict = {}        # this session's last choice: the next dialog opens with it


def gpu_choices(gpus) -> list[tuple[str, tuple[int, ...] | None]]:
    """The GPU picker's entries for the GPUs found (kernels.spread.GpuInfo): every GPU on its own
    and, with two or more, all of them (listed first: the fastest way to a large picture)."""
    out = [(f"GPU {g}", (g.index,)) for g in gpus]
    if len(gpus) > 1:
        out.insert(0, (f"All {len(gpus)} GPUs", tuple(g.index for g in gpus)))
    return out


class GpuPicker(QComboBox):
    """"Render on": every GPU found (kernels.spread.GpuInfo) on its own and, with two or more, all
    of them; disabled with a note on the CPU. `tip` says what the chosen GPUs share out."""

    def __init__(self, gpus, tip: str):
        super().__init__()
        self._choices = gpu_choices(list(gpus))
        for label, _ in self._choices:
            self.addItem(label)
        if not self._choices:
            self.addItem("The CPU (no GPU in use)")
            self.setEnabled(False)
        self.setToolTip(tip)

    def chosen(self) -> tuple[int, ...] | None:
        """The GPU indices picked (None: no GPU, or the view's own device)."""
        return self._choices[self.currentIndex()][1] if self._choices else None


class ExportDialog(QDialog):
    def __init__(self, parent=None, window_size=(1920, 1080), path: str | None = None, gpus=()):
        super().__init__(parent)
        self.setWindowTitle("Export Mandelbrot picture")
        self._window_size = window_size
        self._browsed = None        # the path Browse… chose (its dialog asked about replacing)
        form = QFormLayout(self)
        self.preset = QComboBox()
        for label, _ in PRESETS:
            self.preset.addItem(label)
        self.preset.setToolTip("Common picture sizes; the window's size does not limit the export. "
                               "The picture holds all of the view: a shape other than the "
                               "window's adds to its sides or to its top and bottom")
        form.addRow("Size", self.preset)
        self.w, self.h = QSpinBox(), QSpinBox()
        for spin, tip in ((self.w, "Width in pixels"), (self.h, "Height in pixels")):
            spin.setRange(1, MAX_SIDE)
            spin.setGroupSeparatorShown(True)
            spin.setToolTip(tip)
        self.w.setValue(DEFAULT_SIZE[0])
        self.h.setValue(DEFAULT_SIZE[1])
        row = QHBoxLayout()
        row.addWidget(self.w)
        row.addWidget(self.h)
        box = QWidget()
        box.setLayout(row)
        row.setContentsMargins(0, 0, 0, 0)
        form.addRow("Width × height", box)
        self.size_error = error_label()
        form.addRow("", self.size_error)
        self.path = QLineEdit(path or _last.get("path") or start_path("mandelbrot.png"))
        self.path.setToolTip(".png writes the coloured picture; .npy the raw smooth iteration counts")
        # room for a whole home-folder path: a clipped one hides which folder it writes to
        self.path.setMinimumWidth(self.path.fontMetrics().horizontalAdvance("x" * 40))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        prow = QHBoxLayout()
        prow.addWidget(self.path, 1)
        prow.addWidget(browse)
        pbox = QWidget()
        pbox.setLayout(prow)
        prow.setContentsMargins(0, 0, 0, 0)
        form.addRow("File", pbox)
        self.path_error = error_label()
        form.addRow("", self.path_error)
        self.gpus = GpuPicker(gpus, "Where the picture is rendered: the bands of the picture are "
                                    "shared out between the chosen GPUs, one worker per GPU")
        form.addRow("Render on", self.gpus)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.preset.currentIndexChanged.connect(self._preset)
        w0, h0 = _last.get("size", DEFAULT_SIZE)
        self.w.setValue(int(w0))
        self.h.setValue(int(h0))
        # the list shows the preset the typed size matches, or Custom
        sync_size_list(self.preset, [(label, window_size if label == "Window size" else size)
                                     for label, size in PRESETS], self.w, self.h)
        self.path.textEdited.connect(lambda *_: show_error(self.path_error, None))

    def problem(self) -> tuple[str, str] | None:
        """("path" | "size", why) when the export cannot be written as chosen, else None."""
        path, (w, h), _ = self.choice()
        try:
            check_export_path(path)
        except ValueError as exc:
            return "path", str(exc)
        if path.lower().endswith(".png"):
            try:
                ensure_host_fits(w * h * 4, f"a {w}×{h} PNG")
            except ValueError as exc:
                return "size", str(exc)
        return None

    def accept(self):
        """Close only for an export that can start: a problem is shown beside its field."""
        found = self.problem()
        show_error(self.path_error, found[1] if found and found[0] == "path" else None)
        show_error(self.size_error, found[1] if found and found[0] == "size" else None)
        if found:
            return
        path, (w, h), _ = self.choice()
        # the file dialog of Browse… has asked already about the file it chose
        if path != self._browsed and not confirm_replace(self, path):
            return
        if not confirm_large_output(self, w, h, path):
            return
        _last.update(path=path, size=(w, h))
        remember_folder(path)
        super().accept()

    def reject(self):
        path, size, _ = self.choice()          # what was typed is there next time too
        _last.update(path=path or _last.get("path"), size=size)
        super().reject()

    def _preset(self, i: int):
        label, size = PRESETS[i]
        if label == "Window size":
            size = self._window_size
        if size:
            self.w.setValue(int(size[0]))
            self.h.setValue(int(size[1]))

    def _browse(self):
        path, _ = QFileDialog.getSaveFileName(self, "Export to", self.path.text(),
                                              "PNG picture (*.png);;Raw values (*.npy)")
        if path:
            self.path.setText(path)
            self._browsed = self.choice()[0]
            show_error(self.path_error, None)

    def choice(self):
        """(path, (w, h), GPU indices or None for the view's own device)."""
        path = os.path.expanduser(self.path.text().strip())
        if path and not path.lower().endswith((".png", ".npy")):
            path += ".png"
        return path, (self.w.value(), self.h.value()), self.gpus.chosen()


def ask_export(parent, window_size, gpus=()):
    """(path, (w, h), GPU indices or None) or None when the user cancels."""
    dlg = ExportDialog(parent, window_size, gpus=gpus)
    if dlg.exec() != QDialog.DialogCode.Accepted:
        return None
    path, size, chosen = dlg.choice()
    return (path, size, chosen) if path else None
