"""A poster's finished bands listed in its parts folder from a thread of its own
(services/poster.py's `Poster.render`).

The thread that takes the bands from the pool only hands each one over (`BandMarks.add`); the
writer thread makes the parts file's pixels durable, then rewrites done.json with every band handed
over before that sync. The bands handed over while it does so wait for its next round, so one sync
and one rewrite serve every band that came in meanwhile. A band is never listed before its pixels
are on disk: a crash loses at most the bands not yet listed, and the same command renders them
again.
"""
from __future__ import annotations

import threading


class MarksFailed(OSError):
    """The writer thread could not list the finished bands (a full disk, a folder removed); the
    message says so in one line. Raised on the thread that hands bands over."""


class BandMarks:
    """The writer of one render's list of finished bands: `add(index, counts)` for each band
    whose pixels are in the parts file, `wait()` until every band handed over is listed (raising
    MarksFailed if the writer failed), `close()` to list what was handed over and stop."""

    def __init__(self, parts):
        self.parts = parts
        self.rounds = 0                 # syncs and rewrites of done.json so far
        self._pending: list[tuple[int, dict | None]] = []
        self._busy = False              # a round is under way
        self._closing = False
        self._error: MarksFailed | None = None
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="poster-marks", daemon=True)
        self._thread.start()

    def add(self, index: int, counts: dict | None = None) -> None:
        """Band `index` (with its tiles.exact_counts, if known) is in the parts file: list it.
        Raises MarksFailed once the writer has failed; after close() a band is not listed."""
        with self._cond:
            if self._error is not None:
                raise self._error
            if self._closing:       # a render thread outliving its command's close: not listed
                return
            self._pending.append((int(index), counts))
            self._cond.notify_all()

    def wait(self) -> None:
        """Return once every band handed over is listed; MarksFailed if the writer failed."""
        with self._cond:
            while (self._pending or self._busy) and self._error is None:
                self._cond.wait()
            if self._error is not None:
                raise self._error

    def close(self) -> None:
        """List what was handed over, then stop the writer (a failure was raised by add or wait,
        or is left unsaid after an interruption: its bands are rendered again next time)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closing:
                    self._cond.wait()
                if not self._pending:
                    return
                batch, self._pending = self._pending, []
                self._busy = True
            try:
                self.parts.mark_many(batch)
                failed = None
            except BaseException as exc:    # said on the render thread, not as a thread's traceback
                failed = _failure(self.parts.folder, exc)
            with self._cond:
                self._busy = False
                self.rounds += 1
                if failed is not None:
                    self._error = failed
                    self._pending.clear()
                self._cond.notify_all()
                if failed is not None:
                    return


def _failure(folder: str, exc: BaseException) -> MarksFailed:
    why = getattr(exc, "strerror", None)
    if not why:
        text = str(exc).strip()
        why = text.splitlines()[0] if text else type(exc).__name__
    out = MarksFailed(f"the list of finished bands in {folder} could not be updated ({why})")
    out.errno = getattr(exc, "errno", None)
    out.__cause__ = exc
    return out
