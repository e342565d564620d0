"""How a command fails: one line on stderr and an exit status (2 for a mistake in the arguments,
1 for a backend that cannot run here, 130 for Ctrl+C), never a traceback for a user's mistake."""
from __future__ import annotations

import sys

PROG = "main.py"
USAGE = 2       # bad arguments (argparse uses 2 as well)
UNUSABLE = 1    # the arguments are fine but this machine cannot do it
INTERRUPTED = 130   # Ctrl+C (128 + SIGINT, as shells report it)


def fail(code: int, message: str) -> int:
    """Print `message` as one error line and return `code` for main() to exit with."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return code


def interrupted(what: str = "") -> int:
    """Ctrl+C: one line saying what was kept (no traceback), and the status shells expect."""
    print(f"{PROG}: interrupted{': ' + what if what else ''}", file=sys.stderr)
    return INTERRUPTED


def note(message: str) -> None:
    """Something the user should know that does not stop the command."""
    print(f"{PROG}: note: {message}", file=sys.stderr)


def resolve_backend(choice: str):
    """(backend, None) for `--backend choice`, or (None, the one-line reason it cannot run)."""
    from kernels import backend
    try:
        return backend.resolve(choice), None
    except backend.BackendUnavailable as exc:
        return None, f"the {choice} backend cannot run here: {exc}"
