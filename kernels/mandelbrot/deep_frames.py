"""Deep-zoom frames as the app and the command line use them: DeepRenderer's smooth counts coloured
on the device into a Frame, and strips of any size for exports.

DeepFrameRenderer(backend) holds one DeepRenderer, so the reference orbit and the approximation
table (and their copies on the device) serve every frame they can: pans and zooms near the last
centre cost the pixels only. On a GPU the values stay on the device: the colouring kernels
(colour.py) read them where they are and the finished RGBA is the one copy per frame (plus the
values when asked for).
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..buffers import BufferPool, ensure_device_fits
from ..frame import Frame
from ..timing import JobTimer, Timings
from .colouring import overlays as ov
from .colouring.colourer import Colourer
from .colouring.picture_colour import needs_whole_picture, whole_strips
from .requests.deep_request import add_decimal, band_shift
from .requests.request import DeepFrameRequest
from .requests.strips import strip_rows

# a deep picture's share of its progress bar per stage: the reference orbit (computed once, in the
# first strip: most of the time only at great depths), the approximation table, then the pixels of
# every strip in turn
REFERENCE_SHARE = (0.0, 0.2)
TABLE_SHARE = (0.2, 0.25)
PIXELS_SHARE = (0.25, 1.0)


class PictureProgress:
    """A deep picture's progress in strips as one fraction that only goes forward: `strip(r0, rows)`
    gives the progress(fraction, stage) callback of one strip's render, `rows_done(fraction)`
    takes a report of whole strips done; `progress(fraction)` gets the picture's fraction and
    `stages(stage)` the stage under way ("compile", "reference", "table", "pixels") as it changes."""

    def __init__(self, height: int, progress=None, stages=None):
        self.height, self.progress, self.stages = int(height), progress, stages
        self.fraction = 0.0
        self.stage = None

    def strip(self, row0: int, rows: int):
        def report(fraction: float, stage: str):
            f = min(1.0, max(0.0, float(fraction)))
            if stage == "reference":
                self._to(_within(REFERENCE_SHARE, f), stage)
            elif stage == "table":
                self._to(_within(TABLE_SHARE, f), stage)
            elif stage == "pixels":
                self._to(_within(PIXELS_SHARE, (row0 + rows * f) / self.height), stage)
            else:               # the first compile: said, no share of the bar
                self._say(stage)
        return report

    def rows_done(self, fraction: float) -> None:
        self._to(_within(PIXELS_SHARE, float(fraction)), "pixels")

    def _to(self, fraction: float, stage: str) -> None:
        if fraction < self.fraction:    # a later strip's reused orbit: already counted
            return
        self._say(stage)
        if fraction > self.fraction:
            self.fraction = fraction
            if self.progress is not None:
                self.progress(fraction)

    def _say(self, stage: str) -> None:
        if stage != self.stage:
            self.stage = stage
            if self.stages is not None:
                self.stages(stage)


def _within(span: tuple[float, float], fraction: float) -> float:
    return span[0] + (span[1] - span[0]) * fraction


class DeepFrameRenderer:
    """Renders DeepFrameRequests on one backend; use from one thread (the scheduler's)."""

    def __init__(self, backend):
        from .deep.renderer import DeepRenderer  # numba kernels: compiled on first use
        self.backend = backend
        self.deep = DeepRenderer(backend)
        from .reference.reference_store import shared_store
        self.deep.references = shared_store()   # a movie's pinned orbit; the disk cache
        self.colourer = Colourer(backend)
        self.pool = BufferPool(backend)
        self._colour_warm = False
        self._last = None           # (place key, DeepResult) of the last frame: recolouring reuses it

    def warmup(self) -> float:
        """Compile the deep kernels and the colouring kernels; milliseconds spent (0 when done)."""
        t = time.perf_counter()
        ms = self.deep.warmup()
        if not self._colour_warm:
            timer = JobTimer(self.backend, self.stream, "warm-up")
            self.colourer.warm(timer, self.stream)
            timer.finish()
            self._colour_warm = True
            ms = (time.perf_counter() - t) * 1e3
        return ms

    @property
    def stream(self):
        """The stream the deep kernels and the colourer work on (None on the CPU)."""
        return self.deep.stream

    def render(self, request: DeepFrameRequest, cancel=None, progress=None, keep=()) -> Frame:
        """One coloured frame. progress(fraction, stage) as DeepRenderer.render_values reports it,
        and once with stage "compile" before the kernels are first compiled.
        Frame.rgba comes from a ring of 3 host buffers (pinned on a GPU); Frame.values (when asked
        for) likewise; meta: format, stats, reused (reference), table_reused, reference_points,
        precision_bits, reference_period (None unless the orbit stopped at its period), max_iter,
        backend. Overlays as Renderer.render draws and keeps them (`keep`), from the deep loops'
        layer twins: Frame.meta["overlay"]."""
        return self.start(request, cancel, progress, keep)()

    def start(self, request: DeepFrameRequest, cancel=None, progress=None, keep=()):
        """render() queued on the GPU without waiting for it: a callable that waits for this
        frame's work alone and gives its Frame, so that the next frame's host part (its
        reference check, its launches) runs while this one's pixels do. Call it before starting
        a second frame after this one (the frames' host buffers are a ring of 3). A frame with
        overlays is waited for here."""
        request.validate()
        counting = ov.counting(request, keep, True, bool(self.backend.is_gpu),
                               request.number_type == "float32")
        if counting is not None:
            frame = self._counted(request, counting, cancel, progress)
            return lambda: frame
        w, h = int(request.size[0]), int(request.size[1])
        compile_ms = None
        if not (self._colour_warm and self.deep._compiled):
            if progress is not None:        # seconds on a first start: say what is happening
                progress(0.0, "compile")
            compile_ms = self.warmup()
        gpu = self.backend.is_gpu
        key = _place_key(request)
        recolour = self._last is not None and self._last[0] == key
        if recolour:        # only the colouring changed: the values are still where they were
            pending = self._last[1]
        else:
            self._last = None
            self.deep.number_type = request.number_type
            pending = self.deep.start_values(request, cancel=cancel, progress=progress,
                                             to_host=not gpu)
            self._last = (key, pending)
        source = self.deep.reference_source
        fetch_value = self._fetcher(pending.values, h, w)
        stream = self.stream
        timer = JobTimer(self.backend, stream, "colour")
        if gpu:
            rgba = self.pool.device("rgba", (h, w), np.uint32, stream=stream)
        else:
            rgba = self.pool.host("rgba", (h, w), np.uint32, pinned=False, ring=3)
        self.colourer.colour(pending.values, rgba, request, request.max_iter, timer, stream)
        frame_rgba, host_values = self._home(rgba, pending.values, request.want_values, timer,
                                             stream)
        timer.queued()

        def finish() -> Frame:
            try:
                res = pending.result()
            except BaseException:
                if self._last is not None and self._last[1] is pending:
                    self._last = None       # nothing to recolour
                raise
            timings = res.timings if not recolour else Timings(
                backend=self.backend.name, label=f"deep {request.formula} {w}×{h}, recolour ({res.format})")
            if compile_ms:
                timings.add("compile", compile_ms)
            colour_t = timer.finish()
            _merge(timings, colour_t)
            if recolour:
                timings.phases_ms["total"] = colour_t.phases_ms["total"]
            return Frame(rgba=frame_rgba, timings=timings, request=request, values=host_values,
                         fetch_value=fetch_value,
                         meta={"format": res.format, "stats": dict(res.stats),
                               "reused": res.reused or recolour, "recoloured": recolour,
                               "reference_source": source,
                               "table_reused": res.table_reused,
                               "reference_points": getattr(res.reference, "length", None),
                               "precision_bits": getattr(res.reference, "precision", None),
                               "reference_period": getattr(res.reference, "period", None),
                               "max_iter": request.max_iter, "backend": self.backend.label,
                               "number_type": res.number_type})
        return finish

    def _counted(self, request, counting, cancel, progress) -> Frame:
        """A frame with overlays: the values with the layers the deep loops' twins count, then the
        overlay or the picture coloured where they lie; recolouring never reuses its values."""
        gpu = bool(self.backend.is_gpu)
        w, h = int(request.size[0]), int(request.size[1])
        max_iter = int(request.max_iter)
        compile_ms = None
        if not (self._colour_warm and self.deep._compiled):
            if progress is not None:
                progress(0.0, "compile")
            compile_ms = self.warmup()
        self._last = None
        self.deep.number_type = request.number_type
        stream = self.stream
        shape = (ov.N_DEEP_LAYERS, h, w)
        layers = (self.pool.device("overlay-layers", shape, np.int32, stream=stream) if gpu else
                  self.pool.host("overlay-layers", shape, np.int32, pinned=False))
        res = self.deep.render_values(request, cancel=cancel, progress=progress, to_host=not gpu,
                                      layers=layers)
        timings = res.timings
        if compile_ms:
            timings.add("compile", compile_ms)
        timer = JobTimer(self.backend, stream, "colour")
        if gpu:
            rgba = self.pool.device("rgba", (h, w), np.uint32, stream=stream)
        else:
            rgba = self.pool.host("rgba", (h, w), np.uint32, pinned=False, ring=3)
        scale = None
        if counting.name:
            scale = self.colourer.colour_layers(layers, counting.name, max_iter, rgba, timer,
                                                stream)
        else:
            self.colourer.colour(res.values, rgba, request, max_iter, timer, stream)
        kept = {}
        if counting.keep:
            host = layers
            if gpu:
                host = np.empty(layers.shape, layers.dtype)
                with timer.phase("d2h", gpu=True, nbytes=host.nbytes, gate=False):  # pageable
                    layers.copy_to_host(host, stream=stream)
                stream.synchronize()
            kept = {n: ov.shown_values(n, np.array(host)) for n in counting.keep}
        frame_rgba, host_values = self._home(rgba, res.values, request.want_values, timer, stream)
        # iterations performed, those the BLA steps skipped and every pass of a redone pixel
        totals = dict(res.stats, pixels=w * h,
                      useful=res.stats["perturbation_steps"] + res.stats["bla_iterations"])
        info = ov.OverlayInfo(counting.name, scale, totals, counting.why, kept)
        _merge(timings, timer.finish())
        timings.label = info.label(timings.label)
        return Frame(rgba=frame_rgba, timings=timings, request=request, values=host_values,
                     fetch_value=self._fetcher(res.values, h, w),
                     meta={"format": res.format, "stats": dict(res.stats), "reused": res.reused,
                           "recoloured": False, "table_reused": res.table_reused,
                           "reference_points": getattr(res.reference, "length", None),
                           "precision_bits": getattr(res.reference, "precision", None),
                           "max_iter": max_iter, "backend": self.backend.label, "overlay": info,
                           "number_type": getattr(res, "number_type", "float64")})

    def _home(self, rgba, values, want_values: bool, timer, stream):
        """A frame's RGBA as (H, W, 4) uint8 on the host and, if wanted, its values there: on a
        GPU copied into the host rings (each copy a timed phase), valid until the third frame
        after; on the CPU where they already lie."""
        h, w = rgba.shape
        if not self.backend.is_gpu:
            return rgba.view(np.uint8).reshape(h, w, 4), values if want_values else None
        frame_rgba = self.pool.host("rgba", (h, w, 4), np.uint8, ring=3)
        with timer.phase("d2h", gpu=True, nbytes=frame_rgba.nbytes):
            rgba.copy_to_host(frame_rgba.view(np.uint32).reshape(h, w), stream=stream)
        host_values = None
        if want_values:
            host_values = self.pool.host("values", (h, w), np.float64, ring=3)
            with timer.phase("d2h", gpu=True, nbytes=host_values.nbytes):
                values.copy_to_host(host_values, stream=stream)
        return frame_rgba, host_values

    def _fetcher(self, values, h, w):
        """fetch_value(row, col) for hover read-outs: one element (8 bytes from the device). The
        deep renderer reuses its value buffer for the next frame: a later read answers NaN."""
        token = object()
        self._latest = token

        def fetch_value(row: int, col: int) -> float:
            row, col = int(row), int(col)
            if not (0 <= row < h and 0 <= col < w):
                raise IndexError(f"pixel ({row}, {col}) is outside the {w}×{h} frame")
            if self._latest is not token:
                return float("nan")
            if not self.backend.is_gpu:
                return float(values[row, col])
            one = self.pool.host("probe", (1,), np.float64)
            values[row, col:col + 1].copy_to_host(one, stream=self.stream)
            self.stream.synchronize()
            return float(one[0])
        return fetch_value

    def strips(self, request: DeepFrameRequest, values: bool, rows: int | None = None, cancel=None,
               progress=None, folder: str | None = None, stages=None):
        """The frame at any size as strips of `rows` rows, top first: an iterator of (row0, array),
        uint8 RGBA (n, w, 4) or, with `values`, float64 smooth counts (n, w), each valid until the
        next strip is asked for. Each strip is a deep frame of its own centre (the frame's centre
        moved by an exact decimal amount), sharing the reference orbit. A mapping that depends on
        the frame's statistics ("log", "histogram") takes them from the whole picture, as
        Renderer.strips does (every strip's values first). `progress(fraction)` moves within each
        strip as its stages go (PictureProgress: the reference orbit, the table, the pixels) up to
        1 when the last strip's values are done; `stages(stage)` hears each stage as it starts."""
        request.validate()
        w, h = int(request.size[0]), int(request.size[1])
        rows = min(strip_rows(w, rows), h)
        if self.backend.is_gpu:
            ensure_device_fits(rows * w * 20, what=f"rendering {w}×{h} in strips of {rows} rows")
        told = None if progress is None and stages is None else PictureProgress(h, progress, stages)
        if needs_whole_picture(request, bool(values)):
            return whole_strips(self.colourer, self._strips(request, True, rows, cancel, told),
                                (w, h), request, request.max_iter, rows, self.stream, cancel,
                                None if told is None else told.rows_done, folder)
        return self._strips(request, bool(values), rows, cancel, told)

    def band(self, request: DeepFrameRequest, row0: int, rows: int, values: bool, cancel=None,
             into: np.ndarray | None = None) -> np.ndarray:
        """Rows row0 .. row0 + rows of `request`'s picture (a poster's band, tiles.py), as
        Renderer.band gives them: uint8 RGBA (rows, w, 4), or with `values` float64 smooth counts
        (rows, w); a deep frame of its own, cut as strips are (band_request). Copied into `into`
        when given, else returned in the frame's buffer (valid until the next frame)."""
        return self.band_start(request, row0, rows, values, cancel, into)()

    def band_start(self, request: DeepFrameRequest, row0: int, rows: int, values: bool,
                   cancel=None, into: np.ndarray | None = None):
        """band() queued as start() queues a frame: a callable that waits for the band and gives
        it as band() does (copied into `into` when given)."""
        finish = self.start(band_request(request, row0, rows, values), cancel=cancel)

        def band() -> np.ndarray:
            frame = finish()
            got = frame.values if values else frame.rgba
            if into is None:
                return got
            np.copyto(into, got)
            return into
        return band

    def _strips(self, request, want_values, rows, cancel, told=None):
        h = int(request.size[1])
        for r0 in range(0, h, rows):
            if cancel is not None:
                cancel.check()
            n = min(rows, h - r0)
            strip = band_request(request, r0, n, want_values)
            frame = self.render(strip, cancel=cancel,
                                progress=None if told is None else told.strip(r0, n))
            if told is not None:
                told.rows_done((r0 + n) / h)
            yield r0, (frame.values if want_values else frame.rgba)


def band_request(request: DeepFrameRequest, row0: int, rows: int, want_values: bool
                 ) -> DeepFrameRequest:
    """Rows row0 .. row0 + rows of `request`'s picture as a deep frame of its own: the same width
    per pixel, the centre moved down by an exact decimal amount. Exports in strips and posters in
    bands (tiles.py) both cut a picture this way, so equal cuts give equal pixels."""
    w = int(request.size[0])
    tall, base = request.within if request.within is not None else (int(request.size[1]), 0)
    # from the picture's centre (a band of a band too): DeepRequest.picture() takes it back
    row0 = int(base) + int(row0)
    shift = band_shift(request.width_decimal, w, int(tall), row0, int(rows))
    return dataclasses.replace(request, center_im=add_decimal(request.picture().center_im, shift),
                               size=(w, rows), want_values=want_values, within=(tall, row0))


def _place_key(r: DeepFrameRequest) -> tuple:
    """What the values depend on (everything but the colouring and where the frame is wanted)."""
    return (str(r.center_re), str(r.center_im), str(r.width), tuple(r.size), int(r.max_iter),
            r.number_format, r.bla, r.number_type, r.within, getattr(r, "pixels", ""))


def _merge(into, extra) -> None:
    """Add the colouring job's phases, bytes and details to the frame's Timings."""
    for phase in ("compile", "h2d", "kernel", "d2h", "host"):
        into.add(phase, extra.phases_ms.get(phase))
    for k, v in extra.bytes.items():
        into.bytes[k] = into.bytes.get(k, 0) + v
    for k, v in extra.detail.items():
        if v is None:
            into.detail.setdefault(k, None)
        else:
            into.detail[k] = (into.detail.get(k) or 0.0) + v
    if into.phases_ms.get("total") is not None and extra.phases_ms.get("total") is not None:
        into.phases_ms["total"] += extra.phases_ms["total"]
