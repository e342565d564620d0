"""What the app keeps between runs (window settings, the user's bookmarks), read defensively.

Nothing read from disk may stop the window from opening: a value of the wrong type is dropped, a
file that cannot be used at all is set aside (renamed, so the user can still look at it) and the
app starts afresh, and each of these leaves a plain note for the status bar. A settings file that
cannot be written is noticed too (QSettings only says so through status() after a sync).
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
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


# values the app writes, as Qt's ini format spells them: plain text, numbers (as text), lists of
# those, and @ByteArray(…) for the window's geometry and state. Qt turns @Variant(…) into an
# object through QDataStream as it reads the file, and PyQt's objects in there are pickles: a
# settings file could run code. Such values are removed before Qt ever reads the file.
PLAIN_TAGS = ("@ByteArray(", "@String(", "@Invalid()", "@@")
_SECTION = re.compile(r"^\[[^\]]*\]$")
_KEY_VALUE = re.compile(r"^([^=]+?)\s*=\s*(.*)$")


def file_based(settings: QSettings) -> bool:
    """True when the settings live in an ini file this module can read before Qt does (Linux's
    native format; the registry and macOS's plists are read by Qt alone)."""
    if settings.format() == QSettings.Format.IniFormat:
        return True
    return settings.format() == QSettings.Format.NativeFormat and sys.platform not in ("win32", "darwin")


def _not_plain(value: str) -> bool:
    items = [v.strip().lstrip('"') for v in value.split(",")]
    return "@Variant(" in value or any(v.startswith("@") and not v.startswith(PLAIN_TAGS) for v in items)


def screen_ini(text: str) -> tuple[str | None, list[str]]:
    """(the text with every value that is not plain removed, their keys); (None, []) when the
    text is not an ini file at all (NUL bytes, a line that is neither `[section]` nor `key=value`)."""
    if "\0" in text:
        return None, []
    kept, dropped, section = [], [], ""
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        if not bare or bare.startswith((";", "#")):
            kept.append(line)
            continue
        if _SECTION.match(bare):
            section = bare[1:-1]
            kept.append(line)
            continue
        m = _KEY_VALUE.match(bare)
        if not m:
            return None, []
        if _not_plain(m.group(2)):
            key = m.group(1)
            dropped.append(key if section in ("", "General") else f"{section}/{key}")
            continue
        kept.append(line)
    return "".join(kept), dropped


def _rewrite(path: str, text: str) -> bool:
    """Replace `path` by `text` (written beside it, then renamed over it; its mode kept)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        mode = os.stat(path).st_mode & 0o777
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        return False


def _aside_note(moved: str | None, path: str) -> str:
    if moved:
        return f"set aside as {moved}"
    return f"{path} could not be renamed, so it is left as it was and not used"


def open_settings(settings: QSettings) -> tuple[QSettings, list[str]]:
    """The settings to use, and notes on what was wrong with them. Read here before Qt reads them:
    a value that is not plain (bytes, text, a number) is removed with a note; a file that is not
    an ini file, or that Qt cannot parse, is set aside (renamed beside itself) and a fresh one (same
    path and format) is used instead, so the file is never overwritten with the defaults."""
    notes = []
    path, fmt = settings.fileName(), settings.format()
    fresh, dropped = None, []
    if file_based(settings) and os.path.isfile(path):
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
            text, dropped = screen_ini(raw.decode("utf-8"))
        except UnicodeDecodeError:
            text, dropped = None, []
        except OSError:
            text, dropped = "", []      # Qt cannot read it either: nothing of it is used
        if text is None:
            fresh = _set_aside_note(path, fmt, notes, "it is not a settings file")
        elif dropped:
            for key in dropped:
                notes.append(f"The saved {key} was not a plain value (bytes, text or a number) "
                             "and was reset; nothing in it was run")
            if not _rewrite(path, text):
                fresh = _set_aside_note(path, fmt, notes, "its unsafe values could not be removed")
    if fresh is not None or dropped:
        # Qt read the file's text when `settings` was made and parses its values when first asked:
        # sync() makes it read the file again (it changed or went), so the old text is never parsed
        settings.sync()
    if fresh is not None:
        return fresh, notes
    settings.allKeys()                  # Qt parses the file now; status() tells what it found
    if settings.status() == QSettings.Status.FormatError:
        return _set_aside_note(path, fmt, notes, "Qt could not parse it"), notes
    return settings, notes


def _set_aside_note(path: str, fmt, notes: list[str], why: str) -> QSettings:
    """Set the unusable settings file aside, note where, and return settings to use instead: a
    fresh file at the same path, or (when it could not be moved) one in a temporary folder."""
    moved = set_aside(path)
    notes.append(f"The settings file could not be read ({why}), so the defaults are used; "
                 f"{_aside_note(moved, path)}")
    if moved is None:
        path = os.path.join(tempfile.mkdtemp(prefix="gpu-explorer-settings-"), "settings.ini")
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings(path, fmt)


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
    # FormatError is about reading (open_settings sets such a file aside): the write went through
    if settings.status() != QSettings.Status.AccessError:
        return None
    return f"Settings will not be saved: {settings.fileName()}: it is not writable"
