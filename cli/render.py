"""`main.py --render VIEW --out FILE`: one frame without a window, written as .png or .npy.

A large output is announced before the render (how many GiB) and refused when the disk cannot
hold it; a long render shows a progress bar on a terminal (cli.progress). The renderer and the
writing are services.render's."""
from __future__ import annotations

import dataclasses
import os

# what a deep picture's bar says it is doing, by its renderer's stage
from kernels.mandelbrot.requests.request import DEEP_STAGE_WORDS as STAGE_WORDS
from kernels.numba_cache import compile_when
from services.files import FORMATS, check_export_path
from services.render import view_renderer, write_frame
from services.requests import DEFAULT_RENDER_SIZE, RENDER_VIEWS

from .args import VIEW_OPTIONS
from .failures import UNUSABLE, USAGE, fail, interrupted, note, resolve_backend
from .interruptible import run_interruptibly
from .location import apply_location
from .newton import move_to_minibrot
from .overlay_output import overlay_problem, write_overlay_files
from .progress import RenderProgress, describe_output, disk_problem, progress_rows
from .reference_line import exact_line, reference_line


class StagedProgress(RenderProgress):
    """The render's bar, its description followed by the stage under way (a deep picture's)."""

    def __init__(self, description: str, **kwargs):
        super().__init__(description, **kwargs)
        self._description = description
        self._stage = self._shown_stage = None

    def stage(self, stage: str) -> None:
        """The stage that started (the worker thread: only stored, drawn by tick)."""
        self._stage = stage

    def tick(self) -> None:
        if self._stage != self._shown_stage:
            self._shown_stage = self._stage
            word = STAGE_WORDS.get(self._stage, self._stage).format(when=compile_when())
            self._bar.set_description_str(f"{self._description}, {word}", refresh=False)
        super().tick()


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
    w, h = args.size or DEFAULT_RENDER_SIZE
    iters_given = args.iters is not None        # before --location fills them in
    if args.location:
        if view != "mandelbrot":
            return fail(USAGE, f"--location applies to --render mandelbrot, not {view}")
        problem = apply_location(args, (w, h))
        if problem:
            return fail(USAGE, problem)
    moved = move_to_minibrot(args, iters_given)     # --newton: the minibrot's place instead
    if moved is not None:
        return moved
    notes: list[str] = []
    try:
        request = build_request({k: getattr(args, k) for k in options}, w, h, ext == ".npy",
                                notes=notes)
    except ValueError as exc:
        return fail(USAGE, str(exc))
    try:
        args.out = check_export_path(args.out)     # ~ expanded: --out=~/pic.png reaches us as is
    except ValueError as exc:
        return fail(USAGE, str(exc))
    no_room = disk_problem(w, h, args.out)
    if no_room:
        return fail(UNUSABLE, no_room)
    for line in notes:           # e.g. a reference longitude that wrapped
        note(line)
    large = describe_output(w, h, args.out)
    if large:                    # before any work, posters in bands included
        print(large, flush=True)
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(UNUSABLE, why)
    if args.backend == "auto" and not be.is_gpu and not args.gpus:   # why not the GPU, in one
        from kernels.backend import cuda_status                        # line (--gpus: refused)
        if not cuda_status().usable:
            note(f"rendering on the CPU: {cuda_status().reason}")
    if view == "mandelbrot":     # float32 or float64 for this device (number_type.py's rule)
        from kernels.mandelbrot.requests.number_type import resolve
        # overlays are drawn by the float64 kernels only: asked for one, auto means float64
        asked = args.number_type or ("float64" if getattr(args, "overlay", None) else "auto")
        request, choice = resolve(request, be, asked)
        # float64 goes unsaid, unless float32 was asked for and cannot be had
        if choice is not None and (choice.number_type == "float32" or asked == "float32"):
            note(f"number type {choice.reason}")
    bad = overlay_problem(args, view, request, be)
    if bad is not None:
        return bad
    if hasattr(request, "pixels"):   # a deep frame: its pixels float64 cannot place (exact_redo.py)
        chosen = [m for m, on in (("exact", args.exact_pixels), ("proved", args.proved_pixels),
                                  ("marked", getattr(args, "marked_pixels", None))) if on]
        if len(chosen) > 1:
            return fail(USAGE, "--exact-pixels, --proved-pixels and --marked-pixels are "
                               "alternatives: give one")
        # a file is the product: proved by default (issue 34: at most 0.1 % of KF's pixels marked)
        request = dataclasses.replace(request, pixels=chosen[0] if chosen else "proved")
    from services.poster import wants_poster
    if wants_poster(args.gpus, args.scheduler, w, h):    # bands over every chosen GPU, resumable
        from .poster import run_poster
        if view == "mandelbrot":
            try:
                view_renderer(view, request, be, probe=True)
            except RuntimeError as exc:      # deep zoom without gmpy2: say how to get it
                return fail(UNUSABLE, str(exc))
        return run_poster(args, view, request, args.out, be)
    from kernels.buffers import OutOfDeviceMemory
    from kernels.scheduler import Cancelled, CancelToken
    try:
        renderer = view_renderer(view, request, be, one_frame=True)
    except RuntimeError as exc:      # deep zoom without gmpy2: say how to get it
        return fail(UNUSABLE, str(exc))
    if view == "mandelbrot":     # a first start compiles for seconds: say so, not a silent bar
        from kernels.mandelbrot.frames.warm import compile_notice
        waiting = compile_notice(request, be)
        if waiting:
            print(f"{waiting[0].upper()}{waiting[1:]}…", flush=True)
    token = CancelToken()
    progress = StagedProgress(f"{view} {w}×{h} on the {be.label}",
                              fractions=hasattr(renderer, "strips"))
    rows = progress_rows(request, be.is_gpu) if hasattr(renderer, "strips") else None
    try:
        run_interruptibly(lambda: write_frame(renderer, request, args.out, cancel=token,
                                              progress=progress.report, stages=progress.stage,
                                              rows=rows),
                          token, tick=progress.tick)
    except (KeyboardInterrupt, Cancelled):
        progress.close()
        return interrupted(f"nothing was written to {args.out}")
    except (OutOfDeviceMemory, ValueError, OSError) as exc:
        progress.close()
        return fail(UNUSABLE, str(exc))
    progress.close()
    line = reference_line(renderer)
    if line:                 # what the deep picture's first seconds went to, and whence
        note(line)
    line = exact_line(renderer, getattr(request, "pixels", "") or "proved",
                      getattr(request, "formula", "mandelbrot"))
    if line:
        note(line)
    shown = getattr(request, "formula", None) or view    # the formula drawn, e.g. burning-ship
    print(f"wrote {args.out} ({w}x{h}, {shown}, {be.label})")
    if args.overlay:
        try:
            for line in run_interruptibly(lambda: write_overlay_files(args, renderer, request,
                                                                      token), token):
                print(line)
        except (KeyboardInterrupt, Cancelled):
            return interrupted("the overlays were not written")
        except (OutOfDeviceMemory, ValueError, OSError) as exc:
            return fail(UNUSABLE, str(exc))
    # every file is written and closed: main.py may skip the interpreter's shutdown (~0.2 s of a
    # 256² CPU render on 2 cores: numba's and LLVM's teardown), as a finished movie does
    from . import quick_exit
    quick_exit.request()
    return 0
