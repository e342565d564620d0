"""A Mandelbrot picture's overlays as files beside it (`--render ... --overlay NAME[,NAME]`): each
overlay's per-pixel values (kernels/mandelbrot/overlays.shown_values: counts, or lane efficiency in
% with NaN where a pixel had no iterations) as FILE.NAME.npy, float64, rows top first, the
picture's size. The frame is rendered once more, whole, with the overlays' kernels."""
from __future__ import annotations

import os

from .files import write_npy


def overlay_paths(out: str, names) -> dict:
    """name -> the .npy path beside `out` (out's name without its extension, then .NAME.npy)."""
    stem = os.path.splitext(out)[0]
    return {n: f"{stem}.{n}.npy" for n in names}


def check_overlays(request, names, gpu: bool) -> None:
    """ValueError in plain words when an overlay of `names` has no meaning for `request`'s frame
    (lane efficiency on the CPU or on a deep frame, deep steps on a float64 frame, any on a
    frame computed in float32)."""
    from kernels.mandelbrot.jobs import DEEP, renderer_kind
    from kernels.mandelbrot.colouring.overlays import check_names
    check_names(names, renderer_kind(request) == DEEP, gpu,
                getattr(request, "number_type", "float64") == "float32",
                getattr(request, "formula", "mandelbrot"))


def write_overlays(renderer, request, out: str, names, cancel=None) -> dict:
    """Render `request` with its overlays and write each of `names` beside `out`; returns the
    paths written (name -> path) and the frame's totals line per name (name -> text)."""
    from kernels.mandelbrot.colouring.overlays import totals_text
    names = tuple(names)
    frame = renderer.render(request, cancel=cancel, keep=names)
    info = frame.meta["overlay"]
    paths = overlay_paths(out, names)
    for n, path in paths.items():
        write_npy(path, info.layers[n])
    return {n: (paths[n], totals_text(n, info.totals)) for n in names}
