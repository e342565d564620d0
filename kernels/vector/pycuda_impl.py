"""The vector ops compiled by PyCUDA's SourceModule (the seed's second way), optional.

Uses the same CUDA C sources as the NVRTC implementation, in the device's primary context (the one
numba uses), so PyCUDA kernels read numba's device arrays directly. PyCUDA cannot adopt a foreign
stream, so its kernels run on the legacy default stream; numba's streams are blocking streams,
which order themselves around it, so the events the caller records on its own stream still
bracket the kernel.

Why not `pycuda.autoprimaryctx`: it pushes the primary context onto PyCUDA's per-thread context
stack of whichever thread imports it (here the render worker) and pops it only in an atexit hook
on the main thread, which cannot pop another thread's stack; at exit PyCUDA then finds a non-empty
stack and aborts the process ("PyCUDA ERROR: The context stack was not empty upon module
cleanup"). Instead PyCUDA retains the primary context once and every PyCUDA call (compile, launch)
pushes it and pops it again in a `finally`, on the calling thread, so no PyCUDA stack is ever left
non-empty, whichever thread calls and however the process ends. The push goes on top of numba's
own current context, which the pop restores.
"""
from __future__ import annotations

import atexit
import warnings

from ..backend import first_line
from ..extras import install_hint
from .nvrtc import KERNEL_NAMES, SOURCES, kernel_args
from .ops import THREADS_PER_BLOCK, ImplUnavailable, module_available


def unavailable_reason(backend) -> str:
    if not getattr(backend, "is_gpu", False):
        return "needs the CUDA backend (the CPU backend is selected)"
    if getattr(backend, "simulated", False):
        return "numba's CUDA simulator cannot run PyCUDA kernels (PyCUDA needs a real GPU)"
    if not module_available("pycuda"):
        return f"PyCUDA is not installed ({install_hint('pycuda')})"
    return ""


_functions: dict = {}
_primary = None     # PyCUDA's handle on the primary context (retained once, never current between calls)


def _context():
    """PyCUDA's Context for numba's device's primary context, retained on first use."""
    global _primary
    if _primary is None:
        try:
            import pycuda.driver as drv
            from numba import cuda
            drv.init()
            _primary = drv.Device(cuda.get_current_device().id).retain_primary_context()
        except Exception as exc:
            raise ImplUnavailable(f"PyCUDA failed to start: {first_line(exc)}") from exc
        # drop the modules, then the context, while the interpreter is whole, rather than in
        # whatever order its final teardown picks
        atexit.register(_release)
    return _primary


def _release():
    global _primary
    # PyCUDA warns that modules loaded while the context was pushed on the worker thread are
    # "out-of-thread": the driver frees them with the context anyway, so the warning is noise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _functions.clear()
    _primary = None


class _Current:
    """Makes the primary context PyCUDA's current one for a block, and undoes it on the way out
    (exceptions included), leaving this thread's PyCUDA context stack as it found it."""

    def __enter__(self):
        _context().push()
        return self

    def __exit__(self, *exc):
        import pycuda.driver as drv
        drv.Context.pop()
        return False


def _function(op_name: str):
    """The compiled kernel; the caller has the context current."""
    f = _functions.get(op_name)
    if f is not None:
        return f
    try:
        from pycuda.compiler import SourceModule
    except Exception as exc:
        raise ImplUnavailable(f"PyCUDA failed to start: {first_line(exc)}") from exc
    try:
        mod = SourceModule(SOURCES[op_name], no_extern_c=True)
        f = mod.get_function(KERNEL_NAMES[op_name])
    except Exception as exc:
        raise ImplUnavailable(f"PyCUDA could not compile {op_name!r}: {first_line(exc)}") from exc
    _functions[op_name] = (f, mod)  # the module must outlive its function
    return _functions[op_name]


def run(op_name: str, ins, out, s, stream=None):
    n = int(out.size)
    if n == 0:
        return
    blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    args = kernel_args(op_name, ins, out, s, n)
    with _Current():
        f, _ = _function(op_name)
        f(*args, block=(THREADS_PER_BLOCK, 1, 1), grid=(blocks, 1))


def ops() -> dict:
    def make(op_name):
        def call(ins, out, s, stream=None):
            run(op_name, ins, out, s, stream)
        return call
    return {name: make(name) for name in SOURCES}

