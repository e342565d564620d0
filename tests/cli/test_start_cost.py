"""What a headless CPU render loads and how it ends (issue 38: the whole command as fast as its
frame). A 256² CPU render spent 0.17 s importing numba.cuda, and more on the deep-zoom kernels
that only --newton uses, before its first pixel; and ~0.2 s in the interpreter's shutdown after
its file was written."""
import os
import subprocess
import sys

import main
from cli import quick_exit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# loaded by a plain CPU render, none of them used by it
UNUSED = ("numba.cuda", "services.minibrot", "kernels.mandelbrot.tables.bla",
          "kernels.mandelbrot.reference.reference", "tqdm", "PyQt6")


def test_a_cpu_render_imports_only_what_it_uses(tmp_path):
    """The whole command up to its frame (the frame's kernels stubbed: no compile here), in a
    fresh process: its renderer is made, its number type and compile notice decided."""
    code = f"""
import sys
import main
import cli.render
made = []
cli.render.write_frame = lambda renderer, *a, **k: made.append(renderer)
rc = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "64x48",
                "--out", {str(tmp_path / "x.png")!r}])
assert rc == 0 and made, rc
print(sorted(m for m in {UNUSED!r} if m in sys.modules))
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "[]"


def test_a_deep_cpu_render_never_imports_numba_cuda(tmp_path):
    """A deep frame on the CPU (KF's 1e14, 64x48, its kernels from the cache or compiled), whole,
    in a fresh process: the deep loops make their GPU kernels only at a GPU's first use; before,
    every deep render imported numba.cuda (0.17 s on the 2-core machine, ~20 % of the command)."""
    code = f"""
import sys
import main
rc = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "64x48",
                "--location", "resources/kf-1e14.kfr", "--out", {str(tmp_path / "x.png")!r}])
assert rc == 0, rc
print("numba.cuda" in sys.modules, "kernels.mandelbrot.deep.renderer" in sys.modules)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "False True"
    assert (tmp_path / "x.png").exists()


def test_a_finished_render_skips_the_shutdown_a_failed_one_keeps(tmp_path, monkeypatch, capsys):
    """main.py run as a program then ends with os._exit (cli/quick_exit.py): the file is
    written and closed by then."""
    monkeypatch.setitem(quick_exit._state, "wanted", False)
    assert main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "8x6", "--iters",
                      "5", "--out", str(tmp_path / "x.txt")]) == 2
    assert not quick_exit._state["wanted"]
    assert main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "8x6", "--iters",
                      "5", "--out", str(tmp_path / "x.png")]) == 0, capsys.readouterr().err
    assert quick_exit._state["wanted"] and (tmp_path / "x.png").stat().st_size > 0
