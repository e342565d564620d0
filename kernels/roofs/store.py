"""Roofs kept per device in the user's cache folder, so the window does not re-measure each start.

One JSON file maps a key (device name, driver and numba versions: a new driver or compiler may
move the peaks) to the roofs measured there. A file that cannot be read or parsed is ignored (and
replaced at the next save); one bad entry is skipped, the others kept.
"""
from __future__ import annotations

import json
import os
import tempfile

from ..user_cache import ENV_FOLDER, OFF, platform_cache_folder
from .model import Roofs

FILE_NAME = "roofs.json"
ENV_DIR = ENV_FOLDER                   # the folder the reference cache also uses


def cache_dir() -> str | None:
    """$GPU_EXPLORER_CACHE_DIR (None when it is "off"), else the platform's user cache folder
    for the app, as the reference cache (kernels/mandelbrot/reference/reference_cache.py) finds it."""
    env = os.environ.get(ENV_DIR)
    if env:
        return None if env == OFF else os.path.expanduser(env)
    return platform_cache_folder()


def cache_path(folder: str | None = None) -> str | None:
    """The roofs file in `folder` (default: cache_dir()); None when the cache is off."""
    folder = folder or cache_dir()
    return os.path.join(folder, FILE_NAME) if folder else None


def _read_all(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def load(key: str, folder: str | None = None) -> Roofs | None:
    """The roofs kept for `key`, or None (none kept, or the file or entry unreadable)."""
    path = cache_path(folder)
    if path is None:
        return None
    entry = _read_all(path).get(key)
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
    if path is None:                    # the cache is off: nothing kept, nothing to say
        return None
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
