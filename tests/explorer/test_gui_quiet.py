"""The GUI thread steps aside while a worker measures a short CPU point (issue 39): no repaint of
its own shares the cores with the measurement, and none waits longer than HOLD_S for it."""
from __future__ import annotations

import threading
import time

from PyQt6.QtCore import QTimer

from explorer import gui_quiet
from explorer.gui_quiet import GuiQuiet


def _ticking(qtbot):
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(1)
    qtbot.waitUntil(lambda: len(ticks) > 3, timeout=2000)
    return timer, ticks


def _ticks_inside(qtbot, hold_s):
    """The GUI thread's 1 ms ticks while a worker holds `with quiet():` for hold_s, and when the
    worker entered it."""
    quiet = GuiQuiet()
    timer, ticks = _ticking(qtbot)
    out = {}

    def run():
        with quiet():
            out["entered"] = time.perf_counter()
            time.sleep(hold_s)
        out["left"] = time.perf_counter()
    t = threading.Thread(target=run)
    t.start()
    qtbot.waitUntil(lambda: "left" in out, timeout=3000)
    t.join()
    qtbot.waitUntil(lambda: ticks[-1] > out["left"], timeout=2000)   # and it goes on after
    timer.stop()
    return [x for x in ticks if out["entered"] < x < out["left"]], out["entered"]


def test_the_gui_thread_does_nothing_while_a_short_point_is_measured(qtbot):
    during, _ = _ticks_inside(qtbot, 0.02)
    assert during == [], f"{len(during)} GUI ticks inside a 20 ms measurement"


def test_the_gui_thread_goes_on_after_hold_s_however_long_the_point(qtbot):
    during, entered = _ticks_inside(qtbot, 0.4)
    assert during and during[0] - entered < gui_quiet.HOLD_S + 0.1, during[:3]


def test_on_the_gui_thread_it_returns_at_once(qtbot):
    quiet = GuiQuiet()
    t0 = time.perf_counter()
    with quiet():
        pass
    assert time.perf_counter() - t0 < 0.05
