"""kernels/ and cli/ must never load Qt, and neither may the headless commands (--render, --bench)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_py(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_kernels_import_no_qt():
    code = (
        "import pkgutil, importlib, sys, kernels\n"
        "mods = [m.name for m in pkgutil.iter_modules(kernels.__path__)]\n"
        "for m in mods: importlib.import_module('kernels.' + m)\n"
        "from kernels import bench; bench.all_workloads()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PyQt6', 'pyqtgraph', 'PySide6'))\n"
        "print(len(mods), bad)\n"
        "sys.exit(1 if bad else 0)\n")
    r = run_py(code)
    assert r.returncode == 0, r.stdout + r.stderr
    assert int(r.stdout.split()[0]) >= 6  # the modules were really imported


def test_headless_bench_loads_no_qt(tmp_path):
    out = tmp_path / "b.json"
    code = (
        "import sys, main\n"
        "import kernels.transfer as t; t.DEFAULT_BYTES = 1 << 20\n"
        f"rc = main.main(['--bench', '--backend', 'cpu', '--only', 'transfer', '--repeats', '2', '--json', {str(out)!r}])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PyQt6', 'pyqtgraph')]\n"
        "sys.exit(rc or (3 if bad else 0))\n")
    r = run_py(code)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.exists()


def test_cli_and_headless_render_load_no_qt(tmp_path):
    out = tmp_path / "m.png"
    code = (
        "import pkgutil, importlib, sys, cli, main\n"
        "mods = [m.name for m in pkgutil.iter_modules(cli.__path__)]\n"
        "for m in mods: importlib.import_module('cli.' + m)\n"
        f"rc = main.main(['--render', 'mandelbrot', '--backend', 'cpu', '--size', '8x6', '--iters', '20', '--out', {str(out)!r}])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PyQt6', 'pyqtgraph', 'PySide6', 'explorer'))\n"
        "print(len(mods), bad)\n"
        "sys.exit(rc or (3 if bad else 0))\n")
    r = run_py(code)
    assert r.returncode == 0, r.stdout + r.stderr
    assert int(r.stdout.splitlines()[-1].split()[0]) >= 5  # args, bench, failures, render, requests, views
    assert out.exists()
