"""What the app keeps between runs (window settings, the user's bookmarks), read defensively.

Nothing read from disk may stop the window from opening: a value of the wrong type is dropped, a
file that cannot be used at all is set aside (renamed, so the user can still look at it) and the
app starts afresh, and each of these leaves a plain note for the status bar. A settings file that
cannot be written is noticed too (QSettings only says so through status() after a sync).
"""
from __future__ import annotations

import os
import time

from PyQt6.QtCore import QByteArray, QSettings


def set_aside(path: str) -> str | None:
    """Rename a file the app cannot use to `<name>.bad-<time>` so that the next start begins
    afresh and the user can still look at it; returns the new path, or None when renaming fails."""
    target = base = f"{path}.bad-{time.strftime('%Y%m%d-%H%M%S')}"
    n = 1
    while os.path.exists(target):       # never over an earlier one set aside the same second
        n += 1
        target = f"{base}-{n}"
    try:
        os.replace(path, target)
    except OSError:
        return None
    return target


def open_settings(settings: QSettings) -> tuple[QSettings, list[str]]:
    """The settings to use, and notes on what was wrong with them. A file QSettings cannot parse
    is set aside and a fresh one (same path and format) is used instead."""
    notes = []
    if settings.status() == QSettings.Status.FormatError:
        path, fmt = settings.fileName(), settings.format()
        moved = set_aside(path) if os.path.exists(path) else None
        where = f"; set aside as {os.path.basename(moved)}" if moved else ""
        notes.append(f"The settings file could not be read, so the defaults are used{where}")
        settings = QSettings(path, fmt)
        if moved is None:
            settings.clear()            # could not rename it: at least do not read it again
    return settings, notes


def read_bytes(settings: QSettings, key: str, notes: list[str]) -> QByteArray | None:
    """A saved QByteArray (window geometry, dock state), or None when absent or of the wrong type
    (then dropped from the settings, with a note)."""
    v = settings.value(key)
    if v is None:
        return None
    if isinstance(v, (QByteArray, bytes, bytearray)):
        return QByteArray(bytes(v))
    settings.remove(key)
    notes.append(f"The saved {key} was not usable ({type(v).__name__}) and was reset")
    return None


def read_choice(settings: QSettings, key: str, choices, notes: list[str]) -> str | None:
    """A saved string that must be one of `choices`, or None (dropped with a note if it is not)."""
    v = settings.value(key)
    if v is None:
        return None
    if isinstance(v, str) and v in choices:
        return v
    settings.remove(key)
    shown = repr(v) if len(repr(v)) <= 40 else f"a {type(v).__name__}"
    notes.append(f"The saved {key} {shown} is not one of {', '.join(choices)} and was reset")
    return None


def write_problem(settings: QSettings, *, probe: bool = False) -> str | None:
    """Sync the settings to disk and say in words when that failed (None when it worked). With
    `probe` a value that changes every time is written first: QSettings writes nothing, and so
    finds nothing wrong, when nothing changed (the window probes once as it starts)."""
    if probe:
        settings.setValue("lastStarted", time.strftime("%Y-%m-%dT%H:%M:%S"))
    settings.sync()
    status = settings.status()
    if status == QSettings.Status.NoError:
        return None
    why = "it is not writable" if status == QSettings.Status.AccessError else "it could not be written"
    return f"Settings will not be saved: {settings.fileName()}: {why}"
