"""Mandelbrot set: the renderer (GPU or CPU, same pictures), whole frames, strips or bands of rows.

Every entry point runs one pipeline: buffers -> escape pass -> colour -> copy to the host. Where
that runs is a target chosen once, at construction: cpu_target.CpuTarget or
gpu_target.GpuTarget, with the same methods. The arithmetic lives in escape.py.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..buffers import BufferPool
from ..frame import Frame
from ..timing import JobTimer
from .loops import escape as mk
from .colouring import overlays as ov
from .colouring.colourer import Colourer
from .frames.cpu_target import CpuTarget
from .loops.escape import PixelGrid
from .requests.formulas import MANDELBROT
from .frames.frame_steps import FrameSteps, rgba_bytes, words
from .frames.gpu_target import THRESH, WARPS_PER_SM, GpuTarget, WarpLaunch
from .colouring.picture_colour import needs_whole_picture, whole_strips
from .requests.request import MandelbrotRequest
from .frames.warm import Compiled
from .requests.strips import strip_rows


# How finely an escape pass is cut so that a cancel lands within a fraction of a second at any
# iteration count (read at every pass, see Cuts). Upper bound on the iterations one GPU launch
# may do (pixels x max_iter, tens of ms) before the frame is split into bands of rows, with a
# cancellation check between bands.
GPU_BAND_WORK = 2 ** 33
# ... but a GPU band has at least this many pixels (~2 waves of threads on an H100/H200), since
# a launch of a few thousand threads would leave most of the GPU idle. When a band that large
# would still exceed GPU_BAND_WORK, the iteration count is sliced instead: each launch takes
# every pixel still running a few thousand iterations further.
GPU_MIN_BAND_PIXELS = 2 ** 18
# Under the CUDA simulator (one Python thread per CUDA thread) the same bounds, scaled down so
# that a cancel still lands within a fraction of a second.
SIM_BAND_WORK = 2 ** 15
SIM_BAND_PIXELS = 256
# The same for one CPU band (pixels x max_iter, a fraction of a second on two cores). The CPU
# kernel also polls a stop flag before every pair of pixels, so a cancel never waits for a band.
CPU_BAND_WORK = 2 ** 27
# A poster's band runs in one launch once the renderer's last band of the same picture took less
# than this: the cuts above end each launch in a synchronisation that idles the GPU, and a cancel
# lands between a poster's bands anyway
QUICK_BAND_S = 0.1


@dataclass(frozen=True)
class Cuts:
    """The bounds above, as they are when a pass starts (tests make them fine)."""
    cpu_work: int
    gpu_work: int
    gpu_min_pixels: int
    sim_work: int
    sim_pixels: int


def _cuts() -> Cuts:
    return Cuts(CPU_BAND_WORK, GPU_BAND_WORK, GPU_MIN_BAND_PIXELS, SIM_BAND_WORK, SIM_BAND_PIXELS)


class _Band:
    """A band queued by Renderer._queue_band: its buffers, its timer, and done() once it is back
    (notes the band's time, which decides whether the next runs whole, and its phases)."""

    def __init__(self, renderer, place, shape, dtype, vals, rgba, timer):
        self.renderer, self.place, self.shape, self.dtype = renderer, place, shape, dtype
        self.vals, self.rgba, self.timer = vals, rgba, timer
        self.started = time.perf_counter()

    def done(self) -> None:
        r = self.renderer
        r.band_timings = self.timer.finish()    # the last band's phases (tools/band_compare.py)
        r._last_band = (self.place, time.perf_counter() - self.started)


class Renderer:
    """Renders MandelbrotRequests on one backend, reusing its buffers frame after frame.

    Use from one thread (the render worker). When a request differs from the previous one only in
    colour (palette, density, offset, interior), the escape values still on the device (or in host
    memory on the CPU) are recoloured instead of recomputed (`Frame.meta["recoloured"]`).
    """

    def __init__(self, backend, block: tuple[int, int] | None = None, reuse_values: bool = True,
                 launch="warp", thresh: int | None = None, warps_per_sm: int = WARPS_PER_SM,
                 number_type: str = "float64"):
        """GPU launch: "warp" (the app's: escape_warp_kernel in picture order, refills when
        `thresh` lanes of a warp are idle (None: THRESH, float32's own for float32 frames),
        `warps_per_sm` resident warps per SM), or the launch object of a variant that benches
        compare it with (escape_variants.variant(name, knobs): bench-only, outside the app's
        renderer; "grid" takes blocks of `block`).
        `number_type` "float32" runs the float32 kernels (targets_f32.py; the warp launch only)."""
        if (thresh is not None and not 1 <= int(thresh) <= 32) or int(warps_per_sm) < 1:
            raise ValueError(f"thresh must be 1..32 and warps_per_sm at least 1, got {thresh} "
                             f"and {warps_per_sm}")
        if isinstance(launch, str) and launch != "warp":    # the variants are benches' objects
            raise ValueError(f"unknown launch {launch!r}: the app's is 'warp'; a bench's variant "
                             "is an object of escape_variants.variant(name)")
        self.backend = backend
        self.pool = BufferPool(backend)
        self.reuse_values = reuse_values
        self.launch = launch
        self.number_type = number_type
        if number_type != "float64":
            from .frames.targets_f32 import float32_target
            self.target = float32_target(backend, self.pool, launch, block, thresh, warps_per_sm,
                                         _cuts)
        elif backend.is_gpu:
            thresh = THRESH if thresh is None else thresh
            plain = WarpLaunch(thresh, warps_per_sm) if launch == "warp" else launch
            self.target = GpuTarget(backend, self.pool, plain, block, _cuts)
        else:
            self.target = CpuTarget(backend, _cuts)
        self.colourer = Colourer(backend)
        self.compiled = Compiled(backend, self.target, self.colourer)
        self.steps = FrameSteps(backend, self.pool, self.target, self.colourer, number_type,
                                reuse_values)
        self.band_timings = None
        self._last_band = None      # (the picture's place, seconds) of the last band

    @property
    def stream(self):
        """The stream the target and the colourer work on (None on the CPU)."""
        return self.target.stream

    # ---- public API ------------------------------------------------------------------------
    def warmup(self, mappings=("sqrt",), formula: str = MANDELBROT) -> float:
        """Compile the escape kernel of `formula` and the colouring of `mappings` (a tiny
        render; by default sqrt, float64 frames' own); return the milliseconds spent (0 when
        already compiled). Loaded from numba's on-disk cache when possible. A mapping left out
        compiles before its first frame (the GPU compiles every mapping at once)."""
        return self.compiled.warmup(mappings, formula)

    def render(self, request: MandelbrotRequest, cancel=None, keep=()) -> Frame:
        """Render one frame. Frame.rgba comes from a ring of 3 host buffers (pinned on a GPU) and
        Frame.values (when asked for) from 3 value buffers: both stay valid until three newer frames
        of the same size have been rendered; copy them to keep them longer.

        Overlays (overlays.py): `request.overlay` is drawn in place of the picture, and the layers
        of those named in `keep` come home as host arrays; either way Frame.meta["overlay"] is an
        OverlayInfo. The escape pass is the app's own, except for lane efficiency, which runs the
        warp launch's counting twin (gpu_target.OverlayWarpLaunch).

        Three steps, each in a module of its own: the request's checks (an overlay's too, before
        any compile), the first-use compile (warm.Compiled, outside the frame's timer: reported
        as its "compile"), the frame's work (frame_steps.FrameSteps)."""
        request.validate()
        w, h = int(request.size[0]), int(request.size[1])
        counting = ov.counting(request, keep, False, bool(self.backend.is_gpu),
                               self.number_type == "float32",
                               self.target.counts_lanes(h, w, request.max_iter))
        compile_ms = self.compiled.before(request)
        return self.steps.whole_frame(request, counting, compile_ms, cancel)

    def strips(self, request: MandelbrotRequest, values: bool, rows: int | None = None,
               cancel=None, progress=None, folder: str | None = None):
        """Render `request` at any size as strips of `rows` rows, top first, so device memory stays
        bounded: an iterator of (row0, host array), the array uint8 RGBA (n, w, 4) or, with
        `values`, float64 smooth counts (n, w). Each strip's array is reused for the next one: it
        is valid until the next strip is asked for (copy it to keep it). The request, the strip
        height and the device memory are checked at once; `cancel.check()` runs before each strip
        and between bands. Writing files from strips is services/files.py's job.

        Colours in a mapping that rests on the picture's statistics (log, histogram) are those of
        the whole picture (picture_colour.py): every strip's values are computed first (kept in
        memory, or in a temporary file in `folder` when memory is short; `progress(fraction)`
        after each), then the strips are coloured with the whole picture's statistics."""
        request.validate()
        w, h = int(request.size[0]), int(request.size[1])
        rows = min(strip_rows(w, rows), h)
        self.target.check_fits(rows, w, values, request.max_iter,
                               what=f"rendering {w}×{h} in strips of {rows} rows")
        if needs_whole_picture(request, bool(values)):
            return whole_strips(self.colourer, self._strips(request, True, rows, cancel),
                                (w, h), request, request.max_iter, rows, self.target.stream,
                                cancel, progress, folder)
        return self._strips(request, bool(values), rows, cancel)

    def _strips(self, request: MandelbrotRequest, want_values: bool, rows: int, cancel):
        w, h = int(request.size[0]), int(request.size[1])
        self.compiled.before(request)
        target = self.target
        pool = BufferPool(self.backend)   # strip buffers go when the strips are done
        # buffers for a whole strip; the last, shorter strip uses their first rows
        values = target.values(pool, "strip-values", rows, w)
        counts = target.counts(pool, "strip-counts", rows, w)
        rgba = None if want_values else target.rgba(pool, "strip-rgba", rows, w, ring=1)
        src = values if want_values else rgba
        host = target.host(pool, "strip-values-host" if want_values else "strip-rgba-host",
                           (rows, w), src.dtype)
        for r0 in range(0, h, rows):
            if cancel is not None:
                cancel.check()
            n = min(rows, h - r0)
            timer = JobTimer(self.backend, target.stream, "strip")
            self._pipeline(request, r0, values[:n], None if counts is None else counts[:n],
                           None if rgba is None else rgba[:n], timer, cancel)
            got = target.download(src[:n], None if host is None else host[:n], timer)
            target.sync()
            timer.finish()
            yield r0, (got if want_values else rgba_bytes(got))

    def band(self, request: MandelbrotRequest, row0: int, rows: int, values: bool, cancel=None,
             into: np.ndarray | None = None) -> np.ndarray:
        """Rows row0 .. row0 + rows of `request`'s picture (a poster's band, tiles.py): uint8 RGBA
        (rows, w, 4), or with `values` float64 smooth counts (rows, w). The pixels index the whole
        picture's grid, so bands put together equal the picture rendered whole, bit for bit.
        Written into `into` when given (an array of that shape and type: straight from the device,
        no second host copy), else returned in a buffer that the next band of this renderer
        reuses. Device buffers are kept for the next band of the same shape."""
        band = self._queue_band(request, row0, rows, values, cancel, into)
        target, timer = self.target, band.timer
        out = into if into is not None else target.host(self.pool, "band-host", band.shape,
                                                         band.dtype)
        out = target.download(band.vals, out, timer) if values else self._rgba_home(band.rgba, out,
                                                                                   timer)
        target.sync()
        band.done()
        return out

    def band_start(self, request: MandelbrotRequest, row0: int, rows: int, values: bool,
                   cancel=None, into: np.ndarray | None = None):
        """band() queued on a GPU without waiting for it: a callable that waits for the band and
        returns it as band() does, so the next band's launches are queued meanwhile. The band
        comes back through a ring of 3 pinned buffers and is copied into `into` by the callable:
        call it before starting a second band after this one. On the CPU: rendered here."""
        if not self.backend.is_gpu:
            out = self.band(request, row0, rows, values, cancel, into)
            return lambda: out
        band = self._queue_band(request, row0, rows, values, cancel, into)
        ring = self.target.host(self.pool, "band-ring", band.shape, band.dtype, ring=3)
        got = (self.target.download(band.vals, ring, band.timer) if values
               else self._rgba_home(band.rgba, ring, band.timer))
        band.timer.queued()

        def finish() -> np.ndarray:
            band.done()
            if into is None:
                return got
            np.copyto(into, got)
            return into
        return finish

    def _queue_band(self, request, row0, rows, values, cancel, into) -> _Band:
        """A band's pixels and colours queued (band() and band_start() copy them back)."""
        request.validate()
        w, h = int(request.size[0]), int(request.size[1])
        row0, rows = int(row0), int(rows)
        if not (0 <= row0 and rows >= 1 and row0 + rows <= h):
            raise ValueError(f"band of rows {row0}..{row0 + rows} is outside the picture's {h} rows")
        self.compiled.before(request)
        target = self.target
        vals = target.values(self.pool, "band-values", rows, w)
        counts = target.counts(self.pool, "band-counts", rows, w)
        rgba = None if values else target.rgba(self.pool, "band-rgba", rows, w, ring=1)
        shape, dtype = ((rows, w), np.float64) if values else ((rows, w, 4), np.uint8)
        if into is not None and (into.shape != shape or into.dtype != dtype):
            raise ValueError(f"band output must be {dtype.__name__} {shape}, got {into.dtype} {into.shape}")
        timer = JobTimer(self.backend, target.stream, "band")
        place = (request.center_re, request.center_im, request.width, w, h, request.max_iter,
                 request.formula)
        last = self._last_band
        whole = last is not None and last[0] == place and last[1] < QUICK_BAND_S
        band = _Band(self, place, shape, np.dtype(dtype), vals, rgba, timer)
        self._pipeline(request, row0, vals, counts, rgba, timer, cancel, whole=whole)
        return band

    # ---- the pipeline ------------------------------------------------------------------------
    def _pipeline(self, request, row0, values, counts, rgba, timer, cancel, escape=True,
                  whole=False, lanes=None, drawn=None):
        """Escape values for the buffers' rows (picture rows row0 ..), unless they are reused;
        then their colours into `rgba` when one is given. whole, lanes: the target's escape's;
        drawn (overlays.Drawn): the overlay coloured in place of the picture."""
        if escape:
            args = PixelGrid.of(request).args(row0, request.max_iter)
            self.target.escape(values, args, timer, cancel, counts, whole,
                               formula=request.formula, lanes=lanes)
        if drawn is not None:
            self.colourer.overlay(values, rgba, drawn, timer, self.target.stream)
        elif rgba is not None:
            self.colourer.colour(values, rgba, request, request.max_iter, timer,
                                 self.target.stream)

    def _rgba_home(self, rgba, out, timer):
        """The colours as uint8 RGBA on the host: copied into `out` (h, w, 4) when the target
        copies, else the buffer itself (or copied into `out` when one is given)."""
        if out is None:
            return rgba_bytes(self.target.download(rgba, None, timer))
        self.target.download(rgba, words(out), timer)
        return out

    def _fetcher(self, slot, gen, values, h, w):
        """fetch_value(row, col) for one frame (one element copied on the GPU). Returns NaN once
        three newer frames have reused this frame's buffer."""
        def fetch_value(row: int, col: int) -> float:
            row, col = int(row), int(col)
            if not (0 <= row < h and 0 <= col < w):
                raise IndexError(f"pixel ({row}, {col}) is outside the {w}×{h} frame")
            if self._slot_gen[slot] != gen:
                return float("nan")
            return self.target.read(values, row, col)
        return fetch_value


def iteration_counts(values: np.ndarray, max_iter: int) -> np.ndarray:
    """Iterations the plain algorithm performs per pixel: n for a point escaping at z_n, max_iter
    inside (int64). Exact: the kernels keep floor(value) == n - 1."""
    v = np.asarray(values)
    return np.where(v >= max_iter, max_iter, np.floor(v).astype(np.int64) + 1).astype(np.int64)


def executed_iterations(request: MandelbrotRequest, values: np.ndarray) -> int:
    """Iterations the kernels really perform for this frame: the plain count, minus the interior
    points that the cardioid/bulb test answers without iterating (Mandelbrot's only)."""
    w, h = request.size
    g = PixelGrid.of(request)
    cols = g.cx + (np.arange(w) + 0.5 - g.half_w) * g.step
    rows = g.cy - (np.arange(h) + 0.5 - g.half_h) * g.step
    skipped = (mk.shortcut_mask(cols[None, :], rows[:, None]) if request.formula == MANDELBROT
               else np.zeros((h, w), dtype=bool))
    counts = iteration_counts(values, request.max_iter)
    return int(counts[~skipped].sum())
