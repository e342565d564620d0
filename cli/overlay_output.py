"""`--overlay NAME[,NAME]` with `--render mandelbrot`: the option's check and, once the picture is
written, the overlays beside it (services/overlay_files.py)."""
from __future__ import annotations

import argparse

from .failures import USAGE, fail


def overlay_value(text: str) -> tuple:
    """The overlay names of 'NAME[,NAME]'; an unknown one is refused with every name there is."""
    from kernels.mandelbrot.colouring.overlays import parse_names
    try:
        return parse_names(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--overlay: {exc}") from None


def overlay_problem(args, view: str, request, backend) -> int | None:
    """fail()'s status when --overlay cannot be honoured for this render (said in one line), else
    None: only the Mandelbrot view has overlays, posters in bands do not write them, and each
    named overlay must have a meaning for the frame on this backend."""
    if not args.overlay:
        return None
    if view != "mandelbrot":
        return fail(USAGE, f"--overlay applies only to --render mandelbrot, not {view}")
    if args.gpus or args.scheduler:
        return fail(USAGE, "--overlay is written by a single renderer: leave out --gpus and "
                           "--scheduler (posters in bands have no overlays)")
    from services.overlay_files import check_overlays
    try:
        check_overlays(request, args.overlay, backend.is_gpu)
    except ValueError as exc:
        return fail(USAGE, str(exc))
    return None


def write_overlay_files(args, renderer, request, token) -> list[str]:
    """Write the overlays named by --overlay beside args.out; the lines to print."""
    from services.overlay_files import write_overlays
    done = write_overlays(renderer, request, args.out, args.overlay, cancel=token)
    return [f"wrote {path} ({name}{': ' + text if text else ''})"
            for name, (path, text) in done.items()]
