"""Frame rate of the Mandelbrot view in a real window: a scripted pan-and-zoom, each frame shown.

`run_ui_bench("cuda")` opens (offscreen when there is no display) a MandelbrotView whose canvas is
exactly `size` physical pixels, drives the camera one step per displayed frame for `seconds`, and
reports frames per second with the per-frame medians of compute (kernel), copy (device→host) and
display (setImage plus a forced repaint, wall clock). Camera steps come from the frames coming
back, not from a timer: the view submits the next frame before it paints the current one, so
compute and display overlap as they do under a user's mouse.
"""
from __future__ import annotations

import math
import os
import statistics
import time

# seahorse valley, the benchmark frame (a bookmark too); the script pans round it and zooms in and out
START = ("-0.743643887037151", "0.131825904205330", 0.01)
ITERATIONS = 2000
STEPS_PER_LAP = 240


def _app():
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PyQt6.QtWidgets import QApplication
    return QApplication.instance() or QApplication([])


def _median(values):
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def scripted_step(view, k: int):
    """Frame k of the script: a circular pan of half the view's width per lap, with the zoom
    breathing in and out by 4× — every frame needs a full new render."""
    from .models.camera import to_decimal
    angle = 2 * math.pi * k / STEPS_PER_LAP
    width = START[2] * 4 ** (-0.5 * (1 - math.cos(angle)))
    radius = 0.25 * START[2]
    re = to_decimal(START[0]) + to_decimal(radius * math.cos(angle))
    im = to_decimal(START[1]) + to_decimal(radius * math.sin(angle))
    view.go_to(re, im, width, keep_iterations=True)


def run_ui_bench(backend_name: str, seconds: float = 5.0, size=(1920, 1080),
                 iterations: int = ITERATIONS, min_frames: int = 5) -> dict:
    """Run the scripted pan/zoom for `seconds` after warm-up, and on until at least `min_frames`
    frames were measured (a slow machine or the simulator may need longer than `seconds` for
    one frame); return frames, fps and medians."""
    app = _app()
    from PyQt6.QtCore import QEventLoop, QTimer

    from kernels.backend import resolve

    from .scheduler_qt import QtScheduler
    from .views.mandelbrot import MandelbrotView

    backend = resolve(backend_name)
    w_px, h_px = int(size[0]), int(size[1])
    scheduler = QtScheduler()
    view = MandelbrotView(scheduler, backend)
    view.setWindowTitle(f"GPU Explorer UI bench ({backend.label})")
    view.controls.hide()
    view.progressive = False            # count full frames only
    view.paint_synchronously = True     # display time includes painting the frame
    view.controls.set_iterations(int(iterations))
    view.camera.go_to(view.camera.state.of(*START), w_px)
    errors: list[str] = []
    view.error_message.connect(errors.append)

    loop = QEventLoop()
    samples: list[tuple[float, float, float]] = []   # kernel, d2h, display
    state = {"k": 0, "measuring": False, "frames": 0, "ended": False, "t0": 0.0, "t1": 0.0}

    def finish():
        state["ended"] = True
        loop.quit()

    def time_up():
        state["time_up"] = True
        if state["frames"] >= min_frames:
            finish()

    def on_frame(frame, display_ms):
        if state["ended"]:
            return
        if tuple(frame.rgba.shape[:2]) != view.canvas_size()[::-1]:
            return                      # a frame from before the window reached its size
        now = time.perf_counter()
        if not state["measuring"]:
            state["measuring"] = True
            state["t0"] = state["t1"] = now
            QTimer.singleShot(int(seconds * 1000), time_up)
            state["k"] += 1
            scripted_step(view, state["k"])     # submitted now...
        else:
            t = frame.timings
            samples.append((t.get("kernel"), t.get("d2h"), display_ms))
            state["frames"] += 1
            state["t1"] = now
            state["shape"] = frame.rgba.shape[:2]
            if state.get("time_up") and state["frames"] >= min_frames:
                finish()
                return
        state["k"] += 1
        scripted_step(view, state["k"])         # ...and one waiting: the view keeps the scheduler busy

    view.frame_displayed.connect(on_frame)
    screen = app.primaryScreen()
    dpr = screen.devicePixelRatio() if screen is not None else 1.0
    view.resize(max(1, round(w_px / dpr)), max(1, round(h_px / dpr)))
    view.show()
    dpr_now = view.canvas.viewport().devicePixelRatioF() or 1.0
    if dpr_now != dpr:      # the window landed on a screen of another pixel ratio
        view.resize(max(1, round(w_px / dpr_now)), max(1, round(h_px / dpr_now)))
    guard = QTimer(singleShot=True)
    guard.timeout.connect(finish)
    guard.start(int((seconds + 300) * 1000))   # compile + first frame, then the run itself
    view.error_message.connect(lambda *a: finish())
    try:
        loop.exec()
        elapsed = state["t1"] - state["t0"]
    finally:
        guard.stop()
        view.shutdown()
        scheduler.shutdown(0.1)
        scheduler.core.join(60)     # a frame still in flight ends before the next bench starts
        view.close()
        view.deleteLater()
        app.processEvents()
    n = state["frames"]
    if n == 0:
        raise RuntimeError(errors[0] if errors else "the UI bench displayed no frame")
    got_h, got_w = state["shape"]
    extra = {} if (got_w, got_h) == (w_px, h_px) else {
        "requested_size": f"{w_px}x{h_px}",
        "note": "the window system did not give the window the requested size"}
    return {**extra, "frames": n, "fps": n / elapsed if elapsed > 0 else None,
            "per_frame_ms": {"compute": _median(s[0] for s in samples),
                             "copy": _median(s[1] for s in samples),
                             "display": _median(s[2] for s in samples)},
            "backend": backend.name, "device": backend.device, "size": f"{got_w}x{got_h}",
            "iterations": int(iterations), "seconds": round(elapsed, 3), "min_frames": int(min_frames)}


if __name__ == "__main__":
    # python -m explorer.ui_bench [BACKEND] [SECONDS] [WxH]
    import json
    import sys
    args = sys.argv[1:]
    size = tuple(int(v) for v in args[2].lower().split("x")) if len(args) > 2 else (1920, 1080)
    print(json.dumps(run_ui_bench(args[0] if args else "auto",
                                  float(args[1]) if len(args) > 1 else 5.0, size), indent=2))
