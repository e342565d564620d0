"""Faults on the command line: Ctrl+C during --bench and --render (one line, status 130, what
finished is kept, an earlier file stays whole), and no writable folder for numba's cache."""
import json
import os

import pytest
from faultkit import child_env, run_python

# a child that runs the bench on two made-up workloads: the first finishes at once, the second
# says it has started and then waits (for the Ctrl+C the test sends)
BENCH_CHILD = """
import sys, threading
from kernels import bench
from kernels.timing import Timings

def quick(backend, repeats):
    t = Timings(backend=backend.name, label="quick")
    t.phases_ms.update(kernel=1.0, total=1.5)
    return [bench.result("fault-quick", backend, "one", "1x1", [t])]

def stuck(backend, repeats):
    print("second workload started", flush=True)
    threading.Event().wait()

FIRST = bench.Workload("fault-quick", "finishes at once", quick)
SECOND = bench.Workload("fault-stuck", "waits for Ctrl+C", stuck)
bench.all_workloads = lambda: ([FIRST] if sys.argv[2] == "both" else []) + [SECOND]
import main
sys.exit(main.main(["--bench", "--backend", "cpu", "--json", sys.argv[1]]))
"""


@pytest.mark.parametrize("finished", ["both", "none"])
def test_ctrl_c_during_the_bench_keeps_what_was_measured(child, tmp_path, finished):
    out = tmp_path / "bench.json"
    out.write_text('{"earlier": true}')
    c = child(BENCH_CHILD, args=(str(out), finished))
    c.wait_for_line("second workload started")
    c.interrupt()
    stdout, stderr = c.finish(60)
    assert c.proc.returncode == 130, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1
    report = json.loads(out.read_text())
    if finished == "both":
        assert "interrupted: 1 result(s) kept, written to" in stderr and "marked partial" in stderr
        assert report["partial"] is True
        assert [r["workload"] for r in report["results"]] == ["fault-quick"]
        assert "partial: interrupted" in stdout
    else:                              # nothing measured: the earlier report is not replaced
        assert "nothing was written" in stderr and report == {"earlier": True}
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []


RENDER_CHILD = """
import sys
import kernels.mandelbrot.renderer as m
plain = m.Renderer.strips
def strips(self, *a, **k):
    print("render started", flush=True)
    return plain(self, *a, **k)
m.Renderer.strips = strips
import main
sys.exit(main.main(["--render", "mandelbrot", "--backend", sys.argv[2], "--size", sys.argv[3],
                    "--center", "-1.7549,0", "--width", "0.04", "--iters", "10000000",
                    "--out", sys.argv[1]]))
"""


def _ctrl_c_during_a_render(child, tmp_path, backend, size, env=None):
    out = tmp_path / "deep.npy"
    out.write_bytes(b"the earlier picture")
    c = child(RENDER_CHILD, env=env, args=(str(out), backend, size))
    c.wait_for_line("render started")
    c.interrupt()
    stdout, stderr = c.finish(60)
    assert c.proc.returncode == 130, stderr
    assert stderr.strip() == f"main.py: interrupted: nothing was written to {out}"
    assert out.read_bytes() == b"the earlier picture"
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []


def test_ctrl_c_during_a_cpu_render_at_the_iteration_limit(child, tmp_path):
    _ctrl_c_during_a_render(child, tmp_path, "cpu", "640x480")


@pytest.mark.gpu
def test_ctrl_c_during_a_gpu_render_at_the_iteration_limit(child, tmp_path, gpu_backend, simulated):
    _ctrl_c_during_a_render(child, tmp_path, "cuda", "16x12" if simulated else "1920x1080",
                            env=child_env(NUMBA_ENABLE_CUDASIM="1" if simulated else "0"))


def test_ctrl_c_while_starting_up_is_one_line(child):
    """Ctrl+C before any command has run (e.g. while numba loads) ends with one line, not a
    traceback from wherever Python was."""
    c = child("""
        import sys, main, cli.args
        plain = cli.args.parse
        def parse(argv):
            print("parsing", flush=True)
            import threading; threading.Event().wait()
        cli.args.parse = parse
        sys.exit(main.main(["--bench"]))
    """)
    c.wait_for_line("parsing")
    c.interrupt()
    _, stderr = c.finish(30)
    assert c.proc.returncode == 130 and stderr.strip() == "main.py: interrupted"


# every folder numba knows for its cache refused (a read-only install, no writable home or temp)
REFUSE_EVERY_CACHE_FOLDER = """
import numba.core.caching as caching
def refuse(self):
    raise PermissionError(13, "Permission denied", self.get_cache_path())
caching._CacheLocator.ensure_cache_path = refuse
"""
# a cached kernel of its own (the app's take seconds to compile), in a folder numba may not use
TINY_KERNEL = """
from numba import njit
@njit(cache=True)
def twice(x):
    return 2 * x
"""


def test_no_writable_numba_cache_anywhere_compiles_the_kernels_in_memory(tmp_path):
    """numba refuses to define a cached kernel it cannot cache: the import used to fail with a
    traceback. With every cache folder refused, the kernels must import and a cached kernel
    compile and run, here and in a process started from here (a Dask worker), with one note."""
    (tmp_path / "tiny_kernel.py").write_text(TINY_KERNEL)
    child = REFUSE_EVERY_CACHE_FOLDER + f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
import kernels                   # started by a process that found no folder: set up in memory
import tiny_kernel
print("child", tiny_kernel.twice(21), type(tiny_kernel.twice._cache).__name__)
"""
    parent = REFUSE_EVERY_CACHE_FOLDER + f"""
import subprocess, sys
sys.path.insert(0, {str(tmp_path)!r})
from cli.environment import ensure_numba_cache
print(ensure_numba_cache())
import kernels.mandelbrot.loops.escape, kernels.distance.haversine, kernels.native_clock
import tiny_kernel
print("parent", tiny_kernel.twice(21), type(tiny_kernel.twice._cache).__name__)
print("timed", kernels.native_clock.timed(tiny_kernel.twice)(21) >= 0, flush=True)  # a closure
sys.exit(subprocess.run([sys.executable, "-c", {child!r}]).returncode)
"""
    r = run_python(parent)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "the kernels are compiled in memory only, so every start compiles them again" in lines[0]
    assert lines[1:] == ["parent 42 NullCache", "timed True", "child 42 NullCache"]
    assert "Traceback" not in r.stderr


def test_a_cache_folder_numba_can_use_is_kept(tmp_path):
    """Where numba has a folder (NUMBA_CACHE_DIR here), nothing changes: no note, the kernel's
    cache on disk."""
    (tmp_path / "tiny_kernel.py").write_text(TINY_KERNEL)
    r = run_python(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from cli.environment import ensure_numba_cache
        print(ensure_numba_cache())
        import tiny_kernel
        print(tiny_kernel.twice(21), type(tiny_kernel.twice._cache).__name__)
    """, env=child_env(NUMBA_CACHE_DIR=tmp_path / "cache"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["None", "42 FunctionCache"]
    assert any((tmp_path / "cache").rglob("*.nbi"))


# ---- a cluster worker whose job fails (issue 35: a malicious or broken Dask worker) -------------
class KilledWorker(Exception):
    """As distributed.scheduler.KilledWorker: no RuntimeError, a line of Dask's words."""


@pytest.mark.parametrize("error", [RuntimeError("evil worker refuses\n  and a second line"),
                                   KilledWorker("Attempted to run task '_Task' on 4 different "
                                                "workers, but all those workers died")])
def test_a_band_that_fails_on_a_cluster_worker_is_one_line_not_a_traceback(tmp_path, capsys,
                                                                           monkeypatch, error):
    import numpy as np

    import kernels.spread
    import main
    from kernels.backend import resolve
    from kernels.spread.cluster import DaskPool

    class FailingCluster(DaskPool):
        """A cluster whose worker renders band 0 and fails on band 1."""
        def __init__(self, *a, **k):
            self.backend, self.devices, self.workers = resolve("cpu"), None, 1
            self.address, self._cluster, self.shares_files = "tcp://10.0.0.7:8786", None, False

        def ordered(self, jobs, cancel=None, window=None):
            yield 0, np.zeros((jobs[0].rows, 64), np.float64)
            raise error

        def close(self):
            pass
    monkeypatch.setattr(kernels.spread, "open_pool", lambda *a, **k: FailingCluster())
    out = tmp_path / "p.npy"
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "64x48", "--iters",
                      "50", "--scheduler", "tcp://10.0.0.7:8786", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    assert type(error).__name__ in err and str(error).splitlines()[0] in err
    assert "tcp://10.0.0.7:8786" in err and "1 finished band" in err and "run the same" in err
