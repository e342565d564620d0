"""How a command fails: one line on stderr and an exit status (2 for a mistake in the arguments,
1 for a backend that cannot run here, 130 for Ctrl+C, 143 for SIGTERM), never a traceback for a
user's mistake.

SIGTERM (what `kill`, systemd and a closing terminal session send) is handled as Ctrl+C is: the
handler raises `Terminated`, a KeyboardInterrupt, so every path that keeps work and removes
temporary files on Ctrl+C does the same for it; only the last line and the status (128 + 15, as
shells report a process ended by SIGTERM) differ.
"""
from __future__ import annotations

import os
import signal
import sys

USAGE = 2       # bad arguments (argparse uses 2 as well)
UNUSABLE = 1    # the arguments are fine but this machine cannot do it
INTERRUPTED = 130   # Ctrl+C (128 + SIGINT, as shells report it)
TERMINATED = 143    # SIGTERM (128 + SIGTERM)


def prog_name(argv0: str | None = None) -> str:
    """How the user started the program, for its messages and usage line: `gpu-explorer` (the
    installed command) or `main.py`."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0 or "")
    return "gpu-explorer" if name.lower().startswith("gpu-explorer") else "main.py"


PROG = prog_name()


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: handled wherever Ctrl+C is."""


_terminated: list[int] = []


def _on_sigterm(signum, frame):
    if not _terminated:         # once: a second SIGTERM must not cut the cleanup short
        _terminated.append(signum)
        raise Terminated()


def mark_terminated() -> None:
    """The command ends as SIGTERM ends it (a render server's client got one)."""
    if not _terminated:
        _terminated.append(int(signal.SIGTERM))


def reset_terminated() -> None:
    """A render server's next command starts afresh."""
    _terminated.clear()


def handle_sigterm() -> None:
    """From now on SIGTERM ends the command as Ctrl+C does (call on the main thread)."""
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError, AttributeError):   # not the main thread, or no SIGTERM here
        pass


def fail(code: int, message: str) -> int:
    """Print `message` as one error line and return `code` for main() to exit with."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return code


def cluster_failure(pool, exc: BaseException) -> str | None:
    """One line for a job that failed on a Dask cluster's worker (the worker's own error, or
    Dask's KilledWorker when workers died running it), or None when `pool` is no cluster: a
    failure in this process is a bug, and its traceback is how it gets found."""
    from kernels.spread.cluster import DaskPool
    if not isinstance(pool, DaskPool) or not isinstance(exc, Exception):
        return None
    from kernels.backend import first_line
    return f"a job failed on {pool.describe()}: {type(exc).__name__}: {first_line(exc)}"


def interrupted(what: str = "") -> int:
    """Ctrl+C or SIGTERM: one line saying what was kept (no traceback), and the status shells
    expect (130 for Ctrl+C, 143 for SIGTERM)."""
    word, code = ("terminated (SIGTERM)", TERMINATED) if _terminated else ("interrupted", INTERRUPTED)
    print(f"{PROG}: {word}{': ' + what if what else ''}", file=sys.stderr)
    return code


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
