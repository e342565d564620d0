"""Make docs/screenshot.png with the app itself, offscreen: the main window after a few frames.

    QT_QPA_PLATFORM=offscreen python tools/screenshot.py [--backend cpu|cuda] [--view NAME] [OUT.png]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default="docs/screenshot.png")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--view", default="mandelbrot")
    ap.add_argument("--frames", type=int, default=3)
    args = ap.parse_args()
    app = QApplication([])
    from explorer.app import MainWindow
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat)
    t_imports = time.perf_counter() - T0
    win = MainWindow(args.backend, args.view, settings=settings)
    t_window = time.perf_counter() - T0
    win.resize(1500, 900)
    win.show()
    frames = []
    first = []
    win.current_view().timings_ready.connect(frames.append)
    win.current_view().timings_ready.connect(lambda _t: first or first.append(time.perf_counter() - T0))
    clock = QElapsedTimer()
    clock.start()
    view = win.current_view()
    # the CPU renders a coarse frame first: wait for the full one (the view idle again)
    while clock.elapsed() < 120_000 and (len(frames) < args.frames or view.in_flight):
        app.processEvents()
    end = clock.elapsed() + 300
    while clock.elapsed() < end:
        app.processEvents()
    win.timing.panel.refresh()
    app.processEvents()
    win.grab().save(args.out)
    print(f"wrote {args.out} after {len(frames)} frame(s); first frame {first[0]:.2f} s after start "
          f"(Qt and app imported at {t_imports:.2f} s, window built at {t_window:.2f} s)"
          if first else f"wrote {args.out}: no frame arrived")
    win.close()


if __name__ == "__main__":
    main()
