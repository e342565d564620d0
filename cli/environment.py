"""Checks of the environment made before any kernel is imported.

numba colours its error messages through colorama, whose init() registers an exit handler that
writes ESC[0m to a terminal: every run that compiled a kernel ended with that stray escape code
after its last line. `plain_numba_messages` turns the colouring off before numba loads.

numba compiles the kernels with `cache=True` and refuses to even define such a function when it
finds no folder it can write its cache to (NUMBA_CACHE_DIR, the package's __pycache__, the user's
cache folder): the import fails with a traceback. Here that case is found first and the cache
moves to a fresh temporary folder for this run, with a note saying so.
"""
from __future__ import annotations

import importlib.util
import os
import tempfile
import types

# a module with numba-cached kernels: its folder is where numba would put the cache in-tree
PROBE_MODULE = "kernels.mandelbrot.escape"


def _probe():  # stands in for a kernel of PROBE_MODULE when numba is asked where to cache it
    return None


def numba_cache_writable(module: str = PROBE_MODULE) -> bool:
    """True when numba finds a writable cache folder for `module`'s kernels: it is asked exactly
    as when a cached kernel of that module is defined (its locators, overrides included)."""
    from numba.core import caching
    spec = importlib.util.find_spec(module)
    source = spec.origin if spec is not None else None
    if not source:
        return True          # nothing to cache for
    base = caching.CacheImpl if hasattr(caching, "CacheImpl") else caching._CacheImpl  # older numba

    class Probe(base):       # only its constructor is used: it finds the locator or raises
        def reduce(self, data):
            return data

        def rebuild(self, target_context, payload):
            return payload

        def check_cachable(self, data):
            return True

    stand_in = types.FunctionType(_probe.__code__.replace(co_filename=source), {}, "_probe")
    try:
        Probe(stand_in)
    except RuntimeError:     # "cannot cache function ...: no locator available"
        return False
    return True


def ensure_numba_cache() -> str | None:
    """Make sure numba can cache compiled kernels somewhere; returns a note for the user when it
    had to fall back to a temporary folder (kernels then compile afresh on the next start), or
    None when all was well. Call before importing any kernel module."""
    try:
        if numba_cache_writable():
            return None
        from numba.core import config
        folder = tempfile.mkdtemp(prefix="gpu-explorer-numba-")
    except (ImportError, OSError):
        return None          # numba's own import error, or no temp folder: the import says why
    config.CACHE_DIR = folder
    os.environ["NUMBA_CACHE_DIR"] = folder     # and for any process started from this one
    return (f"no writable folder for numba's kernel cache (set NUMBA_CACHE_DIR to one): compiled "
            f"kernels are kept in {folder} for this run only")


def plain_numba_messages() -> None:
    """No colorama in numba's messages (and no ESC[0m at exit); call before numba is imported.
    A value the user set is kept."""
    os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")


def prepare_kernels() -> None:
    """For the headless commands: ensure_numba_cache(), its note printed as one line."""
    message = ensure_numba_cache()
    if message:
        from .failures import note
        note(message)


def display_problem(environ=None, platform: str | None = None, ldd=None) -> str | None:
    """Why the window cannot open here, in one line, or None. On Linux Qt's platform plugins
    (xcb, wayland) abort the process with a core dump instead of an error when their libraries are
    missing or the display does not answer, so the command line checks first (cli.display).
    QT_QPA_PLATFORM set by the user wins. `ldd`: ldd's stand-in for tests."""
    import sys as _sys

    from .display import ldd_output, window_problem
    env = os.environ if environ is None else environ
    if (platform or _sys.platform) != "linux" or env.get("QT_QPA_PLATFORM"):
        return None
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return window_problem(env, ldd or ldd_output)
    return ("no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set): run "
            "it in a desktop session or over `ssh -X`, use --render or --bench, which need no "
            "display, or set QT_QPA_PLATFORM=offscreen to run the window invisibly")
