"""native_clock.timed's wrapper comes from numba's disk cache in the next process (issue 38): keyed
by a pickle of the kernel it closes over, which carries a uuid made afresh in every process, it
never did (a 0.2-0.4 s compile at every start, and one more index entry and .nbc file each time);
and the loaded wrapper of a parallel kernel runs: compiled where the kernel came from the disk, its
cached code started no thread pool when loaded (SIGSEGV)."""
import importlib
import os
import subprocess
import sys
import textwrap

import numpy as np
from numba.core import config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNEL = """
from numba import njit, prange

@njit(parallel=True, cache=True)
def fill(a):
    for i in prange(a.shape[0]):
        a[i] = i
"""

RUN = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from tiny_timed_kernel import fill
from kernels.native_clock import timed
run = timed(fill)
a = np.zeros(64)
run(a)
assert a[63] == 63.0
print(sum(run.stats.cache_hits.values()), sum(run.stats.cache_misses.values()))
"""


def test_the_timed_wrapper_loads_from_the_disk_in_a_new_process(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    # caches made from here on; the variable too, since numba re-reads its config from the
    # environment when that changed (another test's setenv), which dropped the folder in the suite
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    monkeypatch.setattr(config, "CACHE_DIR", str(cache))
    (tmp_path / "tiny_timed_kernel.py").write_text(textwrap.dedent(KERNEL))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tiny_timed_kernel", raising=False)
    import tiny_timed_kernel
    tiny_timed_kernel.fill(np.zeros(4))            # the kernel compiled and saved
    # the wrapper compiled against the kernel loaded from the disk, as at any start but the
    # first: numba then keeps no note to start its thread pool with the wrapper's cached code
    fill = importlib.reload(tiny_timed_kernel).fill
    from kernels.native_clock import timed
    run = timed(fill)
    a = np.zeros(64)
    run(a)
    assert a[63] == 63.0 and sum(run.stats.cache_misses.values()) == 1
    assert sum(fill.stats.cache_hits.values()) == 1
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, "-c", RUN, str(tmp_path)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stdout}{r.stderr}"
    assert r.stdout.split() == ["1", "0"]        # one cache hit, no compile
