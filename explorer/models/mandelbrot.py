"""The Mandelbrot view's model: where the picture looks, how it is coloured, what is being rendered
and what was shown last. Qt-free: the widget (explorer/views/mandelbrot.py) turns gestures into
the commands here, submits the requests built here, and draws what the observers report.

Observers are plain callbacks by event name (`model.observe(event, fn)`):
  CAMERA(ok)          a command moved the camera (ok) or was refused (not ok: camera.refusal says why)
  ITERATIONS(n|None)  a jump set the iteration policy (the side panel follows)
  COLOURING()         the colouring or the iteration policy changed from the side panel
  FORMULA(name)       the formula iterated changed (the side panel, or a place that names one)
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

from kernels import palettes
from kernels.mandelbrot.requests import formulas
from kernels.mandelbrot.requests import request as km
from kernels.mandelbrot.requests.number_format import number_format
from kernels.mandelbrot.requests.number_type import resolve as resolve_number_type
from kernels.mandelbrot.colouring.overlays import with_usable_overlay
from kernels.mandelbrot.requests.request import MAX_ITER_LIMIT
from services.export_jobs import MandelbrotExport
from services.files import check_export_path
from services.kfr import format_kfr, parse_kfr
from services.requests import check_location, place_request

from .camera import Camera, CameraState
from .location import Location, format_location, parse_location
from .progress import FrameProgress

COARSE = 4                  # the CPU's first pass renders at 1/COARSE resolution
PROGRESSIVE_MIN_PIXELS = 160 * 120
# a deep frame slower than this makes the next ones coarse-first on the GPU too (on the CPU they
# always are): the reference orbit of a new place, or millions of iterations
DEEP_PROGRESSIVE_MS = 150.0
# colour mappings offered (kernels/mandelbrot/colouring/colour.py); "auto" = sqrt for float64 frames, log for
# deep ones, whose counts are large and close together
MAPPING_CHOICES = ("auto", "sqrt", "log", "histogram")

CAMERA, ITERATIONS, COLOURING, FORMULA = "camera", "iterations", "colouring", "formula"
# what a change of number format means, for the status bar
FORMAT_NEWS = {"float64": "float64 suffices again",
               "perturbation": "past float64's digits: deep zoom by perturbation",
               "extended": "below float64's range: extended exponents"}


def mapping_for(choice: str, number_format: str) -> str:
    """The colour mapping for a frame in `number_format` ("float64", "perturbation", "extended"):
    the chosen one, or for "auto" sqrt on float64 frames and log on deep ones."""
    if choice != "auto":
        return choice
    return "sqrt" if number_format == "float64" else "log"


@dataclass(frozen=True)
class Colouring:
    """What the side panel sets besides the iterations."""
    palette: str = palettes.DEFAULT
    density: float = 1.0
    offset: float = 0.0
    interior: tuple[int, int, int, int] = (0, 0, 0, 255)
    mapping: str = "auto"        # one of MAPPING_CHOICES


@dataclass(frozen=True)
class Ticket:
    """What a submitted frame shows: the camera and the canvas size it was rendered for."""
    state: CameraState
    w: int
    h: int
    coarse: bool = False
    formula: str = formulas.MANDELBROT


class Observers:
    """Plain callbacks by event name, called in the order they were added."""

    def __init__(self):
        self._by_event: dict[str, list[Callable]] = {}

    def connect(self, event: str, fn: Callable):
        self._by_event.setdefault(event, []).append(fn)

    def notify(self, event: str, *args):
        for fn in list(self._by_event.get(event, ())):
            fn(*args)


def clamp_iterations(n: int | None) -> int | None:
    """Automatic (None) or a fixed limit within 1..MAX_ITER_LIMIT (the side panel's range)."""
    return None if n is None else int(min(max(int(n), 1), MAX_ITER_LIMIT))


class MandelbrotModel:
    """The view's state and commands. `canvas_size()` answers the canvas's size in physical
    pixels (the widget's, asked at each use: frames are rendered at that size)."""

    def __init__(self, backend, canvas_size: Callable[[], tuple[int, int]] | None = None):
        self.camera = Camera()                 # no precision limit: deep frames take over
        self.backend = backend
        self.canvas_size = canvas_size or (lambda: (0, 0))
        self.colouring = Colouring()
        self.formula = formulas.MANDELBROT       # what is iterated (formulas.py's names)
        self.fixed_iterations: int | None = None   # None: automatic, from the width
        self.progressive = True          # CPU (and slow deep) frames come coarse, then full
        self.observers = Observers()
        # the render pump's state
        self.warm: set = set()           # backends whose kernels are compiled
        self.checked: set = set()        # backends whose disk cache the warm-up has looked at
        self.cold: float | None = None   # kernels to compile first: about this many seconds
        self.previewed = False           # the NumPy preview of a first start was shown
        self.compile_ahead = False       # compile the deep-zoom kernels once the window is up
        self.deep_warming: set = set()   # backends whose deep kernels compile in the background
        self.deep_ready: set = set()     # backends whose deep kernels are known to be in memory or on disk
        self.started = False             # the view has been shown: frames are wanted
        self.dirty = False               # the camera or colouring changed since the last submit
        self.deep_slow = False           # the last deep frame was slow: coarse first
        self.job: FrameProgress | None = None   # the frame in flight's progress (status bar)
        self.format = "float64"          # number format of the current camera's frames
        self.number_type = "auto"        # float64-format frames: "auto" | "float32" | "float64"
        self.number_choice = None        # number_type.Choice of the last request built
        self.overlay = ""                # drawn instead of the picture where it has a meaning
        # deep frames' pixels float64 cannot place: False marks them (frames stay interactive),
        # True iterates them in double-double as a --render does (redo/exact_redo.py)
        self.prove_pixels = False
        self.exporting = False           # a picture export is running
        self._tickets: dict[int, Ticket] = {}   # generation -> what that submission shows
        self._shown: Ticket | None = None
        self._frame = None

    def observe(self, event: str, fn: Callable):
        self.observers.connect(event, fn)

    # ---- what was shown ------------------------------------------------------------------------
    @property
    def frame(self):
        """The last frame displayed (kernels.frame.Frame), or None."""
        return self._frame

    @property
    def shown(self) -> Ticket | None:
        """What the last displayed frame shows (camera, size, coarse or not), or None."""
        return self._shown

    def displayed(self, ticket: Ticket, frame):
        self._shown, self._frame = ticket, frame

    def frame_at(self, w: int, h: int):
        """The shown frame when it is a full frame of the current camera at w×h whose values can
        be read back (the hover readout), else None."""
        t, frame = self._shown, self._frame
        if (t is None or frame is None or t.coarse or frame.fetch_value is None
                or t.state != self.camera.state or (t.w, t.h) != (w, h)
                or t.formula != self.formula):
            return None
        return frame

    def image_rect(self, w: int, h: int) -> tuple[float, float, float, float] | None:
        """Where the shown frame lies on a w×h canvas of the current camera (x, y, width, height
        in canvas pixels), or None when nothing was shown."""
        t = self._shown
        if t is None:
            return None
        cur = self.camera.state
        # the scale between the two frames' pixels (Decimal: deep widths are no floats); a frame
        # magnified past any use is kept within what a float and Qt hold
        k = float(min((t.state.width / t.w) / (cur.width / max(w, 1)), Decimal("1e12")))
        x0, y0 = cur.to_pixel(*t.state.to_complex(0.0, 0.0, t.w, t.h), max(w, 1), max(h, 1))
        x0, y0 = (max(-1e15, min(1e15, v)) for v in (x0, y0))
        return x0, y0, t.w * k, t.h * k

    # ---- iterations and colouring --------------------------------------------------------------
    def auto_iterations(self) -> int:
        return int(km.auto_iterations(self.camera.width))

    def iterations(self) -> int:
        n = self.fixed_iterations
        return int(n) if n is not None else self.auto_iterations()

    def set_colouring(self, colouring: Colouring, iterations: int | None):
        """The side panel changed: its colouring and iteration policy (None: automatic)."""
        self.colouring = colouring
        self.fixed_iterations = clamp_iterations(iterations)
        self.observers.notify(COLOURING)

    def set_formula(self, formula: str) -> bool:
        """Iterate `formula` (formulas.py's names; ValueError for another) from the next frame on;
        Home becomes its whole set. False when it is the one iterated already."""
        formulas.check(formula)
        if formula == self.formula:
            return False
        self.formula = formula
        self.camera.home = CameraState.of(*formulas.WHOLE_SETS[formula])
        self.observers.notify(FORMULA, formula)
        return True

    def choose_formula(self, formula: str) -> bool:
        """The panel's choice: as set_formula, and a view showing the old formula's whole set
        moves to the new one's (the ship's lies elsewhere, half of it outside the old view)."""
        at_home = self.camera.state == self.camera.home
        if not self.set_formula(formula):
            return False
        if at_home:
            self._moved(self.camera.reset())
        return True

    # ---- number format and requests --------------------------------------------------------------
    def number_format(self, w: int | None = None, width: Decimal | None = None) -> str:
        """"float64" | "perturbation" | "extended": the arithmetic frames of the current camera use
        at `w` pixels across (default: the canvas's), `width` wide (default: the camera's)."""
        s = self.camera.state
        if w is None:
            w = max(self.canvas_size()[0], 1)
        return number_format(s.center_re, s.center_im, s.width if width is None else width, w)

    def build_request(self, w: int, h: int, width: Decimal | None = None):
        """A MandelbrotRequest where float64 suffices, else a DeepFrameRequest (the centre's and
        width's digits as decimal strings); `width` in the plane, default the camera's."""
        s = self.camera.state
        width = s.width if width is None else width
        c = self.colouring
        fmt = self.number_format(w, width)
        colour = {"palette": c.palette, "density": float(c.density), "offset": float(c.offset),
                  "interior": tuple(c.interior), "mapping": mapping_for(c.mapping, fmt),
                  "want_values": False, "backend": self.backend, "formula": self.formula}
        req = place_request(s.center_re, s.center_im, width, (w, h), self.iterations(), **colour)
        if self.prove_pixels and isinstance(req, km.DeepFrameRequest):
            req = dataclasses.replace(req, pixels="proved")
        req, self.number_choice = resolve_number_type(req, self.backend, self.number_type)
        return with_usable_overlay(req, self.overlay)

    def refresh_format(self) -> str:
        """Take the current camera's number format as the view's; returns the one before."""
        before, self.format = self.format, self.number_format()
        return before

    # ---- the render pump ----------------------------------------------------------------------
    def is_warm(self, backend=None) -> bool:
        """Whether the kernels of `backend` (default: the view's) are compiled."""
        return (self.backend if backend is None else backend) in self.warm

    def frame_job(self, w: int, h: int):
        """(request, ticket) for the next frame at w×h: coarse first where frames are slow (the
        CPU, a slow deep place). ValueError when this place cannot be rendered. Either way the
        view is no longer dirty."""
        self.dirty = False
        req = self.build_request(w, h)
        req.validate()
        deep = isinstance(req, km.DeepFrameRequest)
        slow = not self.backend.is_gpu or (deep and self.deep_slow)
        if self.progressive and slow and w * h >= PROGRESSIVE_MIN_PIXELS:
            coarse = dataclasses.replace(req, size=(max(1, w // COARSE), max(1, h // COARSE)))
            if deep:            # a preview: its doubtful pixels marked, not iterated again
                coarse = dataclasses.replace(coarse, pixels="")
            req = km.ProgressiveRequest(full=req, coarse=coarse)
        self.job = FrameProgress(time.perf_counter(),
                                 progressive=isinstance(req, km.ProgressiveRequest))
        return req, Ticket(self.camera.state, w, h, formula=self.formula)

    def submitted(self, generation: int, ticket: Ticket):
        # kept beside the job: the frame's request carries only float64 centres, not the camera
        self._tickets = {generation: ticket}

    def current_ticket(self, coarse: bool = False) -> Ticket:
        t = next(iter(self._tickets.values()))
        return dataclasses.replace(t, coarse=True) if coarse else t

    def frame_arrived(self, frame) -> str:
        """A full frame came back: note whether deep frames are slow; returns its format."""
        fmt = frame.meta.get("format", "float64")
        if fmt != "float64":
            total = frame.timings.phases_ms.get("total")
            self.deep_slow = total is not None and total > DEEP_PROGRESSIVE_MS
        return fmt

    # ---- camera commands (w, h: the canvas's size) ------------------------------------------------
    def _moved(self, ok: bool) -> bool:
        self.observers.notify(CAMERA, ok)
        return ok

    def begin_gesture(self):
        self.camera.begin_gesture()

    def end_gesture(self):
        self.camera.end_gesture()

    def pan(self, dx: float, dy: float) -> bool:
        w, _ = self.canvas_size()
        return self._moved(self.camera.pan_pixels(dx, dy, w))

    def pan_fraction(self, fx: float, fy: float) -> bool:
        return self._moved(self.camera.pan_fraction(fx, fy, *self.canvas_size()))

    def wheel_zoom(self, factor: float, x: float, y: float) -> bool:
        """One wheel step: part of a gesture that ends when the steps stop (end_gesture)."""
        self.camera.begin_gesture()
        return self._moved(self.camera.zoom_about(factor, x, y, *self.canvas_size()))

    def zoom_centre(self, factor: float) -> bool:
        return self._moved(self.camera.zoom_centre(factor, *self.canvas_size()))

    def zoom_box(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        """A drawn box fills the view; one of under 3 pixels each way is a slip and does nothing."""
        if abs(x1 - x0) < 3 and abs(y1 - y0) < 3:
            return False
        return self._moved(self.camera.zoom_to_box(x0, y0, x1, y1, *self.canvas_size()))

    def centre_on(self, x: float, y: float) -> bool:
        return self._moved(self.camera.centre_on(x, y, *self.canvas_size()))

    def reset(self) -> bool:
        """Home: the formula's whole set, with the automatic iterations (a count set for a deep
        place would make the whole set slow for nothing)."""
        ok = self.camera.reset()
        if self.fixed_iterations is not None:
            self.fixed_iterations = None
            self.observers.notify(ITERATIONS, None)
            ok = True           # at home already: the new count still needs a frame
        return self._moved(ok)

    def back(self) -> bool:
        """The view before the last gesture; False (and no notice) when there is none."""
        return self.camera.back() and self._moved(True)

    def go_to(self, center_re, center_im, width, iterations=None, *, keep_iterations=False,
              formula: str | None = None) -> bool:
        """Jump to a location (a bookmark, pasted text): centre and width as numbers, Decimals or
        decimal strings of any length, and the place's formula (None: keep the one iterated). It
        meets the limits every location meets (services.requests.check_location); a refusal
        leaves the view as it was and says why in camera.refusal."""
        w, _ = self.canvas_size()
        try:
            check_location(center_re, center_im, width, None if keep_iterations else iterations)
            state = CameraState.of(center_re, center_im, width)
            if formula is not None:
                formulas.check(formula)
        except (ValueError, ArithmeticError) as exc:
            self.camera.refusal = f"Cannot go there: {exc}"
            return self._moved(False)
        ok = self.camera.go_to(state, max(w, 1))
        if ok and formula is not None:
            self.set_formula(formula)
        if ok and not keep_iterations:
            self.fixed_iterations = clamp_iterations(iterations)
            self.observers.notify(ITERATIONS, self.fixed_iterations)
        return self._moved(ok)

    # ---- locations as text and .kfr files ---------------------------------------------------------
    def location_text(self) -> str:
        """The place as text to copy: every digit of the centre the zoom needs."""
        s = self.camera.state
        return format_location(s.center_re, s.center_im, s.width, self.fixed_iterations,
                               self.formula)

    def place_from_text(self, text: str) -> Location:
        """A pasted location (ours or Kalles Fraktaler's lines, whose width follows the canvas's
        aspect); ValueError in plain words when the text holds none."""
        w, h = self.canvas_size()
        return parse_location(text, aspect=max(w, 1) / max(h, 1))

    def place_from_kfr(self, text: str) -> tuple[str, str, Decimal, int | None, str]:
        """(centre re, centre im, width, iterations, formula) of the place in a .kfr file's text:
        the centre's digits as written, KF's Zoom turned into a width for this canvas, its
        FractalType as a formula. ValueError in plain words when it holds none (or a type this
        app does not draw); go_to checks the limits."""
        w, h = self.canvas_size()
        k = parse_kfr(text)
        return k.center_re, k.center_im, k.width(max(w, 1), max(h, 1)), k.iterations, k.formula

    def kfr_text(self) -> str:
        """The current place as a .kfr file's text (KF's Zoom from this canvas's aspect)."""
        s = self.camera.state
        w, h = self.canvas_size()
        return format_kfr(s.center_re, s.center_im, s.width, (max(w, 1), max(h, 1)),
                          self.iterations(), colours=palettes.lut(self.colouring.palette),
                          formula=self.formula)

    # ---- exports ------------------------------------------------------------------------------
    def export_job(self, path: str, w: int, h: int, gpus=None) -> MandelbrotExport:
        """The current view rendered at w×h into `path` (.png, or .npy for the raw counts);
        `gpus`: spread the picture's bands over these GPUs. ValueError when the path cannot be
        written (checked first: it must not cost a whole render) or the place not rendered."""
        check_export_path(path)
        req = dataclasses.replace(self.build_request(w, h, self.export_width(w, h)),
                                  want_values=path.lower().endswith(".npy"))
        if isinstance(req, km.DeepFrameRequest):   # a file, as --render: proved (issue 34)
            req = dataclasses.replace(req, pixels="proved")
        req.validate()
        return MandelbrotExport(req, path, self.backend, gpus=tuple(gpus) if gpus else None)

    def export_width(self, w: int, h: int) -> Decimal:
        """The width of a w×h export that holds everything the canvas shows: the camera's, or
        more where the export is wider in shape than the canvas (a 16:9 export of a square view
        lost the view's top and bottom)."""
        s = self.camera.state
        cw, ch = self.canvas_size()
        if cw <= 0 or ch <= 0 or w <= 0 or h <= 0:
            return s.width
        need = s.width * Decimal(ch * w) / Decimal(cw * h)
        return s.width if need <= s.width else Decimal(f"{need:.6e}")

    def movie_place(self):
        """The place and colouring as a zoom movie's (services.movie.MoviePlace)."""
        from services.movie import MoviePlace, formula_field
        state = self.camera.state
        c = self.colouring
        iters = self.fixed_iterations
        colouring = [("density", float(c.density)), ("offset", float(c.offset)),
                     ("interior", tuple(int(v) for v in c.interior))]
        if c.mapping != "auto":
            colouring.append(("mapping", c.mapping))
        colouring.extend(formula_field(self.formula))
        return MoviePlace(str(state.center_re), str(state.center_im), str(state.width),
                          None if iters is None else int(iters), c.palette, tuple(colouring))
