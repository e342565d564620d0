"""A `--render` handed to the render server (`main.py --serve`, cli/serve.py) when one runs for
this user with the same code and settings: the command then costs its frame, not the ~2 s a fresh
process spends starting numba, numba-cuda and the GPU's context (docs/PERFORMANCE.md,
"Start-up"). Without a server, or with one started from other code or other settings, the command
runs in its own process as always (`forward` returns None).

Imported before anything heavy (main.py asks it first): only the standard library, and little of
it. The server and its clients meet in a folder only this user can enter (`run_dir`): its socket,
and `server.json` saying which process serves and with what (`fingerprint`). Messages are JSON
lines: the request, then the server's output and the exit status; Ctrl+C (or SIGTERM) on the
client cancels the render on the server as it would here.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import stat
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# where the socket lives (tests: a folder of their own); "0" in OFF_ENV never asks a server
RUN_DIR_ENV = "GPU_EXPLORER_RUN_DIR"
OFF_ENV = "GPU_EXPLORER_SERVER"
SOCKET, INFO = "render.sock", "server.json"
# the settings a render depends on beside its options: a server started with others is not used
ENV_KEYS = ("HOME", "XDG_CACHE_HOME", "PYTHONPATH", "LD_LIBRARY_PATH")
ENV_PREFIXES = ("NUMBA_", "CUDA_", "GPU_EXPLORER_")
ENV_IGNORED = (RUN_DIR_ENV, OFF_ENV, "GPU_EXPLORER_QUICK_EXIT", "GPU_EXPLORER_SERVE_WARM")
CODE_DIRS = ("cli", "kernels", "services")
# the environment as the process began, before the app set any of numba's variables itself
_START_ENV: dict = {}


def remember_environment() -> None:
    """Keep the environment as given (main.py calls it first): the fingerprints compare the
    user's settings, not what this process changed since."""
    if not _START_ENV:
        _START_ENV.update(os.environ)


def supported() -> bool:
    """Unix sockets and user ids: Linux and macOS (not Windows)."""
    return hasattr(os, "getuid") and hasattr(socket, "AF_UNIX")


def run_dir() -> str:
    """The folder of this user's render server."""
    given = os.environ.get(RUN_DIR_ENV, "").strip()
    if given:
        return given
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(base, f"gpu-explorer-{os.getuid()}")


def private(folder: str) -> bool:
    """Whether `folder` is a real folder of this user that nobody else may enter (else a socket
    in it could be somebody else's)."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and stat.S_IMODE(st.st_mode) & 0o077 == 0)


def fingerprint(environ=None) -> str:
    """What a render's result depends on besides its options: the interpreter, the settings in
    the environment (ENV_KEYS, ENV_PREFIXES) and the app's code (each module's path, size and
    time of change), hashed."""
    env = environ if environ is not None else (_START_ENV or os.environ)
    h = hashlib.sha256()
    h.update(f"{sys.executable}\0{sys.version}\0".encode())
    for k in sorted(env):
        if (k in ENV_KEYS or k.startswith(ENV_PREFIXES)) and k not in ENV_IGNORED:
            h.update(f"{k}={env[k]}\0".encode())
    files = [os.path.join(ROOT, "main.py")]
    for d in CODE_DIRS:
        for folder, dirs, names in os.walk(os.path.join(ROOT, d)):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            continue
        h.update(f"{os.path.relpath(f, ROOT)}:{st.st_size}:{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def read_info(folder: str) -> dict | None:
    """server.json of the server in `folder`, or None (no server, or a folder not private)."""
    if not private(folder):
        return None
    try:
        with open(os.path.join(folder, INFO), encoding="utf-8") as fh:
            info = json.load(fh)
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def send(sock, message: dict) -> None:
    sock.sendall((json.dumps(message) + "\n").encode())


def forward(argv: list[str]) -> int | None:
    """Run the `--render` command `argv` on this user's render server and return its exit
    status, its output written here as it comes; None when no server can take it (the caller
    then runs it itself)."""
    if not supported() or os.environ.get(OFF_ENV, "").strip() == "0":
        return None
    folder = run_dir()
    info = read_info(folder)
    if info is None:
        return None
    mine = fingerprint()
    if info.get("fingerprint") != mine:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.path.join(folder, SOCKET))
        send(sock, {"argv": list(argv), "cwd": os.getcwd(), "fingerprint": mine,
                    "tty": _isatty(sys.stderr), "columns": _columns()})
        lines = sock.makefile("r", encoding="utf-8")
        first = json.loads(lines.readline() or "{}")
    except (OSError, ValueError):
        sock.close()
        return None
    if "accepted" not in first:        # another fingerprint by now, or a server stopping
        sock.close()
        return None
    return _relay(sock, lines)


def _relay(sock, lines) -> int:
    """The server's output until its exit status; Ctrl+C and SIGTERM here become a cancel there."""
    def on_term(signum, frame):
        raise KeyboardInterrupt("SIGTERM")
    try:
        signal.signal(signal.SIGTERM, on_term)
    except (ValueError, OSError):       # not the main thread: no handler
        pass
    while True:
        try:
            line = lines.readline()
            if not line:
                from .failures import PROG
                print(f"{PROG}: error: the render server stopped during the render (see its "
                      "terminal); run the command again", file=sys.stderr)
                return 1
            msg = json.loads(line)
        except KeyboardInterrupt as exc:
            try:
                send(sock, {"cancel": "term" if exc.args == ("SIGTERM",) else "int"})
            except OSError:
                return 130
            continue
        if "out" in msg:
            sys.stdout.write(msg["out"])
            sys.stdout.flush()
        elif "err" in msg:
            sys.stderr.write(msg["err"])
            sys.stderr.flush()
        elif "exit" in msg:
            sock.close()
            return int(msg["exit"])


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _columns() -> int | None:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return None


def wants_server(argv: list[str]) -> bool:
    """Whether `argv` is a `--render` that may go to a server (not --no-server, not --help)."""
    render = any(a == "--render" or a.startswith("--render=") for a in argv)
    return render and not any(a in ("--no-server", "--serve", "-h", "--help") for a in argv)
