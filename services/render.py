"""One frame of a view into a file (what `--render` does once its options are checked): the
renderer that draws the request, and the picture written in strips or whole, atomically."""
from __future__ import annotations

import importlib
import os

from .files import write_npy, write_png, write_strips

# the share of a picture coloured as one that its value pass takes on the progress bar
VALUE_PASS_SHARE = 0.9


def _scaled(progress, lo: float, hi: float):
    """progress(fraction) mapped onto lo .. hi of the bar (None stays None)."""
    if progress is None:
        return None
    return lambda fraction: progress(lo + (hi - lo) * float(fraction))


def view_renderer(view: str, request, backend, probe: bool = False, one_frame: bool = False):
    """The renderer for `request` of `view`: for the Mandelbrot view the one kernels.mandelbrot
    .jobs chooses (a deep frame's needs gmpy2: RuntimeError saying how to install it when
    missing), else the view's Renderer. `probe`: only check that it can be made (None).
    `one_frame`: it draws this frame only, so a deep reference gets no headroom for zooms in."""
    if view == "mandelbrot":
        from kernels.mandelbrot.jobs import check_renderer, make_renderer
        check_renderer(request)
        if probe:
            return None
        renderer = make_renderer(request, backend)
        if one_frame and hasattr(renderer, "deep"):
            renderer.deep.precision_headroom = 0
        return renderer
    if probe:
        return None
    return importlib.import_module(f"kernels.{view}.renderer").Renderer(backend)


def write_frame(renderer, request, path: str, cancel=None, progress=None, stages=None,
                rows: int | None = None) -> None:
    """Render `request` into `path` (.png colours, .npy values): in strips when the renderer
    offers them (a Mandelbrot picture of any size), else as one frame. `cancel.check()` stops it
    between strips and inside long kernels; the file at `path` is then left as it was.
    `progress(fraction)` after each strip, and within each strip of a deep picture, whose
    `stages(stage)` hears each stage as it starts (the compile, reference, table, pixels).
    `rows`: the strips' height when the caller wants another cut than the renderer's own."""
    npy = path.lower().endswith(".npy")
    if hasattr(renderer, "strips"):
        w, h = request.size
        from kernels.mandelbrot.jobs import DEEP, renderer_kind
        from kernels.mandelbrot.colouring.picture_colour import needs_whole_picture
        deep = {"stages": stages} if renderer_kind(request) == DEEP else None
        if needs_whole_picture(request, npy):
            # coloured as one picture: every strip's values first (most of the time), then the
            # colours (kernels/mandelbrot/colouring/picture_colour.py); the values wait beside the output
            # when memory is short
            first = _scaled(progress, 0.0, VALUE_PASS_SHARE)
            strips = renderer.strips(request, values=False, rows=rows, cancel=cancel, progress=first,
                                     folder=os.path.dirname(os.path.abspath(path)), **(deep or {}))
            progress = _scaled(progress, VALUE_PASS_SHARE, 1.0)
        elif deep is not None:     # a deep picture's strips say how far they are as they go
            strips = renderer.strips(request, values=npy, rows=rows, cancel=cancel, progress=progress,
                                     **deep)
            progress = None        # (whole strips done are already in there)
        else:
            strips = renderer.strips(request, values=npy, rows=rows, cancel=cancel)
        write_strips(path, w, h, strips, progress=progress)
        return
    frame = renderer.render(request, cancel=cancel)
    if npy:
        write_npy(path, frame.values)
    else:
        write_png(path, frame.rgba)
