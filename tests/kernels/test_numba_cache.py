"""kernels.numba_cache: a numba.cuda kernel with cache=True is defined where numba has no folder
for its cache (issue 40). numba-cuda has a dispatcher and cache of its own, so the CPU's fallback
alone leaves every GPU kernel module failing to import on a read-only install. Defining a kernel
needs numba.cuda to import, not a GPU."""
import os
import subprocess
import sys
import textwrap

import pytest

from kernels.backend import simulator_enabled

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = """
import sys
import numba.core.caching
import numba.cuda.core.caching
def refuse(self):
    raise PermissionError(13, "Permission denied", self.get_cache_path())
numba.core.caching._CacheLocator.ensure_cache_path = refuse
numba.cuda.core.caching._CacheLocator.ensure_cache_path = refuse
if sys.argv[1] == "in memory":
    from kernels.numba_cache import cache_writable, compile_in_memory
    assert not cache_writable()
    compile_in_memory()
from numba import cuda
def fill(out):
    out[cuda.grid(1)] = 1.0
kernel = cuda.jit(cache=True)(fill)
print(type(kernel._cache).__name__)
"""


def _define_a_cached_gpu_kernel(how):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("GPU_EXPLORER_NUMBA_CACHE", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), how], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_cached_gpu_kernel_with_no_folder_is_defined_in_memory(numba_cuda):
    if simulator_enabled():
        pytest.skip("the simulator's jit ignores cache=True: there is nothing to fall back from")
    plain = _define_a_cached_gpu_kernel("as numba has it")
    assert plain.returncode != 0 and "no locator available" in plain.stderr   # the failure
    r = _define_a_cached_gpu_kernel("in memory")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "NullCache"
