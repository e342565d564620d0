"""A first start's timeline, as a user meets it: every status-bar line and every picture, with the
seconds since the process started, until the first full frame (and, with --deep, a first deep
bookmark after it).

    NUMBA_CACHE_DIR=$(mktemp -d) python tools/first_start.py [--deep] [--backend cpu]

An empty NUMBA_CACHE_DIR is a cold start (every kernel compiles); the same folder a second time is
a warm one. Prints one line per event, then the load average, for docs/PERFORMANCE.md. Gaps of
more than a second with an empty status bar are marked: a user sees nothing saying what runs.
"""
import time

T0 = time.perf_counter()  # before Qt, numba and the kernels load: "start-up" includes them

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from PyQt6.QtCore import QSettings, QTimer  # noqa: E402
from PyQt6.QtWidgets import QApplication  # noqa: E402

LIMIT_S = 180          # a cold deep compile on 2 cores takes a minute or so


def now() -> float:
    return time.perf_counter() - T0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--deep", action="store_true", help="then go to the first deep bookmark")
    args = ap.parse_args()
    app = QApplication([])
    from explorer.app import MainWindow
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat)
    events = []

    def log(what):
        events.append((now(), what))
        print(f"{now():7.2f} s  {what}", flush=True)

    log("imports done")
    win = MainWindow(args.backend, "mandelbrot", settings=settings, compile_ahead=True)
    win.resize(1500, 900)
    view = win.views["mandelbrot"]
    sb = win.statusBar()
    sb.messageChanged.connect(lambda text: log(f"status: {text!r}"))
    state = {"deep": False, "done": False}

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
        state["done"] = True
        QTimer.singleShot(0, app.quit)

    view.frame_displayed.connect(on_frame)
    win.show()
    log("window shown")
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


if __name__ == "__main__":
    main()
