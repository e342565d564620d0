"""A picture of the roofline panel made by the app itself, offscreen: the device's roofs measured
(or read from the cache), then jobs of several views placed under them.

    python tools/roofline_shot.py [OUT.png] [--backend cpu|cuda] [--sweep] [--window WIN.png]

The Mandelbrot view renders its first frame, the distance view one frame, the random-number view
one run; with --sweep the throughput view runs a sweep too (many vector-op points). The panel is
taken once every view has settled; --window also keeps the whole window. Prints what the panel
says: its roofs, its note and the newest point.
"""
import argparse
import os
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from PyQt6.QtCore import QElapsedTimer, QSettings, Qt  # noqa: E402
from PyQt6.QtWidgets import QApplication  # noqa: E402

QUIET_MS = 1500
LIMIT_MS = 180_000


def settle(app, win, view, limit_ms=LIMIT_MS):
    """Run the event loop until the view and the scheduler have been idle for QUIET_MS."""
    clock, quiet = QElapsedTimer(), QElapsedTimer()
    clock.start()
    quiet.start()
    panel = win.roofline.panel
    while clock.elapsed() < limit_ms:
        app.processEvents()
        if (win.scheduler.core.running and win.busy_bar.isVisible()) or view.in_flight \
                or getattr(view, "queue", None) or panel.model.measuring \
                or panel.model.waiting:     # roofs to measure once the app is idle
            quiet.restart()
            continue
        if quiet.elapsed() > QUIET_MS:
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="PNG of the panel (default: a temporary file)")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--sweep", action="store_true", help="run a throughput sweep too")
    ap.add_argument("--window", help="also write the whole window to this PNG")
    args = ap.parse_args()
    out = args.out
    if out is None:
        fd, out = tempfile.mkstemp(prefix="roofline-", suffix=".png")
        os.close(fd)
    app = QApplication([])
    from explorer.app import MainWindow
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(args.backend, "mandelbrot", settings=settings)
    win.resize(1600, 950)
    win.show()
    win.roofline.raise_()
    win.resizeDocks([win.roofline], [520], Qt.Orientation.Horizontal)
    settle(app, win, win.current_view())
    steps = ["distance", "random"] + (["throughput"] if args.sweep else [])
    for view_id in steps:
        view = win.views[view_id]
        win.tabs.setCurrentWidget(view)
        if hasattr(view, "start_run"):
            view.set_n_exponent(24 if win.backend.is_gpu else 20)
            view.start_run()
        elif hasattr(view, "start_sweep"):
            view.set_max_exponent(24 if win.backend.is_gpu else 20)
            view.start_sweep()
        settle(app, win, view)
    win.tabs.setCurrentWidget(win.views["mandelbrot"])
    settle(app, win, win.current_view())
    # a frame of many iterations too: the escape kernel's useful and executed points far right
    win.views["mandelbrot"].go_to("-0.7436438870371587", "0.1318259042053119", "1e-5")
    settle(app, win, win.current_view())
    panel = win.roofline.panel
    panel._dirty = True
    panel.refresh()
    app.processEvents()
    win.roofline.grab().save(out)
    if args.window:
        win.grab().save(args.window)
    print(f"wrote {out}: {len(panel._items)} point(s)")
    print("roofs:", panel.caption.text() or "(none)")
    print("note:", panel.note_label.text() or "(none)")
    print("newest point:\n" + (panel.point_texts()[-1] if panel._items else "(none)"))
    win.close()


if __name__ == "__main__":
    main()
