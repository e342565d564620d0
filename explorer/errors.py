"""Unexpected errors: logged and shown in a dialog instead of aborting the app; a Ctrl+C that
reaches Python code closes the window instead of printing a traceback."""
from __future__ import annotations

import logging
import sys
import traceback

log = logging.getLogger("gpu_explorer")


def format_exception(exc_type, exc, tb) -> tuple[str, str]:
    """(one plain line for the user, the full traceback for the log and the details box)."""
    summary = f"{exc_type.__name__}: {exc}" if str(exc) else exc_type.__name__
    return summary, "".join(traceback.format_exception(exc_type, exc, tb))


def install_excepthook(parent_getter=lambda: None):
    """Route uncaught exceptions (including those raised in Qt slots) to the log and a dialog."""
    def hook(exc_type, exc, tb):
        if issubclass(exc_type, KeyboardInterrupt):
            # Ctrl+C that reached Python code (explorer.app normally turns it into a close):
            # close the window as its close button would, never a traceback
            log.info("interrupted (Ctrl+C): closing the window")
            window = parent_getter()
            if window is not None:
                from PyQt6.QtCore import QTimer
                QTimer.singleShot(0, window.close)
            return
        summary, details = format_exception(exc_type, exc, tb)
        log.error("unexpected error\n%s", details)
        try:
            from PyQt6.QtCore import Qt
            from PyQt6.QtWidgets import QApplication, QMessageBox
            if QApplication.instance() is None:
                return
            box = QMessageBox(QMessageBox.Icon.Critical, "Unexpected error",
                              f"Something went wrong, but the app keeps running.\n\n{summary}",
                              parent=parent_getter())
            box.setDetailedText(details)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()  # not exec(): a modal loop inside an error handler can re-enter it
        except Exception:
            sys.__excepthook__(exc_type, exc, tb)
    sys.excepthook = hook
    return hook
