"""Roofs kept per device in the user's cache folder, so the window does not re-measure each start.

One JSON file maps a key (device name, driver and numba versions: a new driver or compiler may
move the peaks) to the roofs measured there. A file that cannot be read or parsed is ignored (and
replaced at the next save); one bad entry is skipped, the others kept.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile

from .model import Roofs

FILE_NAME = "roofs.json"
ENV_DIR = "GPU_EXPLORER_CACHE_DIR"


def cache_dir() -> str:
    """$GPU_EXPLORER_CACHE_DIR, else the platform's user cache folder + gpu-explorer."""
    env = os.environ.get(ENV_DIR)
    if env:
        return os.path.expanduser(env)
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "gpu-explorer")


def cache_path(folder: str | None = None) -> str:
    return os.path.join(folder or cache_dir(), FILE_NAME)


def _read_all(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def load(key: str, folder: str | None = None) -> Roofs | None:
    """The roofs kept for `key`, or None (none kept, or the file or entry unreadable)."""
    entry = _read_all(cache_path(folder)).get(key)
    if entry is None:
        return None
    try:
        roofs = Roofs.from_dict(entry)
    except ValueError:
        return None
    return roofs if roofs.key == key else None


def save(roofs: Roofs, folder: str | None = None) -> str | None:
    """Keep `roofs` under its key; returns a plain-words problem, or None when written."""
    path = cache_path(folder)
    data = _read_all(path)
    data[roofs.key] = roofs.as_dict()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".roofs-", dir=os.path.dirname(path))
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)           # never a half-written file for the next reader
    except OSError as exc:
        return f"the roofs could not be kept in {path}: {exc.strerror or exc}"
    return None
