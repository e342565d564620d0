"""What the export dialogs share: where file dialogs start (the folder last used in this session,
else the user's Pictures folder, else home: never the folder the app was started from), a size
list that follows typed sizes, an error shown beside the field that caused it, the size a
large output will take, asked about before it is written, and a file it would replace.
"""
from __future__ import annotations

import os

from PyQt6.QtCore import QStandardPaths
from PyQt6.QtWidgets import QComboBox, QLabel, QMessageBox, QProgressDialog, QSpinBox

from services.files import human_bytes

LARGE_OUTPUT_BYTES = 256 * 2 ** 20     # from this size on an output is announced first (CLI.md)
_last_folder: str | None = None        # the folder of the last file chosen or written, this session


def start_folder() -> str:
    """The folder a file dialog opens in."""
    if _last_folder and os.path.isdir(_last_folder):
        return _last_folder
    pictures = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.PicturesLocation)
    if pictures and os.path.isdir(pictures):
        return pictures
    return os.path.expanduser("~")


def start_path(name: str) -> str:
    """A file called `name` in start_folder()."""
    return os.path.join(start_folder(), name)


def remember_folder(path: str) -> None:
    """The next file dialog starts where `path` is (a file or a folder)."""
    global _last_folder
    if path:
        folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        if os.path.isdir(folder):
            _last_folder = folder


def sync_size_list(combo: QComboBox, presets, w: QSpinBox, h: QSpinBox, custom: str = "Custom"):
    """Keep `combo` (labels of `presets`: (label, (w, h) or None)) showing the entry that matches
    the typed size, or `custom` when none does."""
    def follow(*_):
        size = (w.value(), h.value())
        index = next((i for i, (_, s) in enumerate(presets) if s is not None and tuple(s) == size),
                     next(i for i, (label, _) in enumerate(presets) if label == custom))
        if combo.currentIndex() != index:
            blocked = combo.blockSignals(True)
            combo.setCurrentIndex(index)
            combo.blockSignals(blocked)
    w.valueChanged.connect(follow)
    h.valueChanged.connect(follow)
    follow()
    return follow


class _WrappedLabel(QLabel):
    """A word-wrapped label as tall as its text at the width it was given: a form layout sizes
    a wrapped QLabel for a narrower width than it gets, leaving blank lines around the text."""

    def sizeHint(self):
        hint = super().sizeHint()
        if self.width() > hint.width():
            hint.setHeight(self.heightForWidth(self.width()))
        return hint

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()       # the height for the new width


def error_label() -> QLabel:
    """A red, wrapped line for a field's problem; hidden until there is one."""
    label = _WrappedLabel()
    label.setWordWrap(True)
    label.setStyleSheet("color: #c62828")
    label.hide()
    return label


def show_error(label: QLabel, text: str | None) -> None:
    label.setText(text or "")
    label.setVisible(bool(text))


def output_bytes(w: int, h: int, path: str) -> int:
    """What an output takes: a .npy's float64 values on disk, a .png's RGBA picture in memory
    while it is assembled (the file itself is smaller)."""
    return w * h * 8 + 128 if path.lower().endswith(".npy") else w * h * 4


def confirm_large_output(parent, w: int, h: int, path: str) -> bool:
    """Ask before a large output (LARGE_OUTPUT_BYTES or more); True to go on."""
    n = output_bytes(w, h, path)
    if n < LARGE_OUTPUT_BYTES:
        return True
    what = (f"a {human_bytes(n)} file ({w}×{h} float64 values)" if path.lower().endswith(".npy")
            else f"a {human_bytes(n)} picture in memory ({w}×{h} RGBA; the PNG file is smaller)")
    answer = QMessageBox.question(parent, "Large export", f"This export writes {what} to {path}. "
                                                          "Go on?")
    return answer == QMessageBox.StandardButton.Yes


def confirm_replace(parent, path: str) -> bool:
    """Ask before an export replaces a file that exists (a typed name gives no warning of its
    own); True to go on, and at once when nothing is there."""
    if not os.path.isfile(path):
        return True
    import datetime
    st = os.stat(path)
    when = datetime.datetime.fromtimestamp(st.st_mtime).strftime("%Y-%m-%d %H:%M")
    answer = QMessageBox.question(
        parent, "Replace file?", f"{path} already exists ({human_bytes(st.st_size)}, written "
        f"{when}). Replace it?", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes


def open_progress(parent, text: str, title: str, on_cancel) -> QProgressDialog:
    """An export's progress dialog, shown now: 0 to 1000, kept open at the end (the export
    closes it with close_progress), its Cancel reaching `on_cancel`."""
    dlg = QProgressDialog(text, "Cancel", 0, 1000, parent)
    dlg.setWindowTitle(title)
    dlg.setMinimumDuration(0)
    dlg.setAutoClose(False)
    dlg.setAutoReset(False)
    dlg.canceled.connect(on_cancel)
    dlg.setValue(0)
    dlg.show()
    return dlg


def close_progress(dialog, on_cancel) -> None:
    """Close an export's progress dialog for good: its Cancel no longer reaches `on_cancel`."""
    dialog.canceled.disconnect(on_cancel)
    dialog.close()
    dialog.deleteLater()
