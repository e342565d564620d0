"""The window, offscreen, deep in a zoom: a picture of the Mandelbrot view at a deep place, to look
at what the deep-zoom path shows (the picture, the readout's number format, the side panel).

    python tools/deep_window_shot.py OUT.png [--backend cpu|cuda] [--bookmark NAME]
                                     [--location TEXT] [--wheel N] [--size WxH]

--bookmark picks a shipped bookmark by name (default "Deep: 1e-300 (Kormanyos)"); --location
pastes a location text instead (ours or a .kfr's lines). --wheel N then zooms in N wheel notches at
the centre, one frame at a time. The window is taken once the last frame is on screen. Prints the
frame's number format and timings.
"""
import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from PyQt6.QtCore import QSettings
from PyQt6.QtWidgets import QApplication

LIMIT_S = 300


def wait_frame(app, view, limit_s=LIMIT_S) -> bool:
    """Until a full-size frame of the current camera is on screen and nothing is in flight."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        app.processEvents()
        t = view.model.shown
        if (t is not None and not t.coarse and not view.in_flight and not view.model.dirty
                and t.state == view.camera.state and (t.w, t.h) == view.canvas_size()):
            return True
        time.sleep(0.005)
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--bookmark", default="Deep: 1e-300 (Kormanyos)")
    ap.add_argument("--location", default=None)
    ap.add_argument("--wheel", type=int, default=0)
    ap.add_argument("--size", default="1280x800")
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.lower().split("x"))
    app = QApplication([])
    from explorer.app import MainWindow
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(args.backend, "mandelbrot", settings=settings)
    win.resize(w, h)
    win.show()
    view = win.current_view()
    messages = []
    view.status_message.connect(lambda text, _ms: messages.append(text))
    if not wait_frame(app, view):
        print("no first frame")
        return 1
    if args.location:
        ok = view.paste_location(args.location)
    else:
        from explorer.views.mandelbrot_controls import BOOKMARKS_PATH, load_bookmarks
        marks = {b.name: b for b in load_bookmarks(BOOKMARKS_PATH)[0]}
        if args.bookmark not in marks:
            print(f"no bookmark {args.bookmark!r}; there are: {', '.join(marks)}")
            return 2
        view.go_to_bookmark(marks[args.bookmark])
        ok = True
    if not ok:
        print(f"refused: {messages[-1] if messages else '?'}")
        return 2
    t0 = time.perf_counter()
    done = wait_frame(app, view)
    print(f"first deep frame in {time.perf_counter() - t0:.2f} s" if done else "still busy")
    cw, ch = view.canvas_size()
    for _ in range(args.wheel):
        view._on_wheel(1.25, cw / 2, ch / 2)
        wait_frame(app, view)
    frame = view.last_frame
    win.timing.panel.refresh()
    app.processEvents()
    win.grab().save(args.out)
    meta = frame.meta if frame is not None else {}
    print(f"wrote {args.out}: format {meta.get('format', 'float64')}, "
          f"{frame.request.max_iter:,} iterations, reference reused {meta.get('reused')}, "
          f"phases {({k: round(v, 1) for k, v in frame.timings.phases_ms.items() if v is not None})}")
    print(f"readout: {view.readout.text()}")
    print(f"progress seen: {[m for m in messages if m.startswith('Reference')][-3:]}")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
