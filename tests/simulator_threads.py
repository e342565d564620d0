"""numba's CUDA simulator, paced for the test run: a shorter GIL switch interval, and a
cuda.shared.array that a shorter interval cannot race.

The simulator runs one Python thread per CUDA thread, and a polling loop that waits for every
thread of a block to finish or to reach cuda.syncthreads(). A thread woken from a barrier waits
for the GIL until the poller's switch interval runs out (5 ms by default), so on a 2-core machine
most of a launch is spent waiting. At 1 ms the GPU tests of tests/kernels/test_mandelbrot_gpu.py
and tests/kernels/test_rng_gpu.py took 117 s instead of 196 s (one run each, same load); those of
test_mandelbrot_gpu.py alone took 43-66 s at 0.2 ms, 47-102 s at 1 ms and 47-59 s at 0.05 ms
(four, four and two runs on a shared 2-core machine).

A shorter interval makes a race in the simulator likely: its cuda.shared.array looks up the
launch's array for the calling line and, when there is none, makes one and stores it, without a
lock. Two threads of one block can both find none and go on with different arrays; a block sum
then loses a thread's part (kernels.vector's dot, at a 10 µs interval: 1 of 15 sums wrong; with
the lock below, 0 of 60). The replacement takes a lock around that look-up, and finds its caller
from the frame rather than from a whole extracted stack (the same file and line, read faster).
Nothing else changes: the same kernels run, with the same launch shapes and the same arithmetic.
"""
from __future__ import annotations

import sys
import threading

SWITCH_INTERVAL_S = 2e-4


def pace() -> bool:
    """Install the locked shared.array and the shorter switch interval; False (and nothing
    changed) when this numba-cuda's simulator is not laid out as expected."""
    try:
        from numba.cuda.simulator import kernelapi
        shared_cls = kernelapi.FakeCUDAShared
        as_dtype, nb_type = kernelapi.numpy_support.as_dtype, kernelapi.types.Type
        probe = shared_cls(0)
        if not (hasattr(probe, "_allocations") and hasattr(probe, "_dynshared")):
            return False
    except (ImportError, AttributeError, TypeError):
        return False
    import numpy as np
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if alignment is not None:
            raise RuntimeError("Array alignment is not supported in cudasim")
        if isinstance(dtype, nb_type):
            dtype = as_dtype(dtype)
        if shape == 0:       # dynamic shared memory: one buffer for the whole launch
            count = self._dynshared_size // dtype.itemsize
            return np.frombuffer(self._dynshared.data, dtype=dtype, count=count)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            got = self._allocations.get(key)
            if got is None:
                got = self._allocations[key] = np.empty(shape, dtype)
        return got

    shared_cls.array = array
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    return True
