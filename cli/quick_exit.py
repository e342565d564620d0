"""A finished `--movie` over GPUs ends its process at once (os._exit) instead of through the
interpreter's shutdown: the movie is written and its files closed, and the shutdown only unloads
numba's modules and tears down each GPU's context one by one, which the driver does anyway when
the process ends (and which has crashed at exit after several GPUs: kernels/spread/local.py's
_quiet_exit). GPU_EXPLORER_QUICK_EXIT=0 keeps Python's own shutdown.

Only `main.py` run as a program calls finish(); a test that calls main.main() returns as usual."""
from __future__ import annotations

import os
import sys

_state = {"program": False, "wanted": False}


def as_program() -> None:
    """main.py runs as the program (not main.main() called by a test): finish() may end it."""
    _state["program"] = True


def is_program() -> bool:
    """Whether main.py runs as the program: one command, then the process ends."""
    return _state["program"]


def request() -> None:
    """The command's work is done and nothing but the interpreter's shutdown is left."""
    _state["wanted"] = True


def enabled(ahead: bool = False) -> bool:
    """Whether finish() ends the process now (ahead: whether it would once request()ed)."""
    return (_state["program"] and (_state["wanted"] or ahead)
            and os.environ.get("GPU_EXPLORER_QUICK_EXIT", "").strip() != "0")


def finish(code: int) -> int:
    """Returns `code` (for sys.exit), or ends the process now with it when request()ed."""
    if enabled():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(int(code or 0))
    return code
