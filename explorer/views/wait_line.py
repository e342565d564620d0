"""A status line for a wait of unknown length (a first compile): what is running, and the seconds
it has run so far, said again every second. A compile's length depends on the machine and its
load (6 s on an idle 2-core laptop, 15 s under load), so the line counts up instead of promising.
"""
from __future__ import annotations

import time

from PyQt6.QtCore import QTimer

TICK_MS = 1000


def wait_text(what: str, seconds: float, tail: str = "") -> str:
    """`what` with the seconds so far (none in the first second), then `tail`."""
    so_far = f" ({seconds:.0f} s so far)" if seconds >= 1 else ""
    return f"{what}{so_far}{tail}"


class WaitLine:
    """One wait at a time, on `emit(text, timeout_ms)` (a view's status_message.emit)."""

    def __init__(self, parent, emit):
        self._emit = emit
        self._what = None
        self._tail = ""
        self._since = 0.0
        self._timer = QTimer(parent)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._say)

    @property
    def active(self) -> bool:
        return self._what is not None

    @property
    def what(self) -> str | None:
        return self._what

    def start(self, what: str, tail: str = ""):
        """Say `what` now and every second; the count keeps running if the same wait is started
        again (a second report of the same stage)."""
        if what != self._what:
            self._since = time.perf_counter()
        self._what, self._tail = what, tail
        self._say()
        self._timer.start()

    def stop(self):
        self._what = None
        self._timer.stop()

    def text(self) -> str | None:
        if self._what is None:
            return None
        return wait_text(self._what, time.perf_counter() - self._since, self._tail)

    def _say(self):
        text = self.text()
        if text is not None:
            self._emit(text, 0)
