#!/usr/bin/env python3
"""The window, offscreen, with each Mandelbrot overlay: one picture per overlay that has a meaning
at each place (the float64 seahorse valley of the bench, then a deep place: the period-139
minibrot at 4e-90), the side panel's legend and totals and the timing panel's title included.

    python3 tools/overlay_shots.py OUTDIR [--backend cuda] [--size 1500x900]

Writes OUTDIR/overlay-<place>-<overlay>.png (and -none, the picture itself) and prints each
frame's totals line.
"""
import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from PyQt6.QtCore import QSettings  # noqa: E402
from PyQt6.QtWidgets import QApplication  # noqa: E402

LIMIT_S = 300
PLACES = (("float64", "Seahorse valley (benchmark)"),
          ("deep", "Deep: period-139 minibrot (4e-90)"))


def wait_frame(app, view, overlay, limit_s=LIMIT_S) -> bool:
    """Until a full frame of the current camera with `overlay` drawn ("" none) is on screen."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        app.processEvents()
        t = view.model.shown
        f = view.last_frame
        if (t is not None and not t.coarse and not view.in_flight and not view.model.dirty
                and t.state == view.camera.state and (t.w, t.h) == view.canvas_size()
                and f is not None):
            info = f.meta.get("overlay")
            if (info.name if info else "") == overlay:
                return True
        time.sleep(0.005)
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--backend", default="cuda", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--size", default="1500x900")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    w, h = (int(v) for v in args.size.lower().split("x"))
    app = QApplication([])
    from explorer.app import MainWindow
    from explorer.views.mandelbrot_controls import BOOKMARKS_PATH, load_bookmarks
    from kernels.mandelbrot.colouring import overlays as ov
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(args.backend, "mandelbrot", settings=settings)
    win.resize(w, h)
    win.show()
    view = win.current_view()
    if not wait_frame(app, view, ""):
        print("no first frame")
        return 1
    marks = {b.name: b for b in load_bookmarks(BOOKMARKS_PATH)[0]}
    panel = view.overlays.panel
    for place, mark in PLACES:
        panel.select("")
        view.go_to_bookmark(marks[mark])
        if not wait_frame(app, view, ""):
            print(f"{place}: no frame")
            return 1
        for name in ("",) + ov.NAMES:
            if name and not panel.enabled(name):
                continue
            panel.select(name)
            if not wait_frame(app, view, name):
                print(f"{place} {name or 'none'}: no frame")
                return 1
            win.timing.panel.refresh()
            app.processEvents()
            out = os.path.join(args.outdir, f"overlay-{place}-{name or 'none'}.png")
            win.grab().save(out)
            print(f"wrote {out}: {view.last_frame.timings.label}")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
