"""Checks of the environment made before any kernel is imported.

numba colours its error messages through colorama, whose init() registers an exit handler that
writes ESC[0m to a terminal: every run that compiled a kernel ended with that stray escape code
after its last line. `plain_numba_messages` turns the colouring off before numba loads.

numba compiles the kernels with `cache=True` and refuses to even define such a function when it
finds no folder it can write its cache to (NUMBA_CACHE_DIR, the package's __pycache__, the user's
cache folder): the import fails with a traceback. `ensure_numba_cache` finds that case before any
kernel module is imported (main.py calls it first) and has the kernels compiled in memory only
(kernels.numba_cache), with a note saying what that costs.
"""
from __future__ import annotations

import os


def ensure_numba_cache() -> str | None:
    """Make sure numba can define the cached kernels; returns a note for the user when they will
    be compiled in memory only, or None when numba has a folder for them. Call before importing
    any kernel module."""
    try:
        from kernels.numba_cache import cache_writable, compile_in_memory
        if cache_writable():
            return None
        compile_in_memory()
    except ImportError:
        return None          # numba's own import error: the command's import says why
    return ("no folder numba can write its kernel cache to (set NUMBA_CACHE_DIR to a writable "
            "one to keep them): the kernels are compiled in memory only, so every start "
            "compiles them again, as a first start does (seconds for a picture, up to a minute "
            "with the deep-zoom kernels)")


def plain_numba_messages() -> None:
    """No colorama in numba's messages (and no ESC[0m at exit); call before numba is imported.
    A value the user set is kept."""
    os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")


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
