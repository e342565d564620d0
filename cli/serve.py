"""`main.py --serve`: a render server. It starts numba, numba-cuda and the GPU's context once,
draws a small frame of each kind so every kernel is loaded, then runs each `--render` command a
client hands it (cli/serve_client.py) in this process, one at a time, with the client's folder,
output and exit status. A render then costs its frame and its file, not a fresh process's start.

It serves only clients of the same user with the same code and settings (the fingerprint), stops
on Ctrl+C or SIGTERM, and by itself after --idle-minutes without a request (the GPU memory its
renderers hold is then given back).
"""
from __future__ import annotations

import _thread
import io
import json
import os
import signal
import socket
import sys
import threading
import time

from .failures import (INTERRUPTED, PROG, TERMINATED, UNUSABLE, USAGE, fail, handle_sigterm,
                       interrupted)
from .serve_client import INFO, SOCKET, fingerprint, private, read_info, run_dir, send, supported

DEFAULT_IDLE_MINUTES = 30.0
# the frames drawn before the server says it is ready: the plain escape-time kernels and the deep
# ones (perturbation below 1e-15, the extended format below 1e-290)
WARM_RENDERS = {"plain": ("--size", "16x16"),
                "deep": ("--size", "16x16", "--center", "-1.7499,0.0001", "--width", "1e-20"),
                "extended": ("--size", "16x16", "--center", "-1.7499,0.0001", "--width", "1e-300")}
# which of them, comma-separated (default all; the suite's servers draw the plain one only)
WARM_ENV = "GPU_EXPLORER_SERVE_WARM"


class _Forward(io.TextIOBase):
    """sys.stdout or sys.stderr while a request runs: what is written goes to the client."""

    def __init__(self, sock, key: str, tty: bool, lock: threading.Lock):
        self.sock, self.key, self.tty, self.lock = sock, key, tty, lock

    def write(self, text: str) -> int:
        if text:
            with self.lock:
                try:
                    send(self.sock, {self.key: text})
                except OSError:     # the client went away: its cancel stops the render
                    pass
        return len(text)

    def isatty(self) -> bool:
        return self.tty

    def writable(self) -> bool:
        return True


class Server:
    def __init__(self, backend: str, idle_minutes: float):
        self.backend = backend
        self.idle_s = max(1.0, float(idle_minutes) * 60.0)
        self.folder = run_dir()
        self.path = os.path.join(self.folder, SOCKET)
        self.fingerprint = fingerprint()
        self.sock = None
        self.served = 0

    def open(self) -> str | None:
        """Make the folder and the socket; the reason it cannot, or None."""
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
        except OSError as exc:
            return f"cannot make {self.folder}: {exc.strerror}"
        if not private(self.folder):
            return (f"{self.folder} is not a folder only you can enter; remove it or set "
                    "GPU_EXPLORER_RUN_DIR to another")
        info = read_info(self.folder)
        if info is not None and _alive(info.get("pid")) and _answers(self.path):
            return f"a render server already runs (pid {info['pid']}); stop it first"
        try:
            os.unlink(self.path)            # a stopped server's socket
        except FileNotFoundError:
            pass
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        return None

    def warm(self) -> None:
        """Each kind of frame once, into a file that is then removed: the kernels are loaded and
        the first client's render finds them ready."""
        import tempfile
        with tempfile.TemporaryDirectory(prefix="gpu-explorer-warm-") as tmp:
            kinds = os.environ.get(WARM_ENV, ",".join(WARM_RENDERS)).split(",")
            for extra in (WARM_RENDERS[k.strip()] for k in kinds if k.strip() in WARM_RENDERS):
                out = os.path.join(tmp, "warm.png")
                argv = ["--render", "mandelbrot", "--backend", self.backend, "--out", out, *extra]
                with _quiet():
                    render_command(argv)

    def publish(self) -> None:
        tmp = os.path.join(self.folder, INFO + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"pid": os.getpid(), "fingerprint": self.fingerprint,
                       "backend": self.backend, "started": time.time()}, fh)
        os.replace(tmp, os.path.join(self.folder, INFO))

    def close(self) -> None:
        info = read_info(self.folder)
        if info is not None and info.get("pid") == os.getpid():
            for name in (INFO, SOCKET):
                try:
                    os.unlink(os.path.join(self.folder, name))
                except OSError:
                    pass
        if self.sock is not None:
            self.sock.close()

    def loop(self) -> int:
        """Serve until Ctrl+C, SIGTERM or the idle time; the exit status."""
        # a client's cancel arrives as Ctrl+C (_thread.interrupt_main), which does nothing where
        # SIGINT is ignored, as for a server started in the background by a script
        signal.signal(signal.SIGINT, signal.default_int_handler)
        handle_sigterm()
        self.sock.settimeout(self.idle_s)
        while True:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                print(f"render server: no request for {self.idle_s / 60:g} minutes: stopped "
                      f"after {self.served} request{'s' if self.served != 1 else ''}", flush=True)
                return 0
            except KeyboardInterrupt:
                return interrupted(f"the render server stopped after {self.served} requests")
            with conn:
                conn.settimeout(None)
                if not self.serve(conn):
                    return interrupted(f"the render server stopped after {self.served} requests")

    def serve(self, conn) -> bool:
        """One client's request; False when Ctrl+C or SIGTERM came to this process meanwhile."""
        try:
            lines = conn.makefile("r", encoding="utf-8")
            req = json.loads(lines.readline() or "{}")
            argv, cwd = [str(a) for a in req["argv"]], str(req["cwd"])
        except (OSError, ValueError, KeyError, TypeError):
            return True
        if req.get("fingerprint") != self.fingerprint:
            _try_send(conn, {"refused": "other code or settings than this server's"})
            return True
        _try_send(conn, {"accepted": os.getpid()})
        run = _Request(conn, lines)
        t0 = time.perf_counter()
        try:
            code = self._run(run, argv, cwd, req)
        except KeyboardInterrupt:       # landed between the render's end and its clean-up
            code = interrupted()
        own = not run.cancelled and code in (INTERRUPTED, TERMINATED)
        self.served += 1
        print(f"render server: {' '.join(argv)} -> {code} in {time.perf_counter() - t0:.2f} s",
              flush=True)
        with run.lock:
            _try_send(conn, {"exit": code})
        return not own

    def _run(self, run, argv, cwd, req) -> int:
        from . import failures
        out, err, here = sys.stdout, sys.stderr, os.getcwd()
        columns = os.environ.get("COLUMNS")
        try:
            os.chdir(cwd)
        except OSError as exc:
            with run.lock:
                _try_send(run.conn, {"err": f"{PROG}: error: cannot enter {cwd}: {exc.strerror}\n"})
            return UNUSABLE
        if req.get("columns"):
            os.environ["COLUMNS"] = str(int(req["columns"]))
        tty = bool(req.get("tty"))
        sys.stdout = _Forward(run.conn, "out", tty, run.lock)
        sys.stderr = _Forward(run.conn, "err", tty, run.lock)
        run.watch()
        try:
            code = render_command(argv)
        except SystemExit as exc:          # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else (USAGE if exc.code else 0)
        except KeyboardInterrupt:          # outside the render's own handling (its parsing)
            code = interrupted()
        except Exception:                  # a bug: its traceback to the client, as at home
            import traceback
            traceback.print_exc()
            code = UNUSABLE
        finally:
            run.finish()
            sys.stdout, sys.stderr = out, err
            failures.reset_terminated()
            os.chdir(here)
            if columns is None:
                os.environ.pop("COLUMNS", None)
            else:
                os.environ["COLUMNS"] = columns
        return code


class _Request:
    """A request being served: its connection, and the thread that turns the client's cancel
    (or its going away) into Ctrl+C here while the render runs, and never after."""

    def __init__(self, conn, lines):
        self.conn, self.lines = conn, lines
        self.lock = threading.Lock()
        self.done = False
        self.cancelled = False

    def watch(self) -> None:
        threading.Thread(target=self._watch, name="render-server-cancel", daemon=True).start()

    def finish(self) -> None:
        with self.lock:
            self.done = True

    def _watch(self) -> None:
        term = False
        try:
            for line in self.lines:
                msg = json.loads(line)
                if isinstance(msg, dict) and "cancel" in msg:
                    term = msg["cancel"] == "term"
                    break
        except (OSError, ValueError):
            pass
        with self.lock:
            if self.done:
                return
            self.cancelled = True
            if term:
                from . import failures
                failures.mark_terminated()
            _thread.interrupt_main()


def render_command(argv: list[str]) -> int:
    """`main.py ARGV` for a --render command, in this process (main.py's own path for it)."""
    from .args import mode_error, parse
    from .render import run_render
    args = parse(argv)
    problem = mode_error(args)
    if problem:
        return fail(USAGE, problem)
    if not args.render:
        return fail(USAGE, "the render server runs --render commands only")
    return run_render(args)


def _try_send(conn, message: dict) -> None:
    try:
        send(conn, message)
    except OSError:
        pass


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError):
        return False
    return True


def _answers(path: str) -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


class _quiet:
    """The warm-up renders' output goes nowhere."""

    def __enter__(self):
        self.saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()

    def __exit__(self, *exc):
        sys.stdout, sys.stderr = self.saved
        return False


def run_serve(args) -> int:
    if not supported():
        return fail(UNUSABLE, "the render server needs Unix sockets (Linux or macOS)")
    from .failures import resolve_backend
    be, why = resolve_backend(args.backend)
    if be is None:                      # a server for a GPU that cannot run serves nothing
        return fail(UNUSABLE, why)
    server = Server(args.backend, args.idle_minutes or DEFAULT_IDLE_MINUTES)
    problem = server.open()
    if problem:
        return fail(USAGE, problem)
    from . import quick_exit
    if quick_exit.is_program() and "GPU_EXPLORER_TIMING" not in os.environ:
        from kernels import timing
        timing.set_method("events")     # as a headless render's (cli/render_start.py)
    try:
        t0 = time.perf_counter()
        server.warm()
        server.publish()
        print(f"render server ready in {time.perf_counter() - t0:.1f} s (pid {os.getpid()}, "
              f"{server.path}): `--render` commands of this user, this code and these settings "
              f"now run here; Ctrl+C stops it", flush=True)
        return server.loop()
    except KeyboardInterrupt:
        return interrupted("the render server stopped")
    finally:
        server.close()
