"""Vector operations (copy, scale, add, triad, saxpy and the PyCUDA seed's expression) in several
implementations, so the throughput view can show what each way of writing the same loop costs.

Every op works on float32 vectors with one fixed scalar (SCALAR). An implementation is a set of
callables `fn(ins, out, s, stream=None)`: `ins` is the tuple of input arrays (device arrays for GPU
implementations, NumPy arrays for CPU ones), `out` the output array (for saxpy, the second input:
it is updated in place), `s` the scalar. GPU callables only enqueue work on `stream`; the caller
times and synchronises.

The sweep (kernels.vector_sweep) and the bench workloads drive these; this module holds no state
other than lazily built kernels.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from numba import njit, prange

# One scalar for every op: @vectorize ufuncs take no scalar argument without a hidden copy per
# call, so they fold this constant in, and every other implementation is checked against it.
SCALAR = np.float32(3.0)
_TEN = np.float32(10.0)
_TWO = np.float32(2.0)
_FIVE = np.float32(5.0)
THREADS_PER_BLOCK = 256


class ImplUnavailable(RuntimeError):
    """An implementation cannot run here (not installed, compiler failed); str(exc) says why."""


@dataclass(frozen=True)
class Op:
    name: str
    formula: str
    inputs: tuple          # names of the arrays read, in call order
    output: str            # the array written; equal to an input name when in place
    flops: int             # float operations per element

    @property
    def inplace(self) -> bool:
        return self.output in self.inputs

    @property
    def bytes_per_element(self) -> int:
        """Bytes read plus written per element (float32), as BabelStream counts them."""
        return 4 * (len(self.inputs) + 1)

    @property
    def h2d_bytes_per_element(self) -> int:
        return 4 * len(self.inputs)

    @property
    def d2h_bytes_per_element(self) -> int:
        return 4

    @property
    def bus_bytes_per_element(self) -> int:
        return self.h2d_bytes_per_element + self.d2h_bytes_per_element


OPS: dict[str, Op] = {op.name: op for op in (
    Op("copy", "c = a", ("a",), "c", 0),
    Op("scale", "c = s·a", ("a",), "c", 1),
    Op("add", "c = a + b", ("a", "b"), "c", 1),
    Op("triad", "out = b + s·c", ("b", "c"), "out", 2),
    Op("saxpy", "y = s·x + y", ("x", "y"), "y", 2),
    Op("seed-expr", "out = (a·10+2)·((b+2)·10−5)·5", ("a", "b"), "out", 7),
)}
OP_NAMES = tuple(OPS)


def get_op(name: str) -> Op:
    try:
        return OPS[name]
    except KeyError:
        raise ValueError(f"unknown op {name!r}; choose one of: {', '.join(OP_NAMES)}") from None


# ---- the obvious NumPy reference (allocates; tests only) ---------------------------------------
def reference(op_name: str, ins, s=SCALAR) -> np.ndarray:
    s = np.float32(s)
    if op_name == "copy":
        return ins[0].copy()
    if op_name == "scale":
        return s * ins[0]
    if op_name == "add":
        return ins[0] + ins[1]
    if op_name == "triad":
        return ins[0] + s * ins[1]
    if op_name == "saxpy":
        return s * ins[0] + ins[1]
    if op_name == "seed-expr":
        a, b = ins
        return (a * _TEN + _TWO) * ((b + _TWO) * _TEN - _FIVE) * _FIVE
    raise ValueError(f"unknown op {op_name!r}")


# ---- CPU twins: numba parallel loops -----------------------------------------------------------
@njit(parallel=True, cache=True)
def _cpu_copy(a, out):
    for i in prange(out.size):
        out[i] = a[i]


@njit(parallel=True, cache=True)
def _cpu_scale(a, out, s):
    for i in prange(out.size):
        out[i] = s * a[i]


@njit(parallel=True, cache=True)
def _cpu_add(a, b, out):
    for i in prange(out.size):
        out[i] = a[i] + b[i]


@njit(parallel=True, cache=True)
def _cpu_triad(b, c, out, s):
    for i in prange(out.size):
        out[i] = b[i] + s * c[i]


@njit(parallel=True, cache=True)
def _cpu_saxpy(x, y, s):
    for i in prange(y.size):
        y[i] = s * x[i] + y[i]


@njit(parallel=True, cache=True)
def _cpu_seed(a, b, out):
    for i in prange(out.size):
        out[i] = (a[i] * _TEN + _TWO) * ((b[i] + _TWO) * _TEN - _FIVE) * _FIVE


def _cpu_numba_ops() -> dict[str, Callable]:
    return {
        "copy": lambda ins, out, s, stream=None: _cpu_copy(ins[0], out),
        "scale": lambda ins, out, s, stream=None: _cpu_scale(ins[0], out, np.float32(s)),
        "add": lambda ins, out, s, stream=None: _cpu_add(ins[0], ins[1], out),
        "triad": lambda ins, out, s, stream=None: _cpu_triad(ins[0], ins[1], out, np.float32(s)),
        "saxpy": lambda ins, out, s, stream=None: _cpu_saxpy(ins[0], ins[1], np.float32(s)),
        "seed-expr": lambda ins, out, s, stream=None: _cpu_seed(ins[0], ins[1], out),
    }


# ---- NumPy: ufuncs writing into the caller's array, with one reused scratch array --------------
def _numpy_ops() -> dict[str, Callable]:
    scratch: dict[int, np.ndarray] = {}

    def tmp(n):
        if n not in scratch:
            scratch.clear()
            scratch[n] = np.empty(n, dtype=np.float32)
        return scratch[n]

    def triad(ins, out, s, stream=None):
        b, c = ins
        np.multiply(c, np.float32(s), out=out)
        np.add(out, b, out=out)

    def saxpy(ins, out, s, stream=None):
        x, y = ins
        t = tmp(y.size)
        np.multiply(x, np.float32(s), out=t)
        np.add(y, t, out=y)

    def seed(ins, out, s, stream=None):
        a, b = ins
        t = tmp(out.size)
        np.multiply(a, _TEN, out=out)
        np.add(out, _TWO, out=out)
        np.add(b, _TWO, out=t)
        np.multiply(t, _TEN, out=t)
        np.subtract(t, _FIVE, out=t)
        np.multiply(out, t, out=out)
        np.multiply(out, _FIVE, out=out)

    return {
        "copy": lambda ins, out, s, stream=None: np.copyto(out, ins[0]),
        "scale": lambda ins, out, s, stream=None: np.multiply(ins[0], np.float32(s), out=out),
        "add": lambda ins, out, s, stream=None: np.add(ins[0], ins[1], out=out),
        "triad": triad, "saxpy": saxpy, "seed-expr": seed,
    }


# ---- GPU: numba kernels live in kernels.vector_cuda (imported on first use, never at import) --
def _cuda_jit_ops(variant: str) -> dict[str, Callable]:
    def make(op_name):
        def run(ins, out, s, stream=None):
            from . import cuda_jit as vector_cuda
            vector_cuda.run_jit(variant, op_name, ins, out, s, stream)
        return run
    return {name: make(name) for name in OP_NAMES}


def _vectorize_ops() -> dict[str, Callable]:
    def make(op_name):
        def run(ins, out, s, stream=None):
            from . import cuda_jit as vector_cuda
            vector_cuda.run_ufunc(op_name, ins, out, s, stream)
        return run
    return {name: make(name) for name in OP_NAMES}


# ---- the registry ------------------------------------------------------------------------------
@dataclass
class Impl:
    name: str
    available: bool
    reason: str = ""                     # why not, when unavailable
    device: str = "gpu"                  # "gpu": device arrays and a stream; "cpu": NumPy arrays
    description: str = ""
    ops: dict = field(default_factory=dict)   # op name -> fn(ins, out, s, stream=None)
    jit: bool = True                     # compiles on first call (its time is the compile phase)

    @property
    def modes(self) -> tuple:
        return ("kernel", "pinned", "pageable") if self.device == "gpu" else ("kernel",)


IMPL_NAMES = ("vectorize", "cuda-jit", "cuda-jit-stride", "cuda-jit-ilp4", "nvrtc", "nvrtc-ilp4",
              "pycuda", "cpu-numba", "numpy")
GPU_IMPLS = ("vectorize", "cuda-jit", "cuda-jit-stride", "cuda-jit-ilp4", "nvrtc", "nvrtc-ilp4",
             "pycuda")
CPU_IMPLS = ("cpu-numba", "numpy")
# Four elements per thread: the same ops written for more bytes in flight. End to end they only
# wait on the bus like their plain siblings, so the bench times them on the device only.
ILP_IMPLS = ("cuda-jit-ilp4", "nvrtc-ilp4")
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


def _first_line(exc) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def _gpu_reason(backend) -> str:
    if not getattr(backend, "is_gpu", False):
        return "needs the CUDA backend (the CPU backend is selected)"
    return ""


_JIT_VARIANTS = {"cuda-jit": "per-thread", "cuda-jit-stride": "stride", "cuda-jit-ilp4": "ilp4"}


def implementations(backend) -> list[Impl]:
    """Every implementation, in display order, each saying whether it can run on `backend`.

    Cheap and free of CUDA calls (safe on the GUI thread): compilers are only tried when a kernel
    first runs; a failure there raises ImplUnavailable with the compiler's message."""
    simulated = bool(getattr(backend, "simulated", False))
    out = []
    for name in GPU_IMPLS:
        reason = _gpu_reason(backend)
        ops: dict = {}
        if not reason:
            if name == "vectorize":
                if simulated:
                    reason = "numba's CUDA simulator cannot build @vectorize(target='cuda') ufuncs"
                else:
                    ops = _vectorize_ops()
            elif name in _JIT_VARIANTS:
                ops = _cuda_jit_ops(_JIT_VARIANTS[name])
            elif name in ("nvrtc", "nvrtc-ilp4"):
                from . import nvrtc as vector_nvrtc
                reason = vector_nvrtc.unavailable_reason(backend)
                if not reason:
                    ops = vector_nvrtc.ops("ilp4" if name == "nvrtc-ilp4" else "plain")
            elif name == "pycuda":
                from . import pycuda_impl as vector_pycuda
                reason = vector_pycuda.unavailable_reason(backend)
                if not reason:
                    ops = vector_pycuda.ops()
        desc = DESCRIPTIONS[name]
        if name in ("nvrtc", "nvrtc-ilp4") and module_available("cuda.core"):
            from . import nvrtc as vector_nvrtc
            first, _, rest = desc.partition("\n")
            desc = f"{first} (cuda.core {vector_nvrtc.core_version()})" + ("\n" + rest if rest else "")
        out.append(Impl(name, not reason, reason, "gpu", desc, ops))
    out.append(Impl("cpu-numba", True, "", "cpu", DESCRIPTIONS["cpu-numba"], _cpu_numba_ops()))
    out.append(Impl("numpy", True, "", "cpu", DESCRIPTIONS["numpy"], _numpy_ops(), jit=False))
    return out


def module_available(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
