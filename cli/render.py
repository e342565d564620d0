"""`main.py --render VIEW --out FILE`: one frame without a window, written as .png or .npy."""
from __future__ import annotations

import importlib
import os

from .args import VIEW_OPTIONS, parse_size
from .failures import UNUSABLE, USAGE, fail, resolve_backend
from .files import FORMATS, check_writable, write_npy, write_png, write_strips
from .requests import RENDER_VIEWS


def run_render(args) -> int:
    view = args.render
    options, build_request = RENDER_VIEWS[view]
    given = {k: getattr(args, k) for k in VIEW_OPTIONS if getattr(args, k) is not None}
    wrong = [k for k in given if k not in options]
    if wrong:
        return fail(USAGE, f"--{wrong[0]} does not apply to --render {view}; its options are "
                           + ", ".join("--" + o for o in options))
    if not args.out:
        return fail(USAGE, "--render needs --out FILE.png or FILE.npy")
    ext = os.path.splitext(args.out)[1].lower()
    if ext not in FORMATS:
        return fail(USAGE, f"--out must end in .png or .npy, not {ext or 'nothing'!r}")
    try:
        w, h = parse_size(args.size)
        request = build_request({k: getattr(args, k) for k in options}, w, h, ext == ".npy")
    except ValueError as exc:
        return fail(USAGE, str(exc))
    try:
        check_writable(args.out)
    except ValueError as exc:
        return fail(USAGE, str(exc))
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(UNUSABLE, why)
    from kernels.buffers import OutOfDeviceMemory
    renderer = importlib.import_module(f"kernels.{view}.renderer").Renderer(be)
    try:
        write_frame(renderer, request, args.out)
    except (OutOfDeviceMemory, ValueError, OSError) as exc:
        return fail(UNUSABLE, str(exc))
    print(f"wrote {args.out} ({w}x{h}, {view}, {be.label})")
    return 0


def write_frame(renderer, request, path: str) -> None:
    """Render `request` into `path` (.png colours, .npy values): in strips when the renderer
    offers them (a Mandelbrot picture of any size), else as one frame."""
    npy = path.lower().endswith(".npy")
    if hasattr(renderer, "strips"):
        w, h = request.size
        write_strips(path, w, h, renderer.strips(request, values=npy))
        return
    frame = renderer.render(request)
    if npy:
        write_npy(path, frame.values)
    else:
        write_png(path, frame.rgba)
