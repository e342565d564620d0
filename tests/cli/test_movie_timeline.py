"""The movie command's fixed costs: its phase timeline line (where a run on GPUs spends what is
not rendering), the deepest frame's reference computed while the pool opens instead of after it,
and the quick exit of a finished GPU movie (cli/quick_exit.py)."""
from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import main

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

CENTRE = "-0.743643887037158704752191506114774,0.131825904205311970493132056385139"
ROOT = Path(__file__).resolve().parents[2]


def _movie(tmp_path):
    pattern = tmp_path / "f%02d.png"
    return main.main(["--movie", str(pattern), "--backend", "cpu", "--size", "16x10", "--fps",
                      "6", "--seconds", "2", "--center", CENTRE, "--width", "1e-40",
                      "--iters", "4000", "--restart"])


def test_the_reference_is_computed_while_the_pool_opens(tmp_path, monkeypatch, capsys):
    import kernels.spread
    from kernels.mandelbrot.reference import reference_store
    started = threading.Event()
    plain_compute, plain_open = reference_store.compute_pinned, kernels.spread.open_pool

    def compute(*a, **k):
        started.set()
        return plain_compute(*a, **k)

    def open_pool(*a, **k):
        # the pool opens only once the reference is under way: run one after the other, this
        # waits for ever (10 s) and the movie fails
        assert started.wait(10.0), "the reference did not start before the pool opened"
        return plain_open(*a, **k)
    monkeypatch.setattr(reference_store, "compute_pinned", compute)
    monkeypatch.setattr(kernels.spread, "open_pool", open_pool)
    assert _movie(tmp_path) == 0
    assert reference_store.shared_store().pinned() == []      # unpinned when the movie ended
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("timeline"))
    names = ["start-up", "reference at", "warm at", "first frame at", "last frame at",
             "join done at", "closed at"]
    times = []
    for name in names:
        m = re.search(re.escape(name) + r" ([0-9.]+) s", line)
        assert m, f"{name!r} missing from {line!r}"
        times.append(float(m.group(1)))
    # in the order the phases happen, all after the start-up
    assert times[0] <= min(times[1:])
    assert times[3:] == sorted(times[3:]), line
    assert re.search(r"\(imports [0-9.]+, pool [0-9.]+\)", line)


@pytest.mark.parametrize("env, shutdown", [("", False), ("0", True)])
def test_quick_exit_skips_the_interpreters_shutdown_unless_turned_off(env, shutdown):
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('shutdown ran'))\n"
            "from cli.quick_exit import as_program, finish, request\n"
            "print('work done')\n"
            "request()\n"
            "assert finish(4) == 4          # not the program: returns\n"
            "as_program()\n"
            "sys.exit(finish(3))\n")
    got = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "GPU_EXPLORER_QUICK_EXIT": env},
                         timeout=60)
    assert got.returncode == 3
    assert "work done" in got.stdout            # flushed before the process ended
    assert ("shutdown ran" in got.stdout) == shutdown


def test_quick_exit_only_for_this_processs_own_gpu_pool():
    from types import SimpleNamespace

    from cli.movie import quick_exit_wanted
    from kernels.spread.local import LocalPool
    gpu = SimpleNamespace(is_gpu=True, simulated=False)
    own = object.__new__(LocalPool)             # its methods only: no pool is opened
    assert quick_exit_wanted(gpu, own)
    assert not quick_exit_wanted(gpu, object())         # a Dask cluster's pool
    assert not quick_exit_wanted(SimpleNamespace(is_gpu=True, simulated=True), own)
    assert not quick_exit_wanted(SimpleNamespace(is_gpu=False, simulated=False), own)
