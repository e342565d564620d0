"""A first start's timeline, as a user meets it: every status-bar line and every picture, with the
seconds since the process started, until the first full frame (and, with --deep, a first deep
bookmark after it).

    NUMBA_CACHE_DIR=$(mktemp -d) python tools/first_start.py [--deep] [--backend cpu]

An empty NUMBA_CACHE_DIR is a cold start (every kernel compiles); the same folder a second time is
a warm one. Prints one line per event, then the load average, for docs/PERFORMANCE.md. Gaps of
more than a second with an empty status bar are marked: a user sees nothing saying what runs.
With FIRST_START_SAMPLE=FILE set, every thread is sampled (tools/thread_sampler.py) until the
first full frame and the profile written to FILE: where the seconds went, GUI thread and worker.
"""
import time

T0 = time.perf_counter()  # before Qt, numba and the kernels load: "start-up" includes them

import os  # noqa: E402

SAMPLER = None
if os.environ.get("FIRST_START_SAMPLE"):     # every thread's stacks, until the first full frame
    from thread_sampler import ThreadSampler
    SAMPLER = ThreadSampler(0.005).start()

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

if "cpu" not in " ".join(sys.argv[1:]).replace("--backend=", "--backend "):
    # as main.py does for the window: the GPU's context opens while numba imports
    from kernels import context_ahead  # noqa: E402
    context_ahead.start()

from PyQt6.QtCore import QSettings, QTimer  # noqa: E402
from PyQt6.QtWidgets import QApplication  # noqa: E402

LIMIT_S = 180          # a cold deep compile on 2 cores takes a minute or so


def now() -> float:
    return time.perf_counter() - T0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--deep", action="store_true", help="then go to the first deep bookmark")
    ap.add_argument("--view", default="mandelbrot",
                    choices=("mandelbrot", "distance", "throughput", "random"),
                    help="the view the window opens on; Run (F5) is pressed once it is shown for "
                         "the two that run on request, and the first result they show ends it")
    args = ap.parse_args()
    app = QApplication([])
    from explorer.app import MainWindow
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat)
    events = []

    def log(what):
        events.append((now(), what))
        print(f"{now():7.2f} s  {what}", flush=True)

    log("imports done")
    win = MainWindow(args.backend, args.view, settings=settings, compile_ahead=True)
    win.resize(1500, 900)
    # a view asked for is built: only the one the window opens on is looked at
    view = win.views["mandelbrot"] if args.view == "mandelbrot" else None
    sb = win.statusBar()
    sb.messageChanged.connect(lambda text: log(f"status: {text!r}"))
    state = {"deep": False, "done": False}

    def finish():
        state["done"] = True
        if SAMPLER is not None:
            SAMPLER.stop()
            with open(os.environ["FIRST_START_SAMPLE"], "w") as out:
                SAMPLER.report(out, top=40)
        QTimer.singleShot(0, app.quit)

    if args.view != "mandelbrot":
        other = win.views[args.view]
        _watch_first_result(other, log, finish)

    def on_frame(frame, _ms):
        kind = "preview" if frame.meta.get("preview") else "frame"
        log(f"{kind} {frame.rgba.shape[1]}×{frame.rgba.shape[0]} ({frame.meta.get('format')})")
        if kind != "frame" or view.model.shown is None or view.model.shown.coarse:
            return
        if args.deep and not state["deep"]:
            state["deep"] = True
            from explorer.models.bookmarks import load_bookmarks
            deep = next(b for b in load_bookmarks()[0] if float(b.width) < 1e-13)
            log(f"go to the deep bookmark {deep.name!r}")
            view.go_to(deep.center_re, deep.center_im, deep.width)
            return
        finish()

    if args.view == "mandelbrot":
        view.frame_displayed.connect(on_frame)
    win.show()
    log("window shown")
    if args.view in ("throughput", "random"):
        run = win.views[args.view]
        QTimer.singleShot(0, run.start_sweep if args.view == "throughput" else run.start_run)
        log("Run pressed")
    QTimer.singleShot(LIMIT_S * 1000, app.quit)
    app.exec()
    win.close()
    gaps = [(a, b) for (a, ea), (b, _) in zip(events, events[1:])
            if b - a > 1.0 and ea.startswith("status: ''")]
    for a, b in gaps:
        print(f"empty status bar from {a:.1f} s to {b:.1f} s")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} cores{'' if state['done'] else ', stopped at the limit'}")
    os._exit(0)         # an abandoned compile thread would hold the exit


_NOT_SHOWN = ("CopyBandwidth", "SweepReferences")     # measured for later, not drawn yet


def _watch_first_result(view, log, finish):
    """End at the first result `view` shows: a distance frame, a sweep's first point, the random
    view's first result that is not its compile note."""
    from kernels.scheduler import Compiled

    def hook(name, method):
        def wrapped(item, *rest):
            out = method(item, *rest)
            if not isinstance(item, Compiled) and type(item).__name__ not in _NOT_SHOWN:
                log(f"{view.view_id}: first {name} ({type(item).__name__})")
                finish()
                setattr(view, name, method)
            return out
        setattr(view, name, wrapped)

    if view.view_id == "throughput":
        hook("on_progress", view.on_progress)
    else:
        hook("on_result", view.on_result)


if __name__ == "__main__":
    main()
