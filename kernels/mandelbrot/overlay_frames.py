"""Frames drawn with overlays: a request whose `overlay` names one (or a caller that wants the
layers, `keep`) comes here from Renderer.render or DeepFrameRenderer.render, which otherwise run
exactly as before. The layers are computed where the frame is (the warp loop's counting twin, the
deep loops, overlay_device.py); the overlay is coloured there too, into the frame's RGBA in place
of the picture, so the frame still crosses the bus once; only the kept layers and a few totals
follow.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..frame import Frame
from ..timing import JobTimer
from . import escape_gpu as mk
from . import overlay_device as od
from . import overlays as ov
from .frame_work import start_count
from .gpu_target import OverlayWarpLaunch, WarpLaunch


def _check(request, keep, deep: bool, gpu: bool, float32: bool) -> str:
    name = request.overlay
    names = tuple(keep) + ((name,) if name else ())
    ov.check_names(names, deep, gpu, float32)
    return name


def _label(timings, info: ov.OverlayInfo, w: int, h: int, max_iter: int, what: str) -> None:
    """The frame's label with the overlay's totals: the timing panel's title shows it."""
    text = info.text()
    timings.label = (f"{what} {w}×{h}, {max_iter:,} iterations" + (f" · {text}" if text else ""))


def _gpu_colour(backend, stream, name, layers, den, k, scale, rgba, timer):
    """Overlay `name` (layer k, over layer den when >= 0) into `rgba` on the device."""
    lut = _device_lut(stream)
    blocks, threads = od.grid2(rgba.shape, backend.simulated)
    with timer.phase("kernel", gpu=True, detail="overlay"):
        od.colour_layer_kernel[blocks, threads, stream](
            layers, k, den, rgba, scale.lo, scale.hi, scale.log, lut,
            np.uint32(ov.no_value_word()))


_LUTS: dict = {}


def _device_lut(stream):
    from numba import cuda
    ctx = id(cuda.current_context())
    got = _LUTS.get(ctx)
    if got is None:
        got = _LUTS[ctx] = cuda.to_device(ov.lut_words(), stream=stream)
    return got


def _gpu_max(backend, stream, pool, layers, k, timer) -> int:
    out = pool.device("overlay-max", (1,), np.int32, stream=stream)
    host = pool.host("overlay-max", (1,), np.int32)
    blocks, threads = od.reduce_grid(backend.simulated)
    with timer.phase("kernel", gpu=True, detail="overlay"):
        mk.zero_kernel[1, 32, stream](out)
        od.layer_max_kernel[blocks, threads, stream](layers, k, out)
    out.copy_to_host(host, stream=stream)
    stream.synchronize()
    return int(host[0])


def _download_layers(layers, gpu, pool, stream, timer):
    if not gpu:
        return np.array(layers)
    host = np.empty(layers.shape, layers.dtype)
    with timer.phase("d2h", gpu=True, nbytes=host.nbytes, gate=False):     # pageable
        layers.copy_to_host(host, stream=stream)
    stream.synchronize()
    return host


# ---------------------------------------------------------------- float64 frames

def float64_frame(renderer, request, cancel=None, keep=()) -> Frame:
    """`renderer` (renderer.Renderer)'s frame of `request` with its overlays: the picture, or the
    overlay `request.overlay` in its place; Frame.meta["overlay"] an OverlayInfo whose `layers`
    hold the overlays named in `keep` (host arrays, overlays.shown_values).

    The escape pass is the app's own (the same kernels as a frame without overlays), except for
    lane efficiency, which needs the warp launch's twin (gpu_target.OverlayWarpLaunch) to count
    what it issued. Either way the overlay is coloured from what the pass left, in place of the
    picture, and the frame's useful iterations come from the roofline's count that every frame
    runs."""
    request.validate()
    gpu = bool(renderer.backend.is_gpu)
    name = _check(request, keep, False, gpu, getattr(renderer, "number_type", "") == "float32")
    w, h = int(request.size[0]), int(request.size[1])
    max_iter = int(request.max_iter)
    compile_ms = renderer._warm_for(request)
    target, pool = renderer.target, renderer.pool
    stream = target.stream
    timer = JobTimer(renderer.backend, stream, "mandelbrot overlay")
    if compile_ms is not None:
        timer.add_host_ms("compile", compile_ms)
    values = target.values(pool, "overlay-values", h, w)
    counts = target.counts(pool, "overlay-counts", h, w)
    rgba = target.rgba(pool, "rgba", h, w)
    args = _pixel_grid(request).args(0, max_iter)
    lanes = None
    if gpu and ov.LANES in (name,) + tuple(keep):
        lanes = _gpu_lanes_escape(renderer, values, counts, args, h, timer, cancel)
    else:
        target.escape(values, args, timer, cancel, counts)
    # the roofline's counted work, as Renderer.render counts it: its useful iterations are the
    # overlay's total
    work = start_count(renderer.backend, pool, stream, values, args, timer, kind="f64")
    why = {n: r for n in ov.NAMES if (r := ov.unavailable(n, False, gpu)) is not None}
    if gpu and not (_lanes_counted(target, h, w, max_iter) if lanes is None
                    else lanes.home is not None):
        why[ov.LANES] = ov.SLICED_REASON
    for n in (name,) + tuple(keep):
        if n in why:
            raise ValueError(f"overlay {n!r} has no meaning for this frame: {why[n]}")
    scale = ov.scale_for(name, max_iter) if name else None
    if not name:
        renderer._colour(values, rgba, request, timer)
    elif gpu:
        _gpu_colour_float64(renderer, name, values, lanes, args, scale, rgba, timer)
    else:
        with timer.phase("kernel", detail="overlay"):
            layers = _cpu_layers(values, args, pool.host(
                "overlay-layers", (ov.N_FLOAT64_LAYERS, h, w), np.int32, pinned=False))
            od.colour_cpu(ov.shown_values(name, layers), scale, rgba)
    host_rgba = target.host(pool, "rgba", (h, w, 4), np.uint8, ring=3)
    frame_rgba = renderer._rgba_home(rgba, host_rgba, timer)
    host_values = None
    if request.want_values or keep:
        host_values = target.download(
            values, target.host(pool, "values", (h, w), np.float64, ring=3), timer)
    slots_home = None
    if keep and lanes is not None:
        slots_home = target.download(lanes.slots, np.empty((h, w), np.int32), timer)
    timings = timer.finish()
    work.finish(timings)
    totals = {"pixels": w * h, "useful": work.useful()}
    if lanes is not None and lanes.home is not None:
        totals["lane_iterations"] = int(lanes.home[0])
    kept = {}
    if keep:
        layers = _cpu_layers(host_values, args, np.empty((ov.N_FLOAT64_LAYERS, h, w), np.int32))
        if slots_home is not None:
            layers[ov.F_SLOTS] = slots_home
        kept = {n: ov.shown_values(n, layers) for n in keep}
    info = ov.OverlayInfo(name, scale, totals, why, kept)
    _label(timings, info, w, h, max_iter, "mandelbrot")
    return Frame(rgba=frame_rgba, timings=timings, request=request,
                 values=host_values if request.want_values else None,
                 fetch_value=lambda row, col: target.read(values, int(row), int(col)),
                 meta={"recoloured": False, "max_iter": max_iter, "overlay": info,
                       "number_type": getattr(renderer, "number_type", "float64"),
                       "backend": renderer.backend.label})


def _cpu_layers(values, args, layers) -> np.ndarray:
    """`layers` (2, H, W) int32 of a float64 frame, on the host, from its values: the
    iterations, and no lane-iterations (0)."""
    od.iterations_from_values_cpu(values, layers, args[0], *args[2:])
    layers[ov.F_SLOTS] = 0
    return layers


@dataclass(frozen=True)
class _Grid:
    """renderer.PixelGrid's fields and args (imported from there, renderer.py and this module
    would import each other; tests/kernels/test_overlays.py checks the two agree)."""
    cx: float
    cy: float
    step: float
    half_w: float
    half_h: float

    def args(self, row0: int, max_iter: int) -> tuple:
        return (int(row0), 0, self.cx, self.cy, self.step, self.half_w, self.half_h,
                int(max_iter))


def _pixel_grid(request) -> _Grid:
    w, h = int(request.size[0]), int(request.size[1])
    return _Grid(float(request.center_re), float(request.center_im), float(request.width) / w,
                 w / 2.0, h / 2.0)


def _merge(into, extra) -> None:
    """The colouring's phases and bytes added to the deep frame's Timings (deep_frames._merge's
    rule; imported from there, the two modules would import each other)."""
    for phase in ("compile", "h2d", "kernel", "d2h", "host"):
        into.add(phase, extra.phases_ms.get(phase))
    for k, v in extra.bytes.items():
        into.bytes[k] = into.bytes.get(k, 0) + v
    for k, v in extra.detail.items():
        into.detail[k] = (into.detail.get(k) or 0.0) + (v or 0.0)
    if into.phases_ms.get("total") is not None and extra.phases_ms.get("total") is not None:
        into.phases_ms["total"] += extra.phases_ms["total"]


# what the overlays keep per renderer (its lane-counting launch, its palette on the device), for
# as long as the renderer lives: kept beside it rather than set on it
_PER_RENDERER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _kept(renderer) -> dict:
    return _PER_RENDERER.setdefault(renderer, {})


@dataclass
class _Lanes:
    """The lane-efficiency pass's device buffers: `slots` (H, W) int32 lane-iterations per pixel,
    `total` (1,) int64; `home` the pinned host copy of the total (valid once the stream has
    synchronised), None when a band of the frame ran in iteration slices (no lanes counted)."""
    slots: object
    total: object
    home: object


def _gpu_lanes_escape(renderer, values, counts, args, h, timer, cancel) -> _Lanes:
    """The escape pass with the warp launch's twin, which also counts lane-iterations; a frame
    that runs in iteration slices (or a launch other than the warp launch) runs as it would
    and has none."""
    target, pool = renderer.target, renderer.pool
    stream = target.stream
    w = values.shape[1]
    slots = pool.device("overlay-slots", (h, w), np.int32, stream=stream)
    total = pool.device("overlay-lanes", (1,), np.int64, stream=stream)
    plain = target.launch
    if type(plain) is not WarpLaunch:
        target.escape(values, args, timer, cancel, counts)
        return _Lanes(slots, total, None)
    kept = _kept(renderer)
    launch = kept.get("launch")
    if launch is None or launch.thresh != plain.thresh or launch.per_sm != plain.per_sm:
        launch = kept["launch"] = OverlayWarpLaunch(plain, None, None)
    launch.slots, launch.lanes, launch.rows = slots, total, 0
    target.kernel(mk.zero_kernel, 1, 32)(total)
    target.escape(values, args, timer, cancel, counts, launch=launch)
    if launch.rows < h:
        return _Lanes(slots, total, None)
    home = pool.host("overlay-lanes", (1,), np.int64)
    with timer.phase("d2h", gpu=True, nbytes=home.nbytes):
        total.copy_to_host(home, stream=stream)
    return _Lanes(slots, total, home)


def _lanes_counted(target, h, w, max_iter) -> bool:
    """Whether the lane-efficiency pass would count this frame's lanes: the warp launch, in
    launches that each run their pixels to the end (no iteration slices)."""
    return type(target.launch) is WarpLaunch and not target._sliced(h, w, max_iter)


def _gpu_colour_float64(renderer, name, values, lanes, args, scale, rgba, timer):
    """Overlay `name` of a float64 frame into `rgba` on the device, from its values (and the
    lane-iterations), launched as the renderer launches its own kernels."""
    target = renderer.target
    kept = _kept(renderer)
    lut = kept.get("lut")
    if lut is None:
        lut = kept["lut"] = _device_lut(target.stream)
    blocks, threads = od.grid2(rgba.shape, target.simulated)
    span = od.span_of(scale)
    with timer.phase("kernel", gpu=True, detail="overlay"):
        if name == ov.LANES:
            target.kernel(od.colour_lanes_kernel, blocks, threads)(
                values, lanes.slots, rgba, args[-1], scale.lo, span, lut,
                np.uint32(ov.no_value_word()))
        else:
            target.kernel(od.colour_iterations_kernel, blocks, threads)(
                values, rgba, args[0], *args[2:], scale.lo, span, bool(scale.log), lut)


# ---------------------------------------------------------------- deep frames

def deep_frame(frames, request, cancel=None, progress=None, keep=()) -> Frame:
    """`frames` (deep_frames.DeepFrameRenderer)'s frame of `request` with its overlays, as
    float64_frame gives them; the per-pixel counts come from the deep loops' layer twins."""
    request.validate()
    backend = frames.backend
    gpu = bool(backend.is_gpu)
    number_type = getattr(request, "number_type", "float64")
    name = _check(request, keep, True, gpu, number_type == "float32")
    w, h = int(request.size[0]), int(request.size[1])
    max_iter = int(request.max_iter)
    compile_ms = None
    if not (frames._colour_warm and frames.deep._compiled):
        if progress is not None:
            progress(0.0, "compile")
        compile_ms = frames.warmup()
    frames._last = None          # its recolour cache: this frame's values are not kept for it
    frames.deep.number_type = number_type      # as DeepFrameRenderer.render sets it
    stream = frames._stream()
    pool = frames.pool
    shape = (ov.N_DEEP_LAYERS, h, w)
    layers = (pool.device("overlay-layers", shape, np.int32, stream=stream) if gpu else
              pool.host("overlay-layers", shape, np.int32, pinned=False))
    res = frames.deep.render_values(request, cancel=cancel, progress=progress, to_host=not gpu,
                                    layers=layers)
    timings = res.timings
    if compile_ms:
        timings.add("compile", compile_ms)
    timer = JobTimer(backend, stream, "colour")
    if gpu:
        rgba = pool.device("rgba", (h, w), np.uint32, stream=stream)
    else:
        rgba = pool.host("rgba", (h, w), np.uint32, pinned=False, ring=3)
    why = {n: r for n in ov.NAMES if (r := ov.unavailable(n, True, gpu)) is not None}
    scale = None
    if name:
        k = ov.DEEP_LAYER[name]
        top = 0
        if name not in (ov.ITERATIONS, ov.REDONE):
            top = (_gpu_max(backend, stream, pool, layers, k, timer) if gpu
                   else int(layers[k].max(initial=0)))
        scale = ov.scale_for(name, max_iter, top)
        if gpu:
            _gpu_colour(backend, stream, name, layers, -1, k, scale, rgba, timer)
        else:
            with timer.phase("kernel", detail="overlay"):
                od.colour_cpu(ov.shown_values(name, layers), scale, rgba)
    else:
        frames.colourer.colour(res.values, rgba, request, max_iter, timer, stream)
    kept = {}
    if keep:
        host = _download_layers(layers, gpu, pool, stream, timer)
        kept = {n: ov.shown_values(n, host) for n in keep}
    host_values = None
    if gpu:
        frame_rgba = pool.host("rgba", (h, w, 4), np.uint8, ring=3)
        with timer.phase("d2h", gpu=True, nbytes=frame_rgba.nbytes):
            rgba.copy_to_host(frame_rgba.view(np.uint32).reshape(h, w), stream=stream)
        if request.want_values:
            host_values = res.values.copy_to_host(stream=stream)
    else:
        frame_rgba = rgba.view(np.uint8).reshape(h, w, 4)
        if request.want_values:
            host_values = np.array(res.values)
    # iterations performed, those the BLA steps skipped and every pass of a redone pixel included
    totals = dict(res.stats, pixels=w * h,
                  useful=res.stats["perturbation_steps"] + res.stats["bla_iterations"])
    info = ov.OverlayInfo(name, scale, totals, why, kept)
    _merge(timings, timer.finish())
    text = info.text()
    if text:
        timings.label += f" · {text}"
    return Frame(rgba=frame_rgba, timings=timings, request=request, values=host_values,
                 fetch_value=frames._fetcher(res.values, h, w),
                 meta={"format": res.format, "stats": dict(res.stats), "reused": res.reused,
                       "recoloured": False, "table_reused": res.table_reused,
                       "reference_points": getattr(res.reference, "length", None),
                       "precision_bits": getattr(res.reference, "precision", None),
                       "max_iter": max_iter, "backend": backend.label, "overlay": info,
                       "number_type": getattr(res, "number_type", "float64")})
