"""The Mandelbrot view's render loop, free of any GUI toolkit: the kernels' warm-up (on a first
start a NumPy preview while they compile, then the deep-zoom kernels in the background), then at
most one frame in flight under the view's own key (the model says what to render and whether the
view is dirty), coarse passes shown upscaled, deep frames' progress on the status line, and each
frame placed where its camera says. The window's widget keeps the FrameScreen protocol below
(explorer/views/mandelbrot_frames.py); a test or another front end can keep it too.
"""
from __future__ import annotations

import time
from typing import Protocol

from kernels.frame import Frame
from kernels.mandelbrot.requests import request as km
from kernels.mandelbrot.frames import warm
from kernels.mandelbrot.frames.preview import PreviewRequest, render_preview
from kernels.numba_cache import compile_when
from kernels.scheduler import ColdStart, Compiled, Warmup
from kernels.timing import Timings

from .mandelbrot import Ticket, mapping_for


class FrameScreen(Protocol):
    """What the loop needs of the screen it draws on."""
    backend: object                 # where the frames are computed
    in_flight: bool                 # a job of the view's own key is running

    def canvas_size(self) -> tuple[int, int]: ...
    def submit(self, request, *, key: str | None = None, replace_running: bool = False) -> int: ...
    def side_key(self, name: str) -> str: ...
    def cancel(self) -> None: ...
    def say(self, text: str, ms: int) -> None: ...              # the status line, for ms (0: on)
    def error(self, text: str) -> None: ...
    def wait_start(self, what: str, tail: str = "") -> None: ...   # a wait counting its seconds
    def wait_stop(self) -> None: ...
    def report_timings(self, timings: Timings) -> None: ...
    def show_picture(self, rgba) -> None: ...
    def place_picture(self, rect, opacity: float) -> None: ...    # rect None: where it is
    def paint_now(self) -> None: ...                # paint before returning, where it is asked
    def shown(self, frame: Frame, display_ms: float) -> None: ...  # timings reported, and said


def deep_compile_words(fmt: str, mapping: str) -> str:
    """What a deep frame's compile waits for (the parts not yet compiled; the format's own when
    the cache cannot be read)."""
    fmt = fmt if fmt in warm.DEEP_FORMATS else "perturbation"
    parts = warm.parts_of(fmt, mapping_for(mapping, fmt))
    return warm.waiting_words(warm.missing(parts) or parts)


# canvas pixels per frame pixel past which the last frame is not stretched but faded
MAX_STRETCH = 32
STALE_OPACITY = 0.35


class FrameLoop:
    """The render loop of the Mandelbrot view, on any screen that keeps the FrameScreen protocol:
    the view's result hooks land here."""

    def __init__(self, screen: FrameScreen, model):
        self.view = screen
        self.model = model

    def pump(self):
        """Submit the next job if none is in flight: the kernels' warm-up first (it needs no
        picture, so it starts with the view), then a frame once the view is shown."""
        view, m = self.view, self.model
        if view.in_flight:
            return
        if not m.is_warm():
            self._warm_up()
            return
        if not m.started or not m.dirty:
            return
        w, h = view.canvas_size()
        if w <= 0 or h <= 0:
            return              # resumes from the resize that gives the canvas an area
        self._submit_frame(w, h)

    def _warm_up(self):
        """The kernels, in three steps on a first start: ask what numba's disk cache holds (a
        warm start loads it there and then); where they must compile, a NumPy preview of the
        picture drawn here on the GUI thread (kernels/mandelbrot/frames/preview.py: tenths of a second,
        and no job of another view can hold it up), then the compile on the worker."""
        view, m = self.view, self.model
        be = view.backend
        mapping = mapping_for(m.colouring.mapping, "float64")
        if be not in m.checked:
            m.checked.add(be)
            # the CPU's check loads numba's disk cache; a GPU compiles (the driver caches)
            view.say(
                "Compiling the kernels…" if be.is_gpu else "Loading the kernels…", 0)
            view.submit(Warmup("mandelbrot", be, (mapping,), cached_only=True))
            return
        if m.cold is None:
            view.say("Compiling the kernels…", 0)
        else:
            if not m.previewed and not m.started:
                return              # the preview comes first, once the view is shown
            if not m.previewed:
                self._show_preview()
            self.view.wait_start(f"Compiling the kernels, {compile_when()}",
                            ": a quick preview is shown until then" if m.previewed else "")
        view.submit(Warmup("mandelbrot", be, (mapping,)))

    def _show_preview(self):
        """A NumPy preview of the current float64 view (no compile), once the view is shown."""
        view, m = self.view, self.model
        w, h = view.canvas_size()
        if w <= 0 or h <= 0:
            return
        try:
            req = m.build_request(w, h)
            req.validate()
        except ValueError:
            return
        if not isinstance(req, km.MandelbrotRequest):
            return                  # a deep place: its frame follows the compile
        m.previewed = True
        self.display(Ticket(m.camera.state, w, h, coarse=True), render_preview(PreviewRequest(req)))

    def _compile_ahead(self, backend):
        """Once the view's own kernels are ready: the deep-zoom kernels in the background, one
        part per step, each step only while no frame waits (kernels/mandelbrot/jobs.warm_deep)."""
        m = self.model
        if m.compile_ahead and backend not in m.deep_warming:
            m.deep_warming.add(backend)
            self.view.submit(Warmup("mandelbrot", backend, ("deep",), background=True),
                             key=self.view.side_key("deep-warmup"))

    def _submit_frame(self, w: int, h: int, *, replace_running: bool = False):
        try:
            req, ticket = self.model.frame_job(w, h)
        except ValueError as exc:
            self.view.say(f"Cannot render this view: {exc}", 5000)
            return
        self.model.submitted(self.view.submit(req, replace_running=replace_running), ticket)
        self._say_deep_wait(req)

    def _say_deep_wait(self, req):
        """A deep CPU frame whose kernels are not compiled yet waits for them (behind a
        background compile step, then its own): said at once, not when its job starts."""
        m = self.model
        full = getattr(req, "full", req)
        if (not isinstance(full, km.DeepFrameRequest) or self.view.backend.is_gpu
                or self.view.backend in m.deep_ready):
            return
        fmt = m.format if m.format in warm.DEEP_FORMATS else "perturbation"
        need = warm.missing(warm.parts_of(fmt, mapping_for(m.colouring.mapping, fmt)))
        if need:
            self.view.wait_start(f"Deep frame: {warm.waiting_words(need)}", "…   (Esc cancels)")
        else:
            m.deep_ready.add(self.view.backend)     # loaded from the disk cache: not asked again

    def on_result(self, result):
        view, m = self.view, self.model
        if isinstance(result, ColdStart):
            m.cold = result.seconds
            self.pump()
            return
        if isinstance(result, Compiled):
            self.view.wait_stop()
            m.warm.add(result.backend)
            t = Timings(backend=result.backend.name, label="mandelbrot: compile kernels")
            t.add("compile", result.ms)
            view.report_timings(t)
            view.say(
                f"Kernels compiled in {result.ms:.0f} ms" if result.ms is not None else "Kernels ready", 3000)
            m.dirty = True
            self.pump()
            self._compile_ahead(result.backend)
            return
        assert isinstance(result, Frame), result
        self.view.wait_stop()
        ticket = m.current_ticket()
        fmt = m.frame_arrived(result)
        if fmt != "float64":
            m.deep_ready.add(view.backend)
        job, m.job = m.job, None
        done = job.done_text(time.perf_counter(), fmt) if job is not None else None
        if done:                # a long job ends in a status, whatever its depth
            view.say(done, 8000)
        self.pump()             # the next frame computes while this one is painted
        self.display(ticket, result)

    def on_progress(self, frame):
        m = self.model
        if isinstance(frame, km.DeepProgress):
            self._show_deep_progress(frame)
            if frame.stage == "pixels":
                return          # the pixels of a deep frame end soon: let them finish
        else:
            if m.job is not None:
                m.job.coarse_shown()
            self.display(m.current_ticket(coarse=True), frame)
        if m.dirty:             # drop the full pass of a view that is already out of date
            w, h = self.view.canvas_size()
            if w > 0 and h > 0 and m.is_warm():
                self._submit_frame(w, h, replace_running=True)

    def on_failed(self, message):
        self.view.wait_stop()
        self.model.job = None
        if not self.model.is_warm():
            self.model.warm.add(self.view.backend)    # do not retry a failing compile in a loop
        self.view.error(f"Mandelbrot render failed: {message}")
        self.pump()

    def _show_deep_progress(self, p):
        """The deep frame's stage in the status bar: the reference orbit (arbitrary precision on
        the host, seconds at great depths), then the pixels."""
        m = self.model
        if m.job is None:
            return
        if p.stage == "pixels" and not m.job.shown and self.view.backend.is_gpu:
            return              # a GPU frame's pixels take milliseconds: no message for them
        # one bar for the whole frame: stages map to fixed shares, so it only goes forward
        text = m.job.update(p.stage, p.fraction)
        if p.stage == "compile":
            words = deep_compile_words(m.format, m.colouring.mapping)
            self.view.wait_start(f"Deep frame: {words}", "…   (Esc cancels)")
            return
        self.view.wait_stop()
        self.view.say(text, 0)

    def cancel(self) -> bool:
        """Stop the frame being computed; the picture keeps the last finished frame and nothing
        is computed until the view changes again. False when nothing was running."""
        view = self.view
        if not view.in_flight:
            return False
        m = self.model
        m.dirty = False
        view.cancel()
        m.job = None
        self.view.wait_stop()
        shown = m.shown
        if shown is not None and shown.coarse and shown.state == m.camera.state:
            what = "showing the coarse preview (the full frame was stopped)"
        elif shown is not None and shown.state != m.camera.state:
            what = "showing the last finished frame, of an earlier view"
        else:
            what = "showing the last finished frame"
        view.say(f"Frame cancelled: {what}", 6000)
        return True

    def display(self, ticket: Ticket, frame):
        view = self.view
        t0 = time.perf_counter()
        view.show_picture(frame.rgba)
        self.model.displayed(ticket, frame)
        self.place_image()
        view.paint_now()
        ms = (time.perf_counter() - t0) * 1e3
        frame.timings.add("host", ms)
        frame.timings.detail["display"] = ms   # the panel draws display apart
        view.shown(frame, ms)

    def place_image(self):
        """Put the shown frame where its camera says, relative to the current camera. A frame
        that would be stretched past MAX_STRETCH (a jump to a deep bookmark: one of its pixels
        over the whole canvas, black or flat) says nothing of the new place: it stays where it
        was, faded, until the new frame comes."""
        rect = self.model.image_rect(*self.view.canvas_size())
        if rect is None:
            return
        shown = self.model.shown
        if shown is not None and rect[2] > MAX_STRETCH * max(1, shown.w):
            self.view.place_picture(None, STALE_OPACITY)
            return
        self.view.place_picture(rect, 1.0)
