"""The Mandelbrot view's render loop without a window (explorer/models/mandelbrot_loop.py): a
plain screen that keeps the FrameScreen protocol and records what the loop asked of it, driven
through a start, a compile, a frame, a cancel and a failure as the scheduler would drive it."""
import numpy as np

from explorer.models.mandelbrot import MandelbrotModel
from explorer.models.mandelbrot_loop import MAX_STRETCH, STALE_OPACITY, FrameLoop
from kernels.frame import Frame
from kernels.mandelbrot.requests import request as km
from kernels.scheduler import Compiled, Warmup
from kernels.timing import Timings


class Screen:
    """A FrameScreen on paper: the jobs it was given, what it said, what it showed."""

    def __init__(self, backend, size=(64, 48)):
        self.backend, self.size = backend, size
        self.in_flight = False
        self.jobs, self.said, self.errors, self.waits = [], [], [], []
        self.pictures, self.places, self.reports, self.frames = [], [], [], []

    def canvas_size(self):
        return self.size

    def submit(self, request, *, key=None, replace_running=False):
        self.jobs.append((request, key, replace_running))
        if key is None:
            self.in_flight = True
        return len(self.jobs)

    def side_key(self, name):
        return f"side:{name}"

    def cancel(self):
        self.in_flight = False

    def say(self, text, ms):
        self.said.append(text)

    def error(self, text):
        self.errors.append(text)

    def wait_start(self, what, tail=""):
        self.waits.append(what)

    def wait_stop(self):
        self.waits.append(None)

    def report_timings(self, timings):
        self.reports.append(timings)

    def show_picture(self, rgba):
        self.pictures.append(rgba)

    def place_picture(self, rect, opacity):
        self.places.append((rect, opacity))

    def paint_now(self):
        pass

    def shown(self, frame, display_ms):
        self.frames.append((frame, display_ms))


def _frame(request):
    w, h = request.size
    return Frame(rgba=np.zeros((h, w, 4), np.uint8), timings=Timings(backend="cpu"),
                 request=request)


def test_a_start_a_compile_and_a_frame_without_a_window(cpu_backend):
    screen = Screen(cpu_backend)
    model = MandelbrotModel(cpu_backend, screen.canvas_size)
    loop = FrameLoop(screen, model)
    loop.pump()                                  # first: what numba's disk cache holds
    job, key, _ = screen.jobs[-1]
    assert isinstance(job, Warmup) and job.cached_only and key is None
    assert screen.said[-1] == "Loading the kernels…"
    screen.in_flight = False
    loop.on_result(Compiled("mandelbrot", cpu_backend, 12.0))
    assert cpu_backend in model.warm and screen.reports[-1].get("compile") == 12.0
    assert screen.jobs[-1][0] is job             # not shown yet: no frame is wanted
    model.started, model.dirty = True, True
    loop.pump()
    request = screen.jobs[-1][0]
    request = getattr(request, "full", request)
    assert isinstance(request, km.MandelbrotRequest) and request.size == (64, 48)
    screen.in_flight = False
    loop.on_result(_frame(request))
    frame, ms = screen.frames[-1]
    assert frame.request is request and ms >= 0 and "display" in frame.timings.detail
    assert screen.pictures and screen.places[-1] == ((0.0, 0.0, 64.0, 48.0), 1.0)


def test_cancel_and_failure_are_said_on_the_status_line(cpu_backend):
    screen = Screen(cpu_backend)
    model = MandelbrotModel(cpu_backend, screen.canvas_size)
    model.warm.add(cpu_backend)
    model.checked.add(cpu_backend)
    loop = FrameLoop(screen, model)
    assert loop.cancel() is False                # nothing in flight
    model.started, model.dirty = True, True
    loop.pump()
    assert screen.in_flight
    assert loop.cancel() is True and not screen.in_flight
    assert screen.said[-1].startswith("Frame cancelled")
    loop.on_failed("out of memory")
    assert screen.errors == ["Mandelbrot render failed: out of memory"]


def test_a_frame_stretched_past_the_limit_stays_faded(cpu_backend):
    screen = Screen(cpu_backend)
    model = MandelbrotModel(cpu_backend, screen.canvas_size)
    loop = FrameLoop(screen, model)
    model.warm.add(cpu_backend)
    model.started, model.dirty = True, True
    loop.pump()
    request = screen.jobs[-1][0]
    screen.in_flight = False
    loop.on_result(_frame(getattr(request, "full", request)))
    assert screen.places[-1][1] == 1.0
    # far in: one of the shown frame's pixels would cover more than MAX_STRETCH canvas pixels
    assert model.camera.zoom_centre(4.0 * MAX_STRETCH, *screen.size)
    loop.place_image()
    assert screen.places[-1] == (None, STALE_OPACITY)
