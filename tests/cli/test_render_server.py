"""`main.py --serve` (cli/serve.py) and the `--render` commands it takes (cli/serve_client.py):
the same file as the command's own process writes, the client's folder, output and exit status,
Ctrl+C on the client cancelling the render there, and commands of other settings left alone."""
import os
import signal
import subprocess
import sys
import time

import pytest

from cli import serve_client

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAIN = os.path.join(ROOT, "main.py")
pytestmark = pytest.mark.skipif(not serve_client.supported(), reason="Unix sockets only")


def _env(run_dir, **extra):
    env = {k: v for k, v in os.environ.items() if k != serve_client.OFF_ENV}
    env[serve_client.RUN_DIR_ENV] = str(run_dir)
    env.update(extra)
    return env


class Server:
    def __init__(self, run_dir, log, idle="5"):
        self.run_dir, self.log = run_dir, log
        env = _env(run_dir, GPU_EXPLORER_SERVE_WARM="plain")
        self.proc = subprocess.Popen([sys.executable, MAIN, "--serve", "--backend", "cpu",
                                      "--idle-minutes", idle], cwd=ROOT, env=env,
                                     stdout=open(log, "w"), stderr=subprocess.STDOUT)

    def wait_ready(self, timeout=180):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if "ready" in self.text():
                return
            assert self.proc.poll() is None, self.text()
            time.sleep(0.1)
        raise AssertionError(f"no server within {timeout} s: {self.text()}")

    def text(self):
        with open(self.log) as fh:
            return fh.read()

    def served(self):
        return [line for line in self.text().splitlines() if line.startswith("render server: ")]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "run", tmp_path / "server.log")
    try:
        s.wait_ready()
        yield s
    finally:
        s.stop()


def render(args, run_dir, cwd, **env):
    return subprocess.run([sys.executable, MAIN, "--render", "mandelbrot", "--backend", "cpu",
                           *args], cwd=cwd, env=_env(run_dir, **env), capture_output=True,
                          text=True, timeout=300)


def test_a_render_through_the_server_is_the_one_its_own_process_writes(server, tmp_path):
    args = ["--size", "48x32", "--center=-0.7435,0.1314", "--width", "0.002", "--iters", "300"]
    got = render(args + ["--out", "served.png"], server.run_dir, tmp_path)
    assert got.returncode == 0, got.stderr
    assert "wrote served.png (48x32, mandelbrot, CPU)" in got.stdout
    assert len(server.served()) == 1 and "served.png -> 0" in server.served()[0]
    own = render(args + ["--out", "own.png", "--no-server"], server.run_dir, tmp_path)
    assert own.returncode == 0 and len(server.served()) == 1
    assert (tmp_path / "served.png").read_bytes() == (tmp_path / "own.png").read_bytes()


def test_the_clients_folder_and_its_mistakes(server, tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    got = render(["--size", "16x16", "--out", "rel.npy"], server.run_dir, sub)
    assert got.returncode == 0 and (sub / "rel.npy").exists()
    assert not (tmp_path / "rel.npy").exists() and not os.path.exists(os.path.join(ROOT, "rel.npy"))
    bad = render(["--size", "16x16", "--out", "x.pdf"], server.run_dir, sub)
    assert bad.returncode == 2 and "--out must end in .png or .npy, not '.pdf'" in bad.stderr
    unknown = render(["--sizes", "16x16", "--out", "x.png"], server.run_dir, sub)
    assert unknown.returncode == 2 and "unrecognized arguments: --sizes" in unknown.stderr
    assert len(server.served()) == 3


def test_a_client_of_other_settings_renders_itself(server, tmp_path):
    got = render(["--size", "16x16", "--out", "x.png"], server.run_dir, tmp_path,
                 NUMBA_OPT="2")
    assert got.returncode == 0 and (tmp_path / "x.png").exists()
    assert server.served() == []


def test_ctrl_c_on_the_client_stops_the_render_there_and_the_server_goes_on(server, tmp_path):
    out = tmp_path / "big.png"
    p = subprocess.Popen([sys.executable, MAIN, "--render", "mandelbrot", "--backend", "cpu",
                          "--size", "8000x8000", "--center=-0.7436438870371587,0.131825904205312",
                          "--width", "1e-9", "--iters", "200000", "--out", str(out)],  # a minute
                         cwd=tmp_path, env=_env(server.run_dir), stderr=subprocess.PIPE,
                         text=True)
    time.sleep(1.5)
    assert p.poll() is None
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=60)[1]
    assert p.returncode == 130, err
    assert "interrupted: nothing was written to" in err and not out.exists()
    assert server.served()[-1].endswith("-> 130", 0, server.served()[-1].rindex(" in "))
    after = render(["--size", "16x16", "--out", "after.png"], server.run_dir, tmp_path)
    assert after.returncode == 0 and len(server.served()) == 2


def test_one_server_at_a_time_and_an_idle_one_stops(tmp_path):
    first = Server(tmp_path / "run", tmp_path / "one.log", idle="0.02")
    try:
        first.wait_ready()
        second = subprocess.run([sys.executable, MAIN, "--serve", "--backend", "cpu"], cwd=ROOT,
                                env=_env(tmp_path / "run"), capture_output=True, text=True,
                                timeout=120)
        assert second.returncode == 2 and "a render server already runs" in second.stderr
        assert first.proc.wait(60) == 0
        assert "no request for 0.02 minutes: stopped" in first.text()
        assert sorted(os.listdir(tmp_path / "run")) == []
    finally:
        first.stop()


def test_the_fingerprint_follows_the_settings_and_the_code(tmp_path):
    env = {"HOME": "/h", "NUMBA_OPT": "3", "PATH": "/bin"}
    base = serve_client.fingerprint(env)
    assert serve_client.fingerprint({**env, "PATH": "/usr/bin"}) == base   # not a setting
    assert serve_client.fingerprint({**env, "NUMBA_OPT": "2"}) != base
    assert serve_client.fingerprint({**env, "CUDA_VISIBLE_DEVICES": "1"}) != base
    assert serve_client.fingerprint({**env, serve_client.OFF_ENV: "1"}) == base
    module = os.path.join(ROOT, "cli", "serve_client.py")
    st = os.stat(module)
    try:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        assert serve_client.fingerprint(env) != base
    finally:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_which_commands_may_go_to_a_server():
    assert serve_client.wants_server(["--render", "mandelbrot", "--out", "x.png"])
    assert serve_client.wants_server(["--render=mandelbrot"])
    for argv in (["--render", "mandelbrot", "--no-server"], ["--render", "x", "--help"],
                 ["--movie", "x.mp4"], ["--serve"], []):
        assert not serve_client.wants_server(argv)


def test_a_server_for_a_backend_that_cannot_run_is_refused(tmp_path):
    # no GPU visible, whatever the machine has (and nothing of CUDA loaded in this process)
    got = subprocess.run([sys.executable, MAIN, "--serve", "--backend", "cuda"], cwd=ROOT,
                         env=_env(tmp_path / "run", CUDA_VISIBLE_DEVICES=""), capture_output=True,
                         text=True, timeout=120)
    assert got.returncode == 1 and "the cuda backend cannot run here" in got.stderr
    assert not (tmp_path / "run").exists()
