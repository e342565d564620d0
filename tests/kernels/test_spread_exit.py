"""A process that ran a pool on several GPUs exits cleanly (numba's kernel unloading at exit
crashed such processes on a two-GPU machine: kernels/spread/local.py `_quiet_exit`)."""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_process_that_used_every_gpu_exits_cleanly(gpu_backend, simulated):
    if simulated:
        pytest.skip("the simulator has no contexts to unload")
    from kernels.spread.devices import gpu_list
    if len(gpu_list()) < 2:
        pytest.skip("needs two GPUs")
    script = textwrap.dedent("""
        from kernels.backend import resolve
        from kernels.mandelbrot.renderer import MandelbrotRequest, Renderer
        from kernels.mandelbrot.tiles import BandJob
        from kernels.spread.pool import open_pool
        be = resolve("cuda")
        req = MandelbrotRequest(-0.75, 0.1, 0.05, (640, 360), 500)
        Renderer(be).render(req)                     # the main thread's context too
        with open_pool(be, gpus="all") as pool:
            rows = sum(arr.shape[0] for _, arr in pool.ordered(
                [BandJob(req, r0, 45) for r0 in range(0, 360, 45)]))
        print("rows", rows)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=240, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "rows 360" in done.stdout
