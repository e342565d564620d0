"""What the vector ops are: copy, scale, add, triad, saxpy, the PyCUDA seed's expression and
BabelStream's dot (the one reduction), their byte and flop counts, which implementations have
each, the constants every implementation shares, the record an implementation is described by
(Impl) and the error it raises when it cannot run (ImplUnavailable), and the obvious NumPy
reference the tests compare every implementation with.

Every op works on float32 vectors with one fixed scalar (SCALAR). An implementation is a set of
callables `fn(ins, out, s, stream=None)`: `ins` is the tuple of input arrays (device arrays for GPU
implementations, NumPy arrays for CPU ones), `out` the output array (for saxpy, the second input:
it is updated in place; for dot, a one-element float64 array that receives the sum), `s` the
scalar. GPU callables only enqueue work on `stream`; the caller
times and synchronises.

This module imports no other module of the package: the implementations (cpu, cuda_jit, nvrtc,
pycuda_impl), the registry that lists them, the sweep and the bench all build on it.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

import numpy as np

# One scalar for every op: @vectorize ufuncs take no scalar argument without a hidden copy per
# call, so they fold this constant in, and every other implementation is checked against it.
SCALAR = np.float32(3.0)
# The constants of the PyCUDA seed's expression (a·10+2)·((b+2)·10−5)·5, as float32 so that no
# implementation promotes the arithmetic to float64
SEED_TEN = np.float32(10.0)
SEED_TWO = np.float32(2.0)
SEED_FIVE = np.float32(5.0)
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
    reduction: bool = False   # the output is one float64 sum, not a vector
    impls: tuple | None = None  # the implementations that have this op; None: every one

    @property
    def inplace(self) -> bool:
        return self.output in self.inputs

    def implemented_by(self, impl_name: str) -> bool:
        return self.impls is None or impl_name in self.impls

    def out_shape(self, n: int) -> tuple:
        return (1,) if self.reduction else (int(n),)

    @property
    def out_dtype(self):
        return np.float64 if self.reduction else np.float32

    @property
    def bytes_per_element(self) -> int:
        """Bytes read plus written per element (float32), as BabelStream counts them: a reduction
        writes no vector, so dot moves 2 reads per element."""
        return 4 * len(self.inputs) + self.d2h_bytes_per_element

    @property
    def h2d_bytes_per_element(self) -> int:
        return 4 * len(self.inputs)

    @property
    def d2h_bytes_per_element(self) -> int:
        # a reduction's result is 8 bytes in all, nothing per element
        return 0 if self.reduction else 4

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
    # float32 inputs, products and sum in float64 (NumPy's np.dot keeps float32: see cpu.py)
    Op("dot", "sum = Σ a·b", ("a", "b"), "sum", 2, reduction=True,
       impls=("cuda-jit-stride", "cpu-numba", "numpy")),
)}
OP_NAMES = tuple(OPS)
ELEMENTWISE_OPS = tuple(name for name, op in OPS.items() if not op.reduction)


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
        return (a * SEED_TEN + SEED_TWO) * ((b + SEED_TWO) * SEED_TEN - SEED_FIVE) * SEED_FIVE
    if op_name == "dot":
        return np.array([np.dot(ins[0].astype(np.float64), ins[1].astype(np.float64))])
    raise ValueError(f"unknown op {op_name!r}")


# ---- implementations: their names and the record each is described by ---------------------------
@dataclass
class Impl:
    name: str
    available: bool
    reason: str = ""                     # why not, when unavailable
    device: str = "gpu"                  # "gpu": device arrays and a stream; "cpu": NumPy arrays
    description: str = ""
    ops: dict = field(default_factory=dict)   # op name -> fn(ins, out, s, stream=None)
    jit: bool = True                     # compiles on first call (its time is the compile phase)
    # measured in the helper process (cpu_process.py), which makes it again from the registry by name
    in_helper: bool = False

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


def module_available(name: str) -> bool:
    """Whether an optional package can be imported, without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
