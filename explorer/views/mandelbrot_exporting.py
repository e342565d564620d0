"""A picture export of the Mandelbrot view running: the job the model builds goes to the worker
under the view's "export" key (services.export_jobs renders it in strips between the view's
frames), with a progress dialog whose Cancel stops it, and the status bar saying how it ended.
"""
from __future__ import annotations

from PyQt6.QtWidgets import QProgressDialog

from kernels.scheduler import Exported, ExportProgress

from . import mandelbrot_export
from .export_fields import close_progress, open_progress


class ExportRunner:
    """One export at a time for a MandelbrotView; the view's export_finished(path) and
    export_failed(message or "cancelled") tell how it ended."""

    def __init__(self, view):
        self.view = view
        self.dialog: QProgressDialog | None = None    # the progress dialog while one is on show

    @property
    def key(self) -> str:
        return self.view.side_key("export")

    def ask(self):
        """The export dialog (size, file, GPUs), then the export it asks for."""
        view = self.view
        choice = mandelbrot_export.ask_export(view, view.canvas_size(), gpus=view.export_gpus())
        if choice is not None:
            path, (w, h), gpus = choice
            self.start(path, w, h, gpus=gpus)

    def start(self, path: str, w: int, h: int, *, show_progress: bool = True,
              gpus: tuple[int, ...] | None = None) -> bool:
        view, model = self.view, self.view.model
        try:
            job = model.export_job(path, w, h, gpus)
        except ValueError as exc:
            view.status_message.emit(f"Cannot export: {exc}", 6000)
            view.notice.emit(f"Cannot export: {exc}")
            view.export_failed.emit(str(exc))
            return False
        if model.exporting:
            view.status_message.emit("An export is already running; cancel it first", 6000)
            return False
        view.submit(job, key=self.key)
        model.exporting = True
        if show_progress:
            self.dialog = open_progress(view, f"Rendering {w}×{h}…", "Export", self.cancel)
        view.status_message.emit(f"Exporting {w}×{h} to {path}…", 0)
        return True

    def cancel(self):
        # the job stops at its next tile; the user need not wait for that
        self.view.cancel(self.key)
        self._ended()
        self._cancelled()

    def _cancelled(self):
        self.view.status_message.emit("Export cancelled", 4000)
        self.view.export_failed.emit("cancelled")

    def _ended(self):
        self.view.model.exporting = False
        self.close_dialog()

    def close_dialog(self):
        if self.dialog is not None:
            close_progress(self.dialog, self.cancel)
            self.dialog = None

    def on_result(self, result):
        """A progress item or the end of the export job."""
        if isinstance(result, ExportProgress):
            if self.dialog is not None:
                self.dialog.setValue(int(max(0.0, min(1.0, result.fraction)) * 1000))
        elif isinstance(result, Exported):
            self._ended()
            self.view.status_message.emit(f"Exported {result.path}", 5000)
            self.view.notice.emit(f"Exported {result.path}")    # kept: frames' progress follows
            self.view.export_finished.emit(result.path)

    def on_failed(self, message: str | None):
        """The job failed (message) or was cancelled (None)."""
        self._ended()
        if message is None:
            self._cancelled()
        else:
            self.view.error_message.emit(f"Export failed: {message}")
            self.view.export_failed.emit(message)
