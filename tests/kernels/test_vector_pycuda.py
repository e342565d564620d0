"""The PyCUDA implementation of the vector ops (kernels/vector/pycuda_impl.py): it leaves no CUDA
context pushed, even when a kernel fails to compile, and a process that used it exits cleanly."""
from types import SimpleNamespace

import pytest

from kernels.vector import ops as vector_ops
from kernels.vector import pycuda_impl as vector_pycuda
from kernels.vector.ops import ImplUnavailable


class _FakePycudaDriver:
    """Stands in for pycuda.driver: records the context stack of the calling thread."""

    def __init__(self):
        self.stack, self.events = [], []
        driver = self

        class Context:
            @staticmethod
            def pop():
                driver.events.append("pop")
                driver.stack.pop()

        self.Context = Context

    def context(self):
        driver = self

        class Ctx:
            def push(self):
                driver.events.append("push")
                driver.stack.append(self)
        return Ctx()


def test_pycuda_leaves_no_context_pushed(monkeypatch):
    import sys
    drv = _FakePycudaDriver()
    launched = []

    class FakeSourceModule:
        def __init__(self, source, no_extern_c=False):
            if "vec_add" in source:
                raise RuntimeError("nvcc compilation failed: boom")
            self.source = source

        def get_function(self, name):
            def f(*args, block, grid):
                launched.append((name, drv.stack[:], grid))
            return f

    monkeypatch.setitem(sys.modules, "pycuda", SimpleNamespace(driver=drv))
    monkeypatch.setitem(sys.modules, "pycuda.driver", drv)
    monkeypatch.setitem(sys.modules, "pycuda.compiler", SimpleNamespace(SourceModule=FakeSourceModule))
    monkeypatch.setattr(vector_pycuda, "_primary", drv.context())
    monkeypatch.setattr(vector_pycuda, "_functions", {})

    class FakeDev:
        def __init__(self, ptr, n):
            self.__cuda_array_interface__ = {"data": (ptr, False)}
            self.size = n

    a, out = FakeDev(0x1000, 300), FakeDev(0x2000, 300)
    vector_pycuda.run("copy", (a,), out, 3.0)
    assert launched[0][0] == "vec_copy" and len(launched[0][1]) == 1 and launched[0][2] == (2, 1)
    assert drv.stack == [] and drv.events == ["push", "pop"]
    with pytest.raises(ImplUnavailable, match="could not compile 'add'"):
        vector_pycuda.run("add", (a, a), out, 3.0)
    assert drv.stack == [] and drv.events[-2:] == ["push", "pop"]   # popped on failure too


_EXIT_SCRIPT = r"""
import threading
import numpy as np
from numba import cuda
from kernels.backend import resolve
from kernels.vector.ops import SCALAR
from kernels.vector.registry import implementations

impl = {i.name: i for i in implementations(resolve("cuda"))}["pycuda"]
assert impl.available, impl.reason

def use_pycuda():
    x = np.arange(1000, dtype=np.float32)
    a, out = cuda.to_device(x), cuda.device_array(1000, np.float32)
    impl.ops["copy"]((a,), out, SCALAR)
    impl.ops["add"]((a, a), out, SCALAR)
    cuda.synchronize()
    assert np.array_equal(out.copy_to_host(), x + x)

# first on another thread, as the render worker does, then on the main thread
t = threading.Thread(target=use_pycuda)
t.start()
t.join()
use_pycuda()
print("pycuda ran")
"""


@pytest.mark.gpu
def test_process_exits_cleanly_after_using_pycuda(gpu_backend, simulated):
    import os
    import subprocess
    import sys
    if simulated:
        pytest.skip("PyCUDA needs a real GPU (this is numba's CUDA simulator)")
    if not vector_ops.module_available("pycuda"):
        pytest.skip("PyCUDA is not installed here")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT], cwd=root, env=env,
                         capture_output=True, text=True, timeout=300)
    assert "PyCUDA ERROR" not in out.stderr, out.stderr
    assert out.returncode == 0, out.stderr
    assert "pycuda ran" in out.stdout
