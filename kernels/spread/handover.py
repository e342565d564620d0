"""The interpreter's thread switch interval while a pool drives several GPUs from one process, or
while the window's worker thread (kernels/scheduler.py) runs beside the GUI thread.

Each GPU's worker thread holds the GIL from the moment its synchronisation returns until its next
blocking call, for the whole host part of a band (Python and the driver calls that keep the GIL);
the other worker, whose GPU has just finished, waits for it, its GPU idle meanwhile, for up to
the switch interval (5 ms by default) before the interpreter makes the holder let go. A shorter
interval while such a pool is open hands the GIL over sooner (docs/notes/performance-history.md,
"The GIL between two workers"); the previous interval comes back when the last such pool closes.
"""
from __future__ import annotations

import sys
import threading

# seconds; measured against the default on deep posters over two GPUs
POOL_SWITCH_S = 0.0002

_lock = threading.Lock()
_held = [0, None]       # pools holding the short interval, the interval it replaced (or None)


def shorten() -> None:
    """A pool of several GPU workers opens: the short interval from now on."""
    with _lock:
        if _held[0] == 0:
            before = sys.getswitchinterval()
            if before > POOL_SWITCH_S:
                sys.setswitchinterval(POOL_SWITCH_S)
                _held[1] = before
        _held[0] += 1


def restore() -> None:
    """That pool closes: the interval from before, once no such pool is left open."""
    with _lock:
        if _held[0] == 0:
            return
        _held[0] -= 1
        if _held[0] == 0 and _held[1] is not None:
            if abs(sys.getswitchinterval() - POOL_SWITCH_S) < 1e-6:   # nobody changed it since
                sys.setswitchinterval(_held[1])
            _held[1] = None
