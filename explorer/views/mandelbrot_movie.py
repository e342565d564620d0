"""File → Export zoom movie…: the dialog (size, frame rate, length, codec, direction, colour
mapping, file), then the movie made through the window's scheduler by movie_exporter.py's
MovieExporter, with a progress bar that shows the time left and a Cancel button.

The movie is the one services.movie makes for the command line too: the same course, the same parts
folder, so an export that was cancelled resumes when started again with the same settings. It zooms
in from the whole set to the Mandelbrot view's current place (or out from it) with the view's
palette, density, offset and interior colour, and one colour mapping for every frame: sqrt, the
only one that gives a count the same colour in every frame (the Mapping field says so of the
others, and starts with the view's choice).
"""
from __future__ import annotations

import os

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFileDialog,
                             QFormLayout, QHBoxLayout, QLineEdit, QMessageBox, QPushButton,
                             QSpinBox, QWidget)

from services.movie import (
    DEFAULT_FPS,
    DEFAULT_MOVIE_SECONDS,
    MAX_FPS,
    MOVIE_MAPPING,
    MovieError,
    MoviePlace,
    MovieSpec,
    OtherMovie,
    make_frames_folder,
    prepare,
)
from services.movie_parts import Parts, parts_dir
from services.movie_writer import default_lanes

from .export_fields import error_label, remember_folder, show_error, start_path, sync_size_list
from .movie_exporter import MovieExporter, eta_text

# what the window and the tests take from here (the exporter's names included)
__all__ = ["MovieDialog", "MovieExporter", "eta_text", "export_zoom_movie", "movie_problem",
           "movie_spec", "place_of"]
SIZES = (("Full HD 1920×1080", (1920, 1080)), ("HD 1280×720", (1280, 720)),
         ("4K UHD 3840×2160", (3840, 2160)), ("Small 640×360", (640, 360)), ("Custom", None))
# codec entries: label, --codec name (None: a PNG per frame)
CODECS = (("H.264 (libx264)", "h264"), ("H.265 (libx265)", "h265"),
          ("H.264 on the GPU (NVENC)", "h264_nvenc"), ("H.265 on the GPU (NVENC)", "hevc_nvenc"),
          ("PNG frames (one file per frame)", None))
DIRECTIONS = (("In: from the whole set to here", "in"), ("Out: from here to the whole set", "out"))
# how the frames are made (services/movie_keyframes.py): each rendered, or resampled from
# exponential-map keyframes; each rendered is the default, as on the command line
METHODS = (("Render every frame (each as Render draws it)", False),
           ("From keyframes, one per octave (long deep zooms)", True))
# the colour mappings, each saying whether a movie can use it: one mapping colours every frame, and
# only sqrt gives a count the same colour in every frame (services.movie.one_mapping)
MAPPINGS = ((f"{MOVIE_MAPPING}: one colour per count in every frame", MOVIE_MAPPING),
            ("log: not for movies (each frame's own statistics)", "log"),
            ("histogram: not for movies (each frame's own statistics)", "histogram"))
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


def place_of(view) -> MoviePlace:
    """The Mandelbrot view's place and colouring (from its model)."""
    return view.model.movie_place()


def view_mapping(view) -> str:
    """The colour mapping the view has chosen ("auto" leaves it to the movie: MOVIE_MAPPING)."""
    return place_of(view).mapping or MOVIE_MAPPING


def mapping_problem(mapping: str) -> str | None:
    """Why a movie cannot be coloured with `mapping`, in the window's words, or None."""
    if mapping == MOVIE_MAPPING:
        return None
    return (f"{mapping} takes each frame's own statistics, so the same count would change colour "
            f"from frame to frame: a movie is coloured with {MOVIE_MAPPING}")


def movie_spec(choice: dict, view) -> MovieSpec:
    """The movie the dialog's `choice` describes (its "mapping", when given, in place of the
    view's) at the view's place with the view's colouring."""
    fields = dict(choice)
    mapping = fields.pop("mapping", None)
    place = place_of(view)
    if mapping:
        place = place.with_mapping(mapping)
    return place.spec(**fields)


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
    """`check(choice) -> (field, why) | None` runs when Export is pressed: a problem ("path",
    "size" or "mapping") is shown beside that field and the dialog stays open with what was typed.
    `mapping`: the view's colour mapping, which the Mapping field starts with."""

    def __init__(self, parent=None, path: str | None = None, gpus=(), check=None,
                 mapping: str | None = None):
        super().__init__(parent)
        self._check = check
        self._view_mapping = mapping or MOVIE_MAPPING
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
        self.method = QComboBox()
        for label, _ in METHODS:
            self.method.addItem(label)
        self.method.setToolTip(
            "From keyframes: one exponential-map keyframe per halving of the width, every frame "
            "resampled from them, so the cost follows the depth, not the length; frames are "
            "close to, not equal to, each frame rendered")
        form.addRow("Frames", self.method)
        self.codec = QComboBox()
        for i, (label, codec) in enumerate(CODECS):
            why = codec_problem(codec)
            self.codec.addItem(label if not why else f"{label} (unavailable)", codec)
            if why:      # listed with the reason, as the other views list what is missing
                self.codec.model().item(i).setEnabled(False)
                self.codec.setItemData(i, f"unavailable here: {why}", Qt.ItemDataRole.ToolTipRole)
        form.addRow("Codec", self.codec)
        self.mapping = QComboBox()
        for label, name in MAPPINGS:
            self.mapping.addItem(label, name)
        self.mapping.setToolTip(
            "How counts become colours. Every frame of a movie is coloured with one mapping: "
            f"{MOVIE_MAPPING} depends on each pixel's count alone; log and histogram take each "
            "frame's own statistics, so a count would change colour from frame to frame")
        form.addRow("Mapping", self.mapping)
        self.mapping_error = error_label()
        form.addRow("", self.mapping_error)
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
        self.mapping.currentIndexChanged.connect(self._mapping_changed)
        self._set_mapping(self._view_mapping)
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
        self.method.setCurrentIndex(1 if last.get("keyframes") else 0)
        i = self.codec.findData(last["codec"])
        if i >= 0 and self.codec.model().item(i).isEnabled():
            self.codec.setCurrentIndex(i)
        self.path.setText(last["out"])
        # the mapping picked last time, while the view still has the one it had then
        if last.get("view_mapping") == self._view_mapping and last.get("mapping"):
            self._set_mapping(last["mapping"])

    def _set_mapping(self, mapping: str):
        i = self.mapping.findData(mapping)
        self.mapping.setCurrentIndex(max(i, 0))
        self._mapping_changed()

    def _mapping_changed(self, *_):
        show_error(self.mapping_error, mapping_problem(self.mapping.currentData()))

    def _remember(self, choice: dict):
        _last.update(choice, view_mapping=self._view_mapping)

    def accept(self):
        choice = self.full_choice()
        found = self._check(choice) if self._check is not None else None
        if found is None:
            problem = mapping_problem(choice["mapping"])
            found = ("mapping", problem) if problem else None
        for field, label in (("path", self.path_error), ("size", self.size_error)):
            show_error(label, found[1] if found and found[0] == field else None)
        if found and found[0] == "mapping":
            show_error(self.mapping_error, found[1])
        if found:
            return
        self._remember(choice)
        remember_folder(choice["out"])
        super().accept()

    def reject(self):
        self._remember(self.full_choice())      # what was typed is there next time too
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

    def full_choice(self) -> dict:
        """choice() and the colour mapping picked ("mapping"): what movie_spec takes."""
        return dict(self.choice(), mapping=self.mapping.currentData())

    def choice(self) -> dict:
        """The MovieSpec fields the dialog sets (the mapping is a colouring: full_choice)."""
        codec = self.codec.currentData()
        path = os.path.expanduser(self.path.text().strip())
        path = png_pattern(path) if codec is None else video_path(path)
        return {"out": path, "size": (self.w.value(), self.h.value()), "fps": self.fps.value(),
                "seconds": float(self.seconds.value()),
                "zoom": DIRECTIONS[self.direction.currentIndex()][1], "codec": codec,
                "keyframes": METHODS[self.method.currentIndex()][1]}


def _row(*widgets, stretch_first=False) -> QWidget:
    row = QHBoxLayout()
    for i, w in enumerate(widgets):
        row.addWidget(w, 1 if stretch_first and i == 0 else 0)
    row.setContentsMargins(0, 0, 0, 0)
    box = QWidget()
    box.setLayout(row)
    return box


def movie_problem(choice: dict, view) -> tuple[str, str] | None:
    """("path" | "size", why) when the movie the dialog describes cannot be made, checked before
    the dialog closes; parts of another movie are asked about afterwards."""
    from services.files import check_writable
    choice = dict(choice)
    mapping = choice.get("mapping") or view_mapping(view)
    out = choice["out"]
    try:
        if choice["codec"] is None:
            make_frames_folder(out)     # PNG frames: a new folder of them is made
        check_writable(out)
    except (MovieError, ValueError) as exc:
        return "path", str(exc)
    w, h = choice["size"]
    if choice["codec"] is not None and (w % 2 or h % 2):
        return "size", f"a video needs an even width and height, not {w}×{h}"
    if mapping_problem(mapping):
        return "mapping", mapping_problem(mapping)
    try:
        spec = movie_spec(choice, view)
        Parts(prepare(spec, open_encoder=False), default_lanes(spec.kind, spec.size)).check()
    except OtherMovie:
        return None
    except (MovieError, ValueError) as exc:
        return "path", str(exc)
    return None


def export_zoom_movie(window) -> bool:
    """The File menu's entry: ask for the movie's settings, then make it from the Mandelbrot
    view's current place. Returns whether a movie was started."""
    try:
        view = window.views["mandelbrot"]      # built now if the window had not yet
    except KeyError:
        return False
    exporter = getattr(window, "movie_exporter", None)
    if exporter is None:
        exporter = window.movie_exporter = MovieExporter(window.scheduler, window,
                                                         status=window.show_status,
                                                         error=window.show_error)
    if exporter.running:
        window.show_status("A movie is already being made; cancel it first", 6000)
        return False
    dlg = MovieDialog(window, gpus=view.export_gpus(), check=lambda c: movie_problem(c, view),
                      mapping=view_mapping(view))
    if dlg.exec() != QDialog.DialogCode.Accepted:
        return False
    gpus = dlg.chosen_gpus()
    spec = movie_spec(dlg.full_choice(), view)
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
