"""A picture of the app made by the app itself, offscreen: the main window once it has settled.

    python tools/screenshot.py [OUT.png] [--backend cpu|cuda] [--view NAME] [--frames N]

Without OUT.png the picture goes to a new file in the temporary folder, and its path is printed;
docs/screenshot.png (the README's picture) is written only when named. The window is taken once
the view has shown --frames frames and nothing has computed for a second — a view that computes
only when asked (throughput, random numbers: F5) is taken as soon as the start-up work is done.
Prints the time to the first frame, for start-up measurements.
"""
import time

T0 = time.perf_counter()  # before Qt, numba and the kernels load: "start-up" includes them

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from PyQt6.QtCore import QElapsedTimer, QSettings  # noqa: E402
from PyQt6.QtWidgets import QApplication  # noqa: E402

QUIET_MS = 1000        # no job running for this long: the window has settled
LIMIT_MS = 120_000     # a first start compiles; past this the picture is taken as it is


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="PNG to write (default: a new file in the temporary folder)")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--view", default="mandelbrot")
    ap.add_argument("--frames", type=int, default=1,
                    help="frames the view should show before the picture, if it computes on its own")
    ap.add_argument("--run", action="store_true",
                    help="views that compute only when asked (throughput, random): run them first "
                         "(their F5) with a size suited to a picture")
    args = ap.parse_args()
    out = args.out
    if out is None:
        fd, out = tempfile.mkstemp(prefix="gpu-explorer-", suffix=".png")
        os.close(fd)
    app = QApplication([])
    from explorer.app import MainWindow
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat)
    t_imports = time.perf_counter() - T0
    win = MainWindow(args.backend, args.view, settings=settings)
    t_window = time.perf_counter() - T0
    win.resize(1500, 900)
    win.show()
    view = win.current_view()
    frames, first = [], []
    view.timings_ready.connect(frames.append)
    view.timings_ready.connect(lambda _t: first or first.append(time.perf_counter() - T0))
    clock, quiet = QElapsedTimer(), QElapsedTimer()
    clock.start()
    quiet.start()
    busy = [False]

    def on_busy(b):
        busy[0] = b
        quiet.restart()
    win.scheduler.busy_changed.connect(on_busy)
    if args.run:
        if hasattr(view, "start_sweep"):
            view.set_max_exponent(24 if win.backend.is_gpu else 22)
            view.start_sweep()
        elif hasattr(view, "start_run"):
            view.set_n_exponent(24 if win.backend.is_gpu else 20)
            view.start_run()
    # settled: the frames asked for are shown (the CPU's coarse pass is followed by the full one,
    # so the view must be idle too), or nothing has run for QUIET_MS (no more frames will come)
    while clock.elapsed() < LIMIT_MS:
        app.processEvents()
        if busy[0] or view.in_flight or getattr(view, "queue", None):
            quiet.restart()
            continue
        if len(frames) >= args.frames and quiet.elapsed() > 300:
            break
        if quiet.elapsed() > QUIET_MS:
            break
    win.timing.panel.refresh()
    app.processEvents()
    win.grab().save(out)
    waited = "" if clock.elapsed() < LIMIT_MS else f" (still busy after {LIMIT_MS // 1000} s)"
    if first:
        print(f"wrote {out} after {len(frames)} frame(s){waited}; first frame {first[0]:.2f} s after "
              f"start (Qt and app imported at {t_imports:.2f} s, window built at {t_window:.2f} s)")
    else:
        print(f"wrote {out}: no frame arrived{waited} (the {view.view_id} view computes when asked, "
              "e.g. F5)" if not waited else f"wrote {out}: no frame arrived{waited}")
    win.close()


if __name__ == "__main__":
    main()
