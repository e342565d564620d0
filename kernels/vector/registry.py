"""The registry of vector-op implementations: `implementations(backend)` lists every way of running
the ops, in display order, each saying whether it can run on that backend and why not.

It imports the implementation modules; none of them imports it. The numba CUDA kernels
(cuda_jit) are imported when one first runs, not here: importing them imports numba.cuda, an
optional dependency, and the GUI lists the implementations at start-up.
"""
from __future__ import annotations

from collections.abc import Callable

from . import cpu, nvrtc, pycuda_impl
from .ops import GPU_IMPLS, OPS, Impl, module_available

_ILP_NOTE = ("\nILP (instruction-level parallelism) here: each thread handles elements\n"
             "i, i+q, i+2q, i+3q (q = N/4) and issues all four loads before any store,\n"
             "so four independent memory reads per thread are in flight instead of one")

DESCRIPTIONS = {
    "vectorize": "numba @vectorize(target='cuda') ufunc on device arrays (the seed's way)",
    "cuda-jit": "numba @cuda.jit kernel, one element per thread",
    "cuda-jit-stride": "numba @cuda.jit kernel with a grid-stride loop",
    "cuda-jit-ilp4": "numba @cuda.jit kernel, four elements per thread" + _ILP_NOTE,
    "nvrtc": "CUDA C++ compiled at run time with NVRTC, launched through cuda.core",
    "nvrtc-ilp4": "CUDA C++ (NVRTC, cuda.core), four elements per thread" + _ILP_NOTE,
    "pycuda": "CUDA C++ compiled by PyCUDA's SourceModule",
    "cpu-numba": "numba @njit(parallel=True) loop on the CPU",
    "numpy": "NumPy ufuncs on the CPU",
}

# implementation name -> the kernel family in cuda_jit
_JIT_VARIANTS = {"cuda-jit": "per-thread", "cuda-jit-stride": "stride", "cuda-jit-ilp4": "ilp4"}


def _op_names(impl_name: str) -> list[str]:
    return [name for name, op in OPS.items() if op.implemented_by(impl_name)]


def _cuda_jit_ops(impl_name: str) -> dict[str, Callable]:
    variant = _JIT_VARIANTS[impl_name]

    def make(op_name):
        def run(ins, out, s, stream=None):
            from . import cuda_jit
            cuda_jit.run_jit(variant, op_name, ins, out, s, stream)
        return run
    return {name: make(name) for name in _op_names(impl_name)}


def _vectorize_ops() -> dict[str, Callable]:
    def make(op_name):
        def run(ins, out, s, stream=None):
            from . import cuda_jit
            cuda_jit.run_ufunc(op_name, ins, out, s, stream)
        return run
    return {name: make(name) for name in _op_names("vectorize")}


def _gpu_reason(backend) -> str:
    if not getattr(backend, "is_gpu", False):
        return "needs the CUDA backend (the CPU backend is selected)"
    return ""


def _gpu_impl(name: str, backend) -> Impl:
    simulated = bool(getattr(backend, "simulated", False))
    reason = _gpu_reason(backend)
    ops: dict = {}
    if not reason:
        if name == "vectorize":
            if simulated:
                reason = "numba's CUDA simulator cannot build @vectorize(target='cuda') ufuncs"
            else:
                ops = _vectorize_ops()
        elif name in _JIT_VARIANTS:
            ops = _cuda_jit_ops(name)
        elif name in ("nvrtc", "nvrtc-ilp4"):
            reason = nvrtc.unavailable_reason(backend)
            if not reason:
                ops = nvrtc.ops("ilp4" if name == "nvrtc-ilp4" else "plain")
        elif name == "pycuda":
            reason = pycuda_impl.unavailable_reason(backend)
            if not reason:
                ops = pycuda_impl.ops()
    desc = DESCRIPTIONS[name]
    if name in ("nvrtc", "nvrtc-ilp4") and module_available("cuda.core"):
        first, _, rest = desc.partition("\n")
        desc = f"{first} (cuda.core {nvrtc.core_version()})" + ("\n" + rest if rest else "")
    return Impl(name, not reason, reason, "gpu", desc, ops)


def implementations(backend) -> list[Impl]:
    """Every implementation, in display order, each saying whether it can run on `backend`.

    Cheap and free of CUDA calls (safe on the GUI thread): compilers are only tried when a kernel
    first runs; a failure there raises ImplUnavailable with the compiler's message."""
    out = [_gpu_impl(name, backend) for name in GPU_IMPLS]
    out.append(Impl("cpu-numba", True, "", "cpu", DESCRIPTIONS["cpu-numba"], cpu.numba_ops(),
                    in_helper=True))
    out.append(Impl("numpy", True, "", "cpu", DESCRIPTIONS["numpy"], cpu.numpy_ops(), jit=False,
                    in_helper=True))
    return out
