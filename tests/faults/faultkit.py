"""Shared by the fault-injection tests: run Python in a child process (for what only a real
process shows: Ctrl+C, closing a window, the exit status), with the repository importable."""
import os
import signal
import subprocess
import sys
import textwrap


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_env(**extra):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Child:
    """A Python child process running `code`; Ctrl+C (SIGINT) reaches it as from a terminal."""

    def __init__(self, code: str, env=None, args=()):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code), *args], cwd=ROOT, env=env or child_env(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            # a child started from a non-interactive shell would inherit SIGINT ignored
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines = []

    def wait_for_line(self, marker: str, timeout_lines: int = 10_000) -> str:
        """Read stdout until a line containing `marker` (the child says where it has got to)."""
        for _ in range(timeout_lines):
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"the child ended before {marker!r}: {self.finish(5)[1]}")
            self.lines.append(line)
            if marker in line:
                return line
        raise AssertionError(f"no {marker!r} in the child's output")

    def interrupt(self):
        self.proc.send_signal(signal.SIGINT)

    def finish(self, timeout: float = 120) -> tuple[str, str]:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"the child did not end within {timeout} s\n{err[-3000:]}")
        return "".join(self.lines) + out, err


def run_python(code: str, env=None, args=(), timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=ROOT,
                          env=env or child_env(), capture_output=True, text=True, timeout=timeout)


