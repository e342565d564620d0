"""Progress of a long headless render on the terminal, and how big its output will be.

The render runs on a worker thread (cli.render.run_interruptibly) while the main thread waits for
Ctrl+C; the worker only records how far it got (`report`), and the main thread draws the bar on
each of its waits (`tick`), so the bar is never touched by two threads. The bar is tqdm's, on
stderr, shown only when stderr is a terminal and only once the render has run for a second: a log
file or a quick render gets no bar at all.
"""
from __future__ import annotations

import os
import shutil

from services.files import human_bytes

SHOW_AFTER_S = 1.0          # a render quicker than this shows no bar
LARGE_OUTPUT_BYTES = 256 * 2**20   # outputs from this size on are announced before the render
STEPS = 1000                # the bar counts thousandths
# a one-frame float64 render is cut into about this many strips so that the bar moves (a
# 1920×1080 picture is one strip otherwise: 0 % for the whole render, then 100 %)
PROGRESS_STRIPS = 20
# ... but only from this much work (pixels × iterations) on: below it the render ends before the
# bar could show (SHOW_AFTER_S), and each strip costs a pass of its own (a 256² CPU picture's 20
# strips took 0.23 s of a 1.3 s command on the 2-core machine, its pixels 12 ms)
PROGRESS_MIN_WORK = {"cpu": 2 ** 28, "gpu": 2 ** 36}


def output_bytes(w: int, h: int, npy: bool) -> int:
    """What the output will take: a .npy's float64 values on disk (plus its header), a .png's
    RGBA picture in memory while it is assembled (the file itself is smaller: compressed)."""
    return w * h * 8 + 128 if npy else w * h * 4


def describe_output(w: int, h: int, path: str) -> str | None:
    """One line announcing a large output ('writing a 6.7 GiB .npy'), None for a small one."""
    npy = path.lower().endswith(".npy")
    n = output_bytes(w, h, npy)
    if n < LARGE_OUTPUT_BYTES:
        return None
    if npy:
        return f"writing a {human_bytes(n)} .npy ({w}×{h} float64 values) to {path}"
    return (f"assembling a {human_bytes(n)} picture in memory ({w}×{h} RGBA) for {path}; "
            "the PNG file itself is smaller")


def disk_problem(w: int, h: int, path: str) -> str | None:
    """Why a .npy of this size cannot be written to `path`'s disk now, or None."""
    if not path.lower().endswith(".npy"):
        return None
    need = output_bytes(w, h, True)
    try:
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(path))).free
    except OSError:
        return None
    if need > free:
        return (f"a {w}×{h} .npy needs {human_bytes(need)} but the disk holding {path} has "
                f"{human_bytes(free)} free; choose a smaller --size or another folder")
    return None


def progress_rows(request, gpu: bool = False) -> int | None:
    """Strip height for `--render` of a float64 Mandelbrot picture: about PROGRESS_STRIPS strips (at
    most the usual strip height) so that the bar advances during the render. float64 pixels index
    the whole picture's grid, so any cut gives the same values; deep frames, and pictures too
    quick for a bar (PROGRESS_MIN_WORK on the `gpu` or the CPU), keep their usual cut (None)."""
    from kernels.mandelbrot.requests.request import MandelbrotRequest
    from kernels.mandelbrot.requests.strips import strip_rows
    if type(request) is not MandelbrotRequest:
        return None
    w, h = int(request.size[0]), int(request.size[1])
    if w * h * int(request.max_iter) < PROGRESS_MIN_WORK["gpu" if gpu else "cpu"]:
        return None
    return max(1, min(strip_rows(w), -(-h // PROGRESS_STRIPS)))


class _NoBar:
    """What RenderProgress calls on tqdm's bar, doing nothing (the bar is off)."""

    def update(self, n=1):
        pass

    def set_description_str(self, desc=None, refresh=True):
        pass

    def close(self):
        pass


class RenderProgress:
    """A bar for one render: `report(fraction)` from the worker, `tick()` and `close()` from the
    thread that owns the terminal. `fractions=False` for a render done in one piece: the bar then
    shows the time elapsed."""

    def __init__(self, description: str, *, fractions: bool = True, enabled: bool | None = None,
                 stream=None, mininterval: float = 0.5):
        import sys
        stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(getattr(stream, "isatty", lambda: False)())
        self.fraction: float | None = None
        self._shown_steps = 0
        self._bar = _NoBar()     # no terminal, no bar: tqdm is not even imported
        if not enabled:
            return
        from tqdm import tqdm
        fmt = ("{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}" if fractions
               else "{desc}: {elapsed}")
        # miniters=0: every tick may redraw (at most every mininterval), with no counting ahead;
        # tqdm's own delay keeps a quick render silent
        self._bar = tqdm(total=STEPS, desc=description, file=stream, delay=SHOW_AFTER_S,
                         mininterval=mininterval, miniters=0, leave=False, dynamic_ncols=True,
                         bar_format=fmt)

    def report(self, fraction: float) -> None:
        """How much is done, 0..1 (called on the worker thread: only a number is stored)."""
        self.fraction = min(1.0, max(0.0, float(fraction)))

    def tick(self) -> None:
        """Bring the bar up to date (the main thread, between its waits); the elapsed time moves
        on even when no strip has finished."""
        steps = int((self.fraction or 0.0) * STEPS)
        self._bar.update(max(0, steps - self._shown_steps))
        self._shown_steps = max(steps, self._shown_steps)

    def close(self) -> None:
        self._bar.close()          # leave=False: the bar's line is cleared for what follows
