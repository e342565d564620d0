"""The Mandelbrot view's frame kernel time in a window whose GUI thread keeps repainting and running
Python, against the same request rendered headless in the same process (issue 39's frame check),
and the longest gap between the GUI thread's repaint ticks while the window rendered.

    PYTHONPATH=. python tools/window_frame_vs_bench.py --backend cpu --size 800x600 --frames 7

Prints the median escape-kernel ms of --frames window frames and of as many headless renders, their
ratio, the timing method, and the longest repaint gap (a tick is due every 16 ms).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def escape_ms(timings) -> float:
    """The frame's kernel phase less its colouring and work count: the escape pass."""
    d = timings.detail
    return timings.get("kernel") - d.get("colourise", 0.0) - d.get("work count", 0.0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--size", default="800x600")
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--frames", type=int, default=7)
    ap.add_argument("--busy-ms", type=float, default=8.0,
                    help="Python work the GUI thread does per repaint tick (every 16 ms)")
    ap.add_argument("--json")
    ap.add_argument("--show", action="store_true", help="print each frame's timings")
    ap.add_argument("--tick-ms", type=int, default=16, help="how often the GUI thread repaints")
    ap.add_argument("--pause-ms", type=int, default=0,
                    help="events processed between frames (the shown frame painted first)")
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PyQt6.QtCore import QEventLoop, QTimer
    from PyQt6.QtWidgets import QApplication

    from explorer.scheduler_qt import QtScheduler
    from explorer.views.mandelbrot import MandelbrotView
    from kernels import backend as backends
    from kernels.bench import device_name
    from kernels.mandelbrot.jobs import make_renderer

    w, h = (int(x) for x in args.size.lower().split("x"))
    be = backends.resolve(args.backend)
    app = QApplication.instance() or QApplication([])
    scheduler = QtScheduler()
    view = MandelbrotView(scheduler, be)
    view.controls.hide()                # the canvas alone fills the view: its size is the frame's
    view.controls.set_iterations(args.iters)
    view.progressive = False
    view.resize(w, h)
    view.show()

    ticks = []

    def storm():                        # a repaint and a burst of Python, as hovering causes
        ticks.append(time.perf_counter())
        view.repaint()
        t = time.perf_counter()
        while time.perf_counter() - t < args.busy_ms * 1e-3:
            pass

    def settle(timeout=300.0):
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
            time.sleep(0.002)           # an idle GUI thread sleeps: polling would take a core
            t = view.model.shown
            if t is not None and not t.coarse and not view.in_flight \
                    and (t.w, t.h) == view.canvas_size():
                return
        raise TimeoutError("no full frame")
    settle()                            # compiles and the first frame, before the storm
    ticker = QTimer()
    ticker.timeout.connect(storm)
    ticker.start(args.tick_ms)
    window_ms = []
    ticks.clear()
    base = view.last_frame.request
    places = [(base.center_re + (i % 2) * base.width * 1e-3, base.center_im, base.width)
              for i in range(1, args.frames + 1)]      # new values each frame, not a recolour
    for place in places:
        end = time.perf_counter() + args.pause_ms * 1e-3
        while time.perf_counter() < end:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 10)
            time.sleep(0.002)
        view.go_to(*place)
        settle()
        window_ms.append(escape_ms(view.last_frame.timings))
        if args.show:
            print("window", view.last_frame.timings.as_dict())
    ticker.stop()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    request = view.last_frame.request
    method = view.last_frame.timings.method
    scheduler.shutdown(1.0)

    renderer = make_renderer(request, be)
    renderer.render(replace(request, center_re=base.center_re))     # not the first place: no reuse
    heads = [renderer.render(replace(request, center_re=re, center_im=im, width=wd)).timings
             for re, im, wd in places]
    head_ms = [escape_ms(t) for t in heads]
    if args.show:
        for t in heads:
            print("headless", t.as_dict())
    win, head = statistics.median(window_ms), statistics.median(head_ms)
    gap = max(gaps, default=0.0) * 1e3
    print(f"{device_name(be)}; {method}; {request.size[0]}x{request.size[1]}, "
          f"{request.max_iter} iterations")
    print(f"escape kernel ms, window (median of {len(window_ms)}): {win:.2f}; headless: {head:.2f}; "
          f"ratio {win / head:.3f}")
    print(f"longest gap between repaint ticks (due every {args.tick_ms} ms, {args.busy_ms} ms of Python "
          f"each): {gap:.1f} ms over {len(ticks)} ticks")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"device": device_name(be), "method": method, "window_ms": window_ms,
                       "headless_ms": head_ms, "ratio": win / head, "longest_gap_ms": gap},
                      fh, indent=1)
    return 0 if abs(win / head - 1) <= 0.10 and gap <= 100 else 3


if __name__ == "__main__":
    sys.exit(main())
