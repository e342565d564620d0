"""The window's GUI thread steps aside while a short CPU measurement runs, so that the window's own
repaints do not share the cores with it: on two cores numba's loop beside a repainting GUI thread
at times runs on one of its threads, and the window's CPU sweep read well below the bench's
figure (issue 39; the figures: docs/PERFORMANCE.md, "Honest CPU times")."""
from __future__ import annotations

import threading

from PyQt6.QtCore import QObject, Qt, QThread, QTimer, pyqtSignal

REACH_S = 0.25     # how long a worker waits for the GUI thread to step aside (it may be busy)
HOLD_S = 0.05      # the longest the GUI thread stays aside: its repaints resume after this


class _Hold:
    def __init__(self):
        self.holding = threading.Event()
        self.release = threading.Event()

    def run(self):
        """On the GUI thread: wait (no CPU, no GIL) until released or HOLD_S has passed."""
        self.holding.set()
        self.release.wait(HOLD_S)


class GuiQuiet(QObject):
    """`with quiet(): measure()` on a worker thread: the measurement starts once the GUI thread has
    handled what was queued before it (the last point's repaint included) and is waiting; the GUI
    thread goes on when the measurement ends or after HOLD_S, whichever is first. A GUI thread busy
    for longer than REACH_S (the user's own work) is real contention: the measurement goes on
    beside it. On the GUI thread itself it does nothing."""

    _ask = pyqtSignal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._ask.connect(self._arm, Qt.ConnectionType.QueuedConnection)

    def _arm(self, hold: _Hold):
        # a zero timer fires once the events already queued (paints included) are handled
        QTimer.singleShot(0, hold.run)

    def __call__(self):
        return _Quiet(self)


class _Quiet:
    def __init__(self, owner: GuiQuiet):
        self.owner = owner
        self.hold = None

    def __enter__(self):
        if QThread.currentThread() is not self.owner.thread():
            self.hold = _Hold()
            self.owner._ask.emit(self.hold)
            self.hold.holding.wait(REACH_S)
        return self

    def __exit__(self, *exc):
        if self.hold is not None:
            self.hold.release.set()
        return False
