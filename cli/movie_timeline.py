"""Where a `--movie` command's wall time goes, in one line: seconds since the process started
(the interpreter's own start-up and the imports included) at which each phase ended, so a run on
GPUs shows what is not rendering (start-up, the first frame's wait, the tail, the join, the close).

    timeline: start-up 1.2 s (imports 0.9, pool 0.3), first frame at 2.0 s, last frame at 14.1 s,
    join 14.8 s, close 15.0 s
"""
from __future__ import annotations

import os
import time


def _process_start() -> float:
    """time.monotonic() of this process's start (Linux: /proc's start time, in the same clock as
    CLOCK_BOOTTIME); where that cannot be read, when this module was imported."""
    try:
        with open("/proc/self/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")       # field 22: starttime
        ago = time.clock_gettime(time.CLOCK_BOOTTIME) - started
        return time.monotonic() - max(0.0, ago)
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic()


_START = _process_start()


class Timeline:
    """Marks of a movie command's phases, each the seconds since the process started."""

    def __init__(self):
        self.marks: dict[str, float] = {}

    def mark(self, name: str, once: bool = False) -> None:
        if once and name in self.marks:
            return
        self.marks[name] = time.monotonic() - _START

    def at(self, name: str) -> float | None:
        return self.marks.get(name)

    def line(self) -> str:
        m = self.marks
        parts = []

        def s(name):
            return f"{m[name]:.2f}"
        if "pool" in m:
            inner = [f"imports {s('imports')}"] if "imports" in m else []
            inner.append(f"pool {m['pool'] - m.get('imports', 0.0):.2f}")
            parts.append(f"start-up {s('pool')} s ({', '.join(inner)})")
        for name, text in (("reference", "reference at"), ("warm", "warm at"),
                           ("first frame", "first frame at"), ("last frame", "last frame at"),
                           ("join", "join done at"), ("close", "closed at")):
            if name in m:
                parts.append(f"{text} {s(name)} s")
        return "timeline (s since the process started): " + ", ".join(parts)
