"""The zoom movie's controller in the window: MovieExporter runs one movie at a time on the
window's scheduler (services.movie_jobs) with a progress dialog that shows the time left and a
Cancel button, and the status bar saying what happens. The dialog that asks for the movie is
mandelbrot_movie.py's.
"""
from __future__ import annotations

import time

from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtWidgets import QProgressDialog

from kernels.scheduler import Delivered, Failed, Progress, Stopped
from services.movie import MovieError, MovieSpec, prepare
from services.movie_jobs import HANDLERS, MovieExport, MovieMade, MovieProgress
from services.movie_parts import Parts, parts_dir
from services.movie_writer import default_lanes

from .export_fields import close_progress, open_progress

MOVIE_KEY = "mandelbrot:movie"


def eta_text(elapsed_s: float, done: int, total: int) -> str:
    """'about 1:05 left' from the pace so far, or '' before there is a pace."""
    if done <= 0 or elapsed_s <= 0 or done >= total:
        return ""
    left = elapsed_s / done * (total - done)
    m, s = divmod(int(round(left)), 60)
    return f"about {m}:{s:02d} left"


class MovieExporter(QObject):
    """Runs one movie at a time on the window's scheduler and shows its progress."""
    finished = pyqtSignal(str)       # the movie's path
    failed = pyqtSignal(str)         # a plain message, or "cancelled"

    def __init__(self, scheduler, parent_widget=None, status=None, error=None):
        super().__init__(parent_widget)
        self.scheduler = scheduler
        self.parent_widget = parent_widget
        self.status = status or (lambda text, ms=0: None)
        self.error = error or (lambda text: None)
        for request_type, handler in HANDLERS.items():
            scheduler.register(request_type, handler)
        scheduler.event.connect(self._on_event)
        self.generation = None
        self.dialog: QProgressDialog | None = None
        self.spec: MovieSpec | None = None
        self._t0 = 0.0
        self._first = 0          # frames done when this run started (resumed ones)

    @property
    def running(self) -> bool:
        return self.generation is not None

    def start(self, spec: MovieSpec, backend, *, restart: bool = False, show_progress=True,
              gpus: tuple[int, ...] | None = None) -> bool:
        """Check the movie (one line in the status bar when it cannot be made) and submit it."""
        if self.running:
            self.status("A movie is already being made; cancel it first", 6000)
            return False
        try:
            movie = prepare(spec)
            Parts(movie, default_lanes(spec.kind, spec.size)).check(restart)
        except MovieError as exc:
            self.status(f"Cannot export the movie: {exc}", 8000)
            self.failed.emit(str(exc))
            return False
        self.spec = spec
        self.generation = self.scheduler.submit(
            MOVIE_KEY, MovieExport(spec, backend, restart, gpus=tuple(gpus) if gpus else None))
        self._t0 = time.perf_counter()
        self._first = -1
        w, h = spec.size
        if show_progress:
            self.dialog = open_progress(self.parent_widget,
                                        f"Rendering {spec.frames} frames of {w}×{h}…",
                                        "Export zoom movie", self.cancel)
        self.status(f"Making a {spec.seconds:g} s zoom movie ({w}×{h}, {spec.fps} fps) in "
                    f"{spec.out}…", 0)
        return True

    def cancel(self):
        if not self.running:
            return
        self.scheduler.cancel(MOVIE_KEY)       # it stops at its next frame
        self._end(f"Movie cancelled: {self._kept()}; export it again to resume", "cancelled")

    def _kept(self) -> str:
        spec = self.spec
        if spec.kind == "png":
            return "the frames written so far are kept"
        return f"the finished segments are kept in {parts_dir(spec.out)}"

    def _end(self, message: str, failure: str | None = None):
        self.generation = None
        self._close_dialog()
        if failure is None:
            self.status(message, 8000)
        elif failure == "cancelled":
            self.status(message, 8000)
            self.failed.emit("cancelled")
        else:
            self.error(message)
            self.failed.emit(failure)

    def _close_dialog(self):
        if self.dialog is not None:
            close_progress(self.dialog, self.cancel)
            self.dialog = None

    def _on_event(self, ev):
        if getattr(ev, "key", None) != MOVIE_KEY or ev.generation != self.generation:
            return
        if isinstance(ev, Progress) and isinstance(ev.item, MovieProgress):
            self._progress(ev.item)
        elif isinstance(ev, Delivered) and isinstance(ev.result, MovieMade):
            made = ev.result
            self._end(f"Movie written: {made.path} ({made.frames} frames in {made.seconds:.1f} s)")
            self.finished.emit(made.path)
        elif isinstance(ev, Failed):
            self._end(f"The movie failed: {ev.message}; {self._kept()}", ev.message)
        elif isinstance(ev, Stopped):
            self._end(f"Movie cancelled: {self._kept()}", "cancelled")

    def _progress(self, p: MovieProgress):
        if self._first < 0:          # the first report: what an earlier run had finished
            self._first = p.done
            self._t0 = time.perf_counter()
        eta = eta_text(time.perf_counter() - self._t0, p.done - self._first, p.total - self._first)
        if p.stage == "joining":
            text = f"Putting {p.total} frames together in {self.spec.out}…"
        elif p.stage == "keyframes":     # a keyframe movie's keyframes (movie_keyframe_jobs.py)
            text = f"Drawing keyframes; frame {p.done:,} of {p.total:,} encoded"
        else:
            text = f"Frame {p.done:,} of {p.total:,}" + (f" · {eta}" if eta else "")
            if p.resumed:
                text += f" (resumed after {p.resumed:,})"
        if self.dialog is not None:
            self.dialog.setValue(int(p.fraction * 1000))
            self.dialog.setLabelText(text)
        self.status(f"Zoom movie: {text}", 0)

    def shutdown(self):
        if self.running:
            self.scheduler.cancel(MOVIE_KEY)
        self._close_dialog()
