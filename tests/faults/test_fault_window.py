"""Faults around the window as a whole: Ctrl+C in its terminal, closing it while a frame at the
iteration limit is computed (CPU and GPU), and a click that lands on the map's axis."""
import time

import pyqtgraph as pg
import pytest
from faultkit import child_env
from PyQt6.QtCore import QEvent, QPointF, Qt
from PyQt6.QtGui import QMouseEvent
from PyQt6.QtWidgets import QApplication

from explorer.views.distance import DistanceView

# a child that opens the window through explorer.app.run; with "deep" the Mandelbrot view is sent
# to a place of slow pixels at the iteration limit first. It prints "ready" once the window is up
# (and, with "deep", once that frame is being computed), then waits for the test's Ctrl+C or close.
WINDOW_CHILD = """
import sys, time
from PyQt6.QtCore import QSettings, QTimer
from explorer.app import run
ini, backend, mode = sys.argv[1:4]

def after_show(w):
    view = w.views["mandelbrot"]
    if mode.startswith("deep"):
        view.progressive = False
        view.controls.set_iterations(10_000_000)
        view.go_to("-1.7549", "0", 0.04, 10_000_000)
    def ready():
        if mode.startswith("deep") and not (view.model.is_warm(view.backend) and view.in_flight):
            QTimer.singleShot(100, ready)        # the kernels are still being loaded
            return
        if mode == "plain" and not (view.model.is_warm(view.backend) and not view.in_flight):
            # a close during the first start's compile ends the process at once (os._exit,
            # tested elsewhere); this test is about a window that is up and idle
            QTimer.singleShot(100, ready)
            return
        print("ready", flush=True)
        if mode.endswith("close"):
            QTimer.singleShot(300, lambda: (print("closing-at", time.time(), flush=True), w.close()))
    QTimer.singleShot(300, ready)

code = run(backend, settings=QSettings(ini, QSettings.Format.IniFormat), after_show=after_show)
print("exited", code, "at", time.time(), flush=True)
sys.exit(code)
"""


def _window(child, tmp_path, backend="cpu", mode="plain", env=None):
    ini = tmp_path / "settings.ini"
    c = child(WINDOW_CHILD, env=env, args=(str(ini), backend, mode))
    c.wait_for_line("ready")
    return c, ini


def test_ctrl_c_closes_the_window_as_its_close_button_would(child, tmp_path):
    c, ini = _window(child, tmp_path)
    c.interrupt()
    stdout, stderr = c.finish(60)
    assert c.proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert "exited 0" in stdout
    assert "geometry" in ini.read_text()           # saved as a close saves it


def test_ctrl_c_during_a_frame_at_the_iteration_limit(child, tmp_path):
    c, ini = _window(child, tmp_path, mode="deep")
    c.interrupt()
    stdout, stderr = c.finish(60)
    assert c.proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "geometry" in ini.read_text()


def _close_during_a_deep_frame(child, tmp_path, backend, env=None):
    """Closing while a frame of slow pixels at 10,000,000 iterations is computed ends the process
    within a moment, settings saved."""
    c, ini = _window(child, tmp_path, backend, mode="deep-close", env=env)
    stdout, stderr = c.finish(60)
    ended = time.time()
    assert c.proc.returncode == 0, stderr
    closing = float(stdout.split("closing-at")[1].split()[0])
    assert ended - closing < 2.0, f"the process ended {ended - closing:.2f} s after the close"
    assert "Traceback" not in stderr and "geometry" in ini.read_text()


def test_closing_during_a_cpu_frame_at_the_iteration_limit(child, tmp_path):
    _close_during_a_deep_frame(child, tmp_path, "cpu")


@pytest.mark.gpu
def test_closing_during_a_gpu_frame_at_the_iteration_limit(child, tmp_path, gpu_backend, simulated):
    _close_during_a_deep_frame(child, tmp_path, "cuda",
                               env=child_env(NUMBA_ENABLE_CUDASIM="1" if simulated else "0"))


# ---- the distance map --------------------------------------------------------------------------
def test_a_click_on_the_maps_axis_does_not_move_the_reference(qtbot, scheduler, cpu_backend):
    """pyqtgraph hands an axis's clicks to its view box: such a click used to set the reference
    point outside the visible map."""
    pg.setConfigOption("mouseRateLimit", -1)
    view = DistanceView(scheduler, cpu_backend)
    qtbot.addWidget(view)
    view.resize(640, 400)
    with qtbot.waitSignal(view.frame_shown, timeout=20000):
        view.show()
    canvas = view.canvas
    # zoomed in, so that the points under the axes lie on the globe, just off the visible map
    canvas.vb.setRange(xRange=(-20.0, 20.0), yRange=(-10.0, 10.0), padding=0.0)
    before = view.ref
    for axis in ("left", "bottom"):
        pos = QPointF(canvas.mapFromScene(canvas.plot.getAxis(axis).sceneBoundingRect().center()))
        for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
            buttons = Qt.MouseButton.LeftButton if kind == QEvent.Type.MouseButtonPress else Qt.MouseButton.NoButton
            QApplication.sendEvent(canvas.viewport(), QMouseEvent(
                kind, pos, canvas.viewport().mapToGlobal(pos), Qt.MouseButton.LeftButton, buttons,
                Qt.KeyboardModifier.NoModifier))
        assert view.ref == before, f"a click on the {axis} axis moved the reference"
    # a click on the map itself still sets it
    vb_rect = canvas.vb.sceneBoundingRect()
    pos = QPointF(canvas.mapFromScene(vb_rect.center()))
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
        buttons = Qt.MouseButton.LeftButton if kind == QEvent.Type.MouseButtonPress else Qt.MouseButton.NoButton
        QApplication.sendEvent(canvas.viewport(), QMouseEvent(
            kind, pos, canvas.viewport().mapToGlobal(pos), Qt.MouseButton.LeftButton, buttons,
            Qt.KeyboardModifier.NoModifier))
    assert view.ref != before
    # nothing left in flight when the view goes: its frames would land on deleted plot items
    qtbot.waitUntil(lambda: not view.in_flight and not view._dirty
                    and not view._render_timer.isActive(), timeout=20000)


def test_a_keyboard_interrupt_reaching_the_excepthook_closes_the_window(qtbot, capsys):
    import sys

    from PyQt6.QtWidgets import QWidget

    from explorer.errors import install_excepthook
    w = QWidget()
    qtbot.addWidget(w)
    w.show()
    old = sys.excepthook
    try:
        hook = install_excepthook(lambda: w)
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            hook(type(exc), exc, exc.__traceback__)
    finally:
        sys.excepthook = old
    qtbot.waitUntil(lambda: not w.isVisible())
    assert "Traceback" not in capsys.readouterr().err
