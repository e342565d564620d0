"""File → Export zoom movie…: the dialog (size, frame rate, length, codec, direction, file) and
the controller that makes the movie through the window's scheduler (services.movie_jobs), with a
progress bar that shows the time left and a Cancel button, and the status bar saying what happens.

The movie is the one services.movie makes for the command line too: the same course, the same parts
folder, so an export that was cancelled resumes when started again with the same settings. It zooms
in from the whole set to the Mandelbrot view's current place (or out from it) with the view's
colouring: palette, density, offset, interior colour, and the colour mapping when one is chosen (on
"auto", frames are coloured as their depth asks, as the view does).
"""
from __future__ import annotations

import os
import time

from PyQt6.QtCore import QObject, Qt, pyqtSignal
from PyQt6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFileDialog,
                             QFormLayout, QHBoxLayout, QLineEdit, QMessageBox, QProgressDialog,
                             QPushButton, QSpinBox, QWidget)

from kernels.scheduler import Delivered, Failed, Progress, Stopped
from services.movie import (
    DEFAULT_FPS,
    DEFAULT_MOVIE_SECONDS,
    MAX_FPS,
    MovieError,
    MovieSpec,
    OtherMovie,
    prepare,
)
from services.movie_jobs import HANDLERS, MovieExport, MovieMade, MovieProgress
from services.movie_parts import Parts, parts_dir
from services.movie_writer import default_lanes

from .export_fields import error_label, remember_folder, show_error, start_path, sync_size_list

MOVIE_KEY = "mandelbrot:movie"
SIZES = (("Full HD 1920×1080", (1920, 1080)), ("HD 1280×720", (1280, 720)),
         ("4K UHD 3840×2160", (3840, 2160)), ("Small 640×360", (640, 360)), ("Custom", None))
# codec entries: label, --codec name (None: a PNG per frame)
CODECS = (("H.264 (libx264)", "h264"), ("H.265 (libx265)", "h265"),
          ("H.264 on the GPU (NVENC)", "h264_nvenc"), ("H.265 on the GPU (NVENC)", "hevc_nvenc"),
          ("PNG frames (one file per frame)", None))
DIRECTIONS = (("In: from the whole set to here", "in"), ("Out: from here to the whole set", "out"))
MAX_SIDE = 8192
MAX_SECONDS = 3600.0
# the size each codec is tried at when the dialog opens (a real encoder, one frame)
PROBE_SIZE = (256, 144)
_codec_problems: dict[str, str | None] = {}
_last: dict = {}        # this session's last choice: the next dialog opens with it


def codec_problem(codec: str | None) -> str | None:
    """Why `codec` cannot encode here (PyAV missing, no such encoder, NVENC without a GPU that
    has one), or None; tried once per process."""
    if codec is None:
        return None
    if codec not in _codec_problems:
        from services.video import CodecUnavailable, check_codec, pyav_missing
        why = pyav_missing()
        if why is None:
            try:
                check_codec(codec, *PROBE_SIZE, 30)
            except (CodecUnavailable, ValueError) as exc:
                why = str(exc)
        _codec_problems[codec] = why
    return _codec_problems[codec]


def place_of(view) -> dict:
    """The Mandelbrot view's place and colouring as a MovieSpec's fields (from its model)."""
    return view.model.movie_place()


def png_pattern(path: str) -> str:
    """A file name for a PNG sequence from whatever the user typed: DIR/NAME%05d.png."""
    base, ext = os.path.splitext(path)
    if "%" in os.path.basename(base):
        return base + ".png"
    return base + "%05d.png"


def video_path(path: str) -> str:
    base, ext = os.path.splitext(path)
    if ext.lower() in (".mp4", ".mkv", ".mov"):
        return path
    return base.replace("%05d", "") + ".mp4"


class MovieDialog(QDialog):
    """`check(choice) -> (field, why) | None` runs when Export is pressed: a problem ("path" or
    "size") is shown beside that field and the dialog stays open with what was typed."""

    def __init__(self, parent=None, path: str | None = None, gpus=(), check=None):
        super().__init__(parent)
        self._check = check
        self.setWindowTitle("Export zoom movie")
        form = QFormLayout(self)
        self.preset = QComboBox()
        for label, _ in SIZES:
            self.preset.addItem(label)
        form.addRow("Size", self.preset)
        self.w, self.h = QSpinBox(), QSpinBox()
        for spin, tip in ((self.w, "Width in pixels (even for a video)"),
                          (self.h, "Height in pixels (even for a video)")):
            spin.setRange(2, MAX_SIDE)
            spin.setGroupSeparatorShown(True)
            spin.setToolTip(tip)
        self.w.setValue(SIZES[0][1][0])
        self.h.setValue(SIZES[0][1][1])
        form.addRow("Width × height", _row(self.w, self.h))
        self.size_error = error_label()
        form.addRow("", self.size_error)
        self.fps = QSpinBox()
        self.fps.setRange(1, MAX_FPS)
        self.fps.setValue(DEFAULT_FPS)
        self.fps.setSuffix(" frames/s")
        form.addRow("Frame rate", self.fps)
        self.seconds = QDoubleSpinBox()
        self.seconds.setRange(0.1, MAX_SECONDS)
        self.seconds.setDecimals(1)
        self.seconds.setValue(DEFAULT_MOVIE_SECONDS)
        self.seconds.setSuffix(" s")
        form.addRow("Length", self.seconds)
        self.direction = QComboBox()
        for label, _ in DIRECTIONS:
            self.direction.addItem(label)
        self.direction.setToolTip("The zoom is exponential: every frame magnifies by the same "
                                  "factor")
        form.addRow("Zoom", self.direction)
        self.codec = QComboBox()
        for i, (label, codec) in enumerate(CODECS):
            why = codec_problem(codec)
            self.codec.addItem(label if not why else f"{label} (unavailable)", codec)
            if why:      # listed with the reason, as the other views list what is missing
                self.codec.model().item(i).setEnabled(False)
                self.codec.setItemData(i, f"unavailable here: {why}", Qt.ItemDataRole.ToolTipRole)
        form.addRow("Codec", self.codec)
        self.path = QLineEdit(path or start_path("mandelbrot-zoom.mp4"))
        self.path.setToolTip(".mp4, .mkv or .mov for a video; PNG frames go to NAME%05d.png")
        self.path.setMinimumWidth(self.path.fontMetrics().horizontalAdvance("x" * 48))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        form.addRow("File", _row(self.path, browse, stretch_first=True))
        self.path_error = error_label()
        form.addRow("", self.path_error)
        from .mandelbrot_export import GpuPicker
        self.gpus = GpuPicker(gpus, "Where the frames are rendered: shared out between the chosen "
                                    "GPUs, one worker per GPU, while the encoders run on the CPU's "
                                    "cores")
        form.addRow("Render on", self.gpus)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.preset.currentIndexChanged.connect(self._preset)
        self.codec.currentIndexChanged.connect(self._codec_changed)
        if codec_problem(CODECS[0][1]):         # no PyAV: PNG frames are what is left
            self.codec.setCurrentIndex(len(CODECS) - 1)
        if _last and path is None:
            self._restore(_last)
        sync_size_list(self.preset, SIZES, self.w, self.h)
        self.path.textEdited.connect(lambda *_: show_error(self.path_error, None))

    def _restore(self, last: dict):
        """What was typed in this session's last movie dialog."""
        self.w.setValue(last["size"][0])
        self.h.setValue(last["size"][1])
        self.fps.setValue(last["fps"])
        self.seconds.setValue(last["seconds"])
        self.direction.setCurrentIndex([d for _, d in DIRECTIONS].index(last["zoom"]))
        i = self.codec.findData(last["codec"])
        if i >= 0 and self.codec.model().item(i).isEnabled():
            self.codec.setCurrentIndex(i)
        self.path.setText(last["out"])

    def accept(self):
        choice = self.choice()
        found = self._check(choice) if self._check is not None else None
        show_error(self.path_error, found[1] if found and found[0] == "path" else None)
        show_error(self.size_error, found[1] if found and found[0] == "size" else None)
        if found:
            return
        _last.update(choice)
        remember_folder(choice["out"])
        super().accept()

    def reject(self):
        _last.update(self.choice())             # what was typed is there next time too
        super().reject()

    def _preset(self, i: int):
        size = SIZES[i][1]
        if size:
            self.w.setValue(size[0])
            self.h.setValue(size[1])

    def _codec_changed(self, i: int):
        text = self.path.text().strip()
        if text:
            self.path.setText(png_pattern(text) if CODECS[i][1] is None else video_path(text))

    def _browse(self):
        png = self.codec.currentData() is None
        path, _ = QFileDialog.getSaveFileName(
            self, "Export movie to", self.path.text(),
            "PNG frames (*.png)" if png else "Video (*.mp4 *.mkv *.mov)")
        if path:
            self.path.setText(png_pattern(path) if png else video_path(path))
            show_error(self.path_error, None)

    def chosen_gpus(self) -> tuple[int, ...] | None:
        """The GPUs picked (None: the view's own device, between the view's frames)."""
        return self.gpus.chosen()

    def choice(self) -> dict:
        """The MovieSpec fields the dialog sets."""
        codec = self.codec.currentData()
        path = os.path.expanduser(self.path.text().strip())
        path = png_pattern(path) if codec is None else video_path(path)
        return {"out": path, "size": (self.w.value(), self.h.value()), "fps": self.fps.value(),
                "seconds": float(self.seconds.value()),
                "zoom": DIRECTIONS[self.direction.currentIndex()][1], "codec": codec}


def _row(*widgets, stretch_first=False) -> QWidget:
    row = QHBoxLayout()
    for i, w in enumerate(widgets):
        row.addWidget(w, 1 if stretch_first and i == 0 else 0)
    row.setContentsMargins(0, 0, 0, 0)
    box = QWidget()
    box.setLayout(row)
    return box


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
            dlg = QProgressDialog(f"Rendering {spec.frames} frames of {w}×{h}…", "Cancel", 0, 1000,
                                  self.parent_widget)
            dlg.setWindowTitle("Export zoom movie")
            dlg.setMinimumDuration(0)
            dlg.setAutoClose(False)
            dlg.setAutoReset(False)
            dlg.canceled.connect(self.cancel)
            dlg.setValue(0)
            dlg.show()
            self.dialog = dlg
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
            self.dialog.canceled.disconnect(self.cancel)
            self.dialog.close()
            self.dialog.deleteLater()
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


def movie_problem(choice: dict, view) -> tuple[str, str] | None:
    """("path" | "size", why) when the movie the dialog describes cannot be made, checked before
    the dialog closes; parts of another movie are asked about afterwards."""
    from services.files import check_writable
    out = choice["out"]
    try:
        check_writable(out)
    except ValueError as exc:
        return "path", str(exc)
    w, h = choice["size"]
    if choice["codec"] is not None and (w % 2 or h % 2):
        return "size", f"a video needs an even width and height, not {w}×{h}"
    try:
        spec = MovieSpec(**choice, **place_of(view))
        Parts(prepare(spec, open_encoder=False), default_lanes(spec.kind, spec.size)).check()
    except OtherMovie:
        return None
    except (MovieError, ValueError) as exc:
        return "path", str(exc)
    return None


def export_zoom_movie(window) -> bool:
    """The File menu's entry: ask for the movie's settings, then make it from the Mandelbrot
    view's current place. Returns whether a movie was started."""
    view = window.views.get("mandelbrot")
    if view is None:
        return False
    exporter = getattr(window, "movie_exporter", None)
    if exporter is None:
        exporter = window.movie_exporter = MovieExporter(window.scheduler, window,
                                                         status=window.show_status,
                                                         error=window.show_error)
    if exporter.running:
        window.show_status("A movie is already being made; cancel it first", 6000)
        return False
    dlg = MovieDialog(window, gpus=view.export_gpus(), check=lambda c: movie_problem(c, view))
    if dlg.exec() != QDialog.DialogCode.Accepted:
        return False
    gpus = dlg.chosen_gpus()
    spec = MovieSpec(**dlg.choice(), **place_of(view))
    restart = False
    try:
        movie = prepare(spec, open_encoder=False)
        Parts(movie, default_lanes(spec.kind, spec.size)).check()
    except OtherMovie:
        where = os.path.dirname(spec.out) if spec.kind == "png" else parts_dir(spec.out)
        answer = QMessageBox.question(
            window, "Export zoom movie",
            f"{where} holds parts of another movie. Discard them and start afresh?")
        if answer != QMessageBox.StandardButton.Yes:
            return False
        restart = True
    except MovieError as exc:
        window.show_error(f"Cannot export the movie: {exc}")
        return False
    return exporter.start(spec, view.backend, restart=restart, gpus=gpus)
