"""The command line as a new user meets it: every option checked against the mode before any work,
bad values in one line with status 2, choices listed one way, longitudes with a stated meaning,
the window bench sized for its backend, big outputs announced, progress on a terminal, and no stray
escape code when the process ends."""
import io
import os
import pty
import subprocess
import sys

import pytest

import main
from cli import bench as cli_bench
from cli import progress as cli_progress
from services.requests import distance_request, wrap_longitude
from kernels import backend
from kernels import bench as kbench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(capsys, *argv):
    try:
        code = main.main(list(argv))
    except SystemExit as exc:       # argparse's own exit
        code = exc.code
    return code, capsys.readouterr()


@pytest.fixture
def nothing_may_run(monkeypatch):
    """Fails the test if a backend, a bench or the window is started."""
    import cli.bench
    import cli.render

    def forbidden(*a, **k):
        raise AssertionError("work started before the arguments were checked")
    for module in (cli.render, cli.bench, main):
        if hasattr(module, "resolve_backend"):
            monkeypatch.setattr(module, "resolve_backend", forbidden)
    monkeypatch.setattr(main, "_window_bench", forbidden)
    monkeypatch.setattr(kbench, "run", forbidden)
    monkeypatch.setattr("cli.failures.resolve_backend", forbidden)


@pytest.mark.parametrize("argv, words", [
    (["--bench", "--ui", "--seconds", "0"], "--seconds must be a number above 0"),
    (["--bench", "--ui", "--seconds", "-1"], "--seconds must be a number above 0"),
    (["--bench", "--ui", "--seconds", "nan"], "got 'nan'"),
    (["--bench", "--ui", "--seconds", "1e300"], "at most 3600"),
    (["--bench", "--repeats", "0"], "--repeats must be a whole number from 1"),
    (["--size", "800x600"], "--size does not apply when opening the window"),
    (["--bench", "--ui", "--only", "mandelbrot"], "--only does not apply with --bench --ui"),
    (["--bench", "--ui", "--repeats", "3"], "--repeats does not apply with --bench --ui"),
    (["--bench", "--seconds", "3"], "--seconds does not apply with --bench; it applies only with --bench --ui"),
    (["--bench", "--size", "64x64"], "--size does not apply with --bench;"),
    (["--bench", "--center", "0,0"], "--center does not apply with --bench"),
    (["--render", "mandelbrot", "--out", "x.png", "--json", "r.json"], "--json does not apply with --render"),
    (["--render", "mandelbrot", "--out", "x.png", "--view", "distance"], "--view does not apply with --render"),
    (["--render", "mandelbrot", "--out", "x.png", "--ui"], "--ui applies only with --bench"),
    (["--out", "x.png"], "--out does not apply when opening the window; it applies only with --render"),
    (["--render", "mandelbrot", "--bench"], "cannot be combined"),
    (["--render", "mandelbrot", "--out", "x.png", "--size", "-5x10"], "--size -5x10: both sides must be at least 1"),
    (["--render", "mandelbrot", "--out", "x.png", "--width", "-inf"], "--width must be a finite number above 0"),
    (["--backend", "tpu"], "--backend 'tpu' is unknown; choose one of: auto, cpu, cuda"),
    (["--view", "fractal"], "choose one of: mandelbrot, distance, throughput, random"),
    (["--render", "distance", "--out", "x.png", "--unit", "parsec"], "--unit 'parsec' is unknown; choose one of: km, nm, mi"),
    (["--render", "distance", "--out", "x.png", "--strategy", "magic"],
     "choose one of: host-mesh, broadcast, device-mesh"),
])
def test_every_bad_argument_is_one_line_and_status_2_before_any_work(capsys, nothing_may_run, argv, words):
    code, out = run(capsys, *argv)
    assert code == 2, out
    assert out.err.count("\n") == 1 and "Traceback" not in out.err, out.err
    assert words in out.err
    assert "expected one argument" not in out.err


def test_option_values_may_start_with_a_minus():
    from cli.args import join_negative_values
    assert join_negative_values(["--size", "-5x10", "--seconds", "-1", "--width", "-inf"]) == \
        ["--size=-5x10", "--seconds=-1", "--width=-inf"]
    assert join_negative_values(["--out", "-"]) == ["--out", "-"]
    assert join_negative_values(["--center", "--bench"]) == ["--center", "--bench"]


# ---------------------------------------------------------------- --only names what runs here

W = kbench.Workload


def test_only_a_gpu_workload_on_the_cpu_says_it_needs_the_gpu_and_never_lists_it():
    wls = [W("vector-add", "", None, backends=("cpu", "cuda")), W("vector-add-320M", "", None, backends=("cuda",)),
           W("mandelbrot-full", "", None, backends=("cpu", "cuda"))]
    cpu = backend.Backend("cpu")
    with pytest.raises(ValueError) as exc:
        cli_bench.select(wls, cpu, "vector-add-320M")
    msg = str(exc.value)
    assert "runs only on the GPU (--backend cuda)" in msg
    listed = msg.split("choose one of: ")[1].split(", ")
    assert listed == ["mandelbrot-full", "vector-add"]
    with pytest.raises(ValueError, match="no workload named 'nothing'; on the CPU choose one of: mandelbrot-full"):
        cli_bench.select(wls, cpu, "nothing")
    assert [w.name for w in cli_bench.select(wls, cpu, "vector-add")] == ["vector-add"]
    gpu = backend.Backend("cuda", device="Fake GPU")
    assert [w.name for w in cli_bench.select(wls, gpu, "vector-add")] == ["vector-add", "vector-add-320M"]


# ---------------------------------------------------------------- the window bench's size

def test_window_bench_picks_a_size_for_the_backend_and_says_so(capsys, monkeypatch):
    monkeypatch.setattr(backend, "cuda_status", lambda: backend.CudaStatus(False, "no GPU here"))
    calls = []

    def fake_bench(name, seconds, size):
        calls.append((name, seconds, size))
        return {"frames": 5, "fps": 10.0, "per_frame_ms": {}, "backend": name,
                "size": f"{size[0]}x{size[1]}", "iterations": 2000, "seconds": seconds}
    monkeypatch.setattr(main, "_window_bench", fake_bench)
    code, out = run(capsys, "--bench", "--ui", "--backend", "cpu")
    assert code == 0, out.err
    assert calls == [("cpu", 5.0, (960, 540))]
    assert '"size_note": "960x540 is the default size on the CPU' in out.out
    code, out = run(capsys, "--bench", "--ui", "--backend", "cpu", "--size", "320x200", "--seconds", "0.5")
    assert code == 0 and calls[-1] == ("cpu", 0.5, (320, 200)) and "size_note" not in out.out
    assert cli_bench.ui_bench_size(backend.Backend("cuda", device="x")) == (1920, 1080)


# ---------------------------------------------------------------- longitudes

def test_reference_longitudes_wrap_with_a_note_and_boxes_stay_within_a_turn():
    notes = []
    req = distance_request({"ref": "10,1000"}, 8, 4, False, notes=notes)
    assert req.ref == (10.0, -80.0) and notes == ["--ref longitude 1000 is -80 (longitudes wrap to [-180, 180))"]
    notes.clear()
    assert distance_request({"ref": "51.5074,-0.1278"}, 8, 4, False, notes=notes).ref == (51.5074, -0.1278)
    assert notes == []
    assert wrap_longitude(180.0) == 180.0 and wrap_longitude(-190.0) == 170.0
    assert distance_request({"bounds": "-10,10,170,190"}, 8, 4, False).bounds == (-10.0, 10.0, 170.0, 190.0)
    for bounds, words in (("-90,90,-180,900", "LON1 = 900 is out of range"),
                          ("-90,90,-600,-500", "LON0 = -600 is out of range"),
                          ("-90,90,-180,181", "spans 361° of longitude")):
        with pytest.raises(ValueError, match="within \\[-540, 540\\] and span at most 360°") as exc:
            distance_request({"bounds": bounds}, 8, 4, False)
        assert words in str(exc.value)


def test_render_says_when_a_longitude_wrapped(tmp_path, capsys):
    code, out = run(capsys, "--render", "distance", "--backend", "cpu", "--size", "16x8", "--ref", "0,1000",
                    "--out", str(tmp_path / "d.png"))
    assert code == 0, out.err
    assert out.err == "main.py: note: --ref longitude 1000 is -80 (longitudes wrap to [-180, 180))\n"


# ---------------------------------------------------------------- big outputs, progress

def test_large_outputs_are_announced_and_refused_when_the_disk_is_too_small(tmp_path, capsys, monkeypatch):
    assert cli_progress.describe_output(100, 100, "x.npy") is None
    big = cli_progress.describe_output(30000, 30000, "/data/x.npy")
    assert big == "writing a 6.7 GiB .npy (30000×30000 float64 values) to /data/x.npy"
    assert "3.4 GiB picture in memory" in cli_progress.describe_output(30000, 30000, "x.png")
    # end to end, with the threshold lowered so that a small render counts as large
    monkeypatch.setattr(cli_progress, "LARGE_OUTPUT_BYTES", 1000)
    out_path = tmp_path / "m.npy"
    code, out = run(capsys, "--render", "mandelbrot", "--backend", "cpu", "--size", "40x30",
                    "--iters", "20", "--out", str(out_path))
    assert code == 0, out.err
    assert out.out.splitlines()[0] == f"writing a 9.5 KiB .npy (40×30 float64 values) to {out_path}"

    class Usage:
        free = 5000
    monkeypatch.setattr(cli_progress.shutil, "disk_usage", lambda path: Usage)
    code, out = run(capsys, "--render", "mandelbrot", "--backend", "cpu", "--size", "40x30",
                    "--out", str(tmp_path / "n.npy"))
    assert code == 1 and out.err.count("\n") == 1
    assert "needs 9.5 KiB but the disk holding" in out.err and "has 4.9 KiB free" in out.err


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_draws_on_a_terminal_and_clears_its_line(monkeypatch):
    monkeypatch.setattr(cli_progress, "SHOW_AFTER_S", 0.0)
    term = FakeTerminal()
    bar = cli_progress.RenderProgress("mandelbrot 30000×30000 on the CPU", stream=term, mininterval=0.0)
    bar.report(0.25)
    bar.tick()
    assert "mandelbrot 30000×30000 on the CPU:  25%" in term.getvalue()
    bar.report(1.0)
    bar.tick()
    assert " 100%" in term.getvalue()
    bar.close()
    assert term.getvalue().endswith("\r")          # leave=False: the line is cleared


def test_no_progress_bar_when_stderr_is_not_a_terminal():
    pipe = io.StringIO()
    bar = cli_progress.RenderProgress("x", stream=pipe, mininterval=0.0)
    bar.report(0.5)
    bar.tick()
    bar.close()
    assert pipe.getvalue() == ""


def test_render_reports_strip_progress(tmp_path, capsys, monkeypatch):
    seen = []
    plain = cli_progress.RenderProgress.report
    monkeypatch.setattr(cli_progress.RenderProgress, "report", lambda self, f: (seen.append(f), plain(self, f)))
    code, out = run(capsys, "--render", "mandelbrot", "--backend", "cpu", "--size", "64x600",
                    "--iters", "20", "--out", str(tmp_path / "m.png"))
    assert code == 0, out.err
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    assert out.err == ""                            # not a terminal: no bar at all


# ---------------------------------------------------------------- the terminal after exit

def test_no_stray_escape_code_at_exit_on_a_terminal(tmp_path):
    """numba's colorama used to print ESC[0m after the last line whenever a process had
    formatted an error message (numba does so while compiling)."""
    code = f"""
import sys, main
code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "8x8", "--iters", "5",
                  "--out", {str(tmp_path / 'x.png')!r}])
from numba.core.errors import termcolor
termcolor().errmsg("what a compile error would do")
sys.exit(code)
"""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    env.pop("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", None)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave)
    os.close(slave)
    output = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:          # EIO: the child closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(master)
    assert proc.wait(120) == 0, output
    assert b"wrote " in output
    assert b"\x1b[" not in output, output


def test_no_display_is_one_line_not_a_qt_abort():
    """On Linux without DISPLAY/WAYLAND_DISPLAY Qt's xcb platform aborts the process with a core
    dump: the command line says what to do instead, before Qt loads."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    r = subprocess.run([sys.executable, os.path.join(root, "main.py"), "--backend", "cpu"], env=env,
                       capture_output=True, text=True, timeout=60)
    if sys.platform != "linux":
        return
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert "no display" in r.stderr and "QT_QPA_PLATFORM=offscreen" in r.stderr


def test_display_check_respects_an_explicit_platform():
    from cli.environment import display_problem
    assert display_problem({}, "linux") is not None
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    # a display that answers, with the plugin's libraries all found (tests/cli/test_start_checks.py
    # checks the other cases): since issue 24 DISPLAY must answer, not only be set
    import socket
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        display = f"127.0.0.1:{server.getsockname()[1] - 6000}"
        assert display_problem({"DISPLAY": display}, "linux", ldd=lambda path: "") is None
    assert display_problem({}, "darwin") is None
