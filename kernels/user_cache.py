"""The app's folder in the user's cache, by the platform's convention ($XDG_CACHE_HOME or
~/.cache on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows), and the variable that
moves it or turns every disk cache off. Shared by the reference cache and the kept roofs."""
from __future__ import annotations

import os
import sys

ENV_FOLDER = "GPU_EXPLORER_CACHE_DIR"
OFF = "off"         # ENV_FOLDER's value for no disk cache at all
APP = "gpu-explorer"


def platform_cache_folder(environ=None, platform: str | None = None) -> str:
    """The app's cache folder where ENV_FOLDER does not name one (not created here)."""
    env = os.environ if environ is None else environ
    plat = platform or sys.platform
    home = os.path.expanduser("~")
    if plat.startswith("win"):
        return os.path.join(env.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local"), APP,
                            "Cache")
    if plat == "darwin":
        return os.path.join(home, "Library", "Caches", APP)
    return os.path.join(env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), APP)
