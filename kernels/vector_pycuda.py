"""The vector ops compiled by PyCUDA's SourceModule (the seed's second way), optional.

Uses the same CUDA C sources as the NVRTC implementation. `pycuda.autoprimaryctx` attaches
PyCUDA to the device's primary context, the one numba uses, so PyCUDA kernels read numba's
device arrays directly. PyCUDA cannot adopt a foreign stream, so its kernels run on the legacy
default stream; numba's streams are blocking streams, which order themselves around it, so the
events the caller records on its own stream still bracket the kernel.
"""
from __future__ import annotations

from .vector_nvrtc import KERNEL_NAMES, SOURCES, kernel_args
from .vector_ops import OP_NAMES, THREADS_PER_BLOCK, ImplUnavailable, _first_line, module_available


def unavailable_reason(backend) -> str:
    if not getattr(backend, "is_gpu", False):
        return "needs the CUDA backend (the CPU backend is selected)"
    if getattr(backend, "simulated", False):
        return "numba's CUDA simulator cannot run PyCUDA kernels (PyCUDA needs a real GPU)"
    if not module_available("pycuda"):
        return "PyCUDA is not installed (pip install pycuda)"
    return ""


_functions: dict = {}


def _function(op_name: str):
    f = _functions.get(op_name)
    if f is not None:
        return f
    try:
        import pycuda.autoprimaryctx  # noqa: F401  (shares numba's primary context)
        from pycuda.compiler import SourceModule
    except Exception as exc:
        raise ImplUnavailable(f"PyCUDA failed to start: {_first_line(exc)}") from exc
    try:
        mod = SourceModule(SOURCES[op_name], no_extern_c=True)
        f = mod.get_function(KERNEL_NAMES[op_name])
    except Exception as exc:
        raise ImplUnavailable(f"PyCUDA could not compile {op_name!r}: {_first_line(exc)}") from exc
    _functions[op_name] = (f, mod)  # the module must outlive its function
    return _functions[op_name]


def run(op_name: str, ins, out, s, stream=None):
    n = int(out.size)
    if n == 0:
        return
    f, _ = _function(op_name)
    blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    f(*kernel_args(op_name, ins, out, s, n), block=(THREADS_PER_BLOCK, 1, 1), grid=(blocks, 1))


def ops() -> dict:
    def make(op_name):
        def call(ins, out, s, stream=None):
            run(op_name, ins, out, s, stream)
        return call
    return {name: make(name) for name in OP_NAMES}

