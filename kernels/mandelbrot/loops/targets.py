"""The two targets every deep loop is compiled for, and what a compiled loop is.

CPU: numba's njit, helpers inlined, plain operators. GPU: numba.cuda device functions with
libdevice's dmul_rn / dadd_rn / dsqrt_rn, which are never contracted into FMAs, so the GPU performs
exactly the CPU's operations in the same order and both give the same counts (under the simulator:
plain operators). A loop is written once as a factory taking (mul, add, sqrt, jit), like escape.py.
Float32 deltas take the *32 operations: each operand rounded to float32 first, on the GPU
libdevice's fmul_rn / fadd_rn / fsqrt_rn, so both targets round alike there too.
"""
from __future__ import annotations

import math
import operator
import threading

import numpy as np
from numba import njit

from ...backend import simulator_enabled

CPU_MUL, CPU_ADD, CPU_SQRT = operator.mul, operator.add, math.sqrt
f32 = np.float32


@njit(inline="always")
def _mul32(a, b):
    return f32(a) * f32(b)


@njit(inline="always")
def _add32(a, b):
    return f32(a) + f32(b)


@njit(inline="always")
def _sqrt32(a):
    return f32(math.sqrt(f32(a)))


CPU_MUL32, CPU_ADD32, CPU_SQRT32 = _mul32, _add32, _sqrt32


@njit(inline="always")
def cpu_load4(arr, i):
    """arr[i:i + 4] as a tuple (on the GPU one 16-byte load: kernels/wide_access.load16)."""
    return arr[i], arr[i + 1], arr[i + 2], arr[i + 3]


def cpu_jit():
    """The CPU's decorator for a loop's small helpers (floatexp, δc, the rebasing test):
    inlined into the functions that call them, where they run at every step."""
    return njit(inline="always")


def cpu_loop_jit():
    """The CPU's decorator for a loop's own functions (a pass, the passes, a pixel): compiled
    each on its own and called once per pixel. Inlined too, the row function became one giant
    function whose parallel compile took most of a minute (docs/PERFORMANCE.md, "Cold and warm
    start")."""
    return njit


class LoopCode:
    """One loop's compiled code: the CPU's row function and the GPU's first-pass and redo kernels
    (None where numba-cuda does not import). loop_args.py gives their signatures. With `module`,
    the kernels are names in that module, looked up at their first use: the loop modules make
    their GPU code then (`gpu_getattr`), so a CPU frame never imports numba.cuda. `gpu_sectors`:
    (first, redo) over several log-polar grids in one launch (sectors.py), where the loop has
    them. `layers`: the same loop writing each pixel's counts into the deep overlays' layers
    (loop_args.with_layers), or None where it has no such twin."""

    __slots__ = ("cpu_rows", "_first", "_redo", "_module", "_sectors", "layers")

    def __init__(self, cpu_rows, gpu_first=None, gpu_redo=None, module: str | None = None,
                 gpu_sectors=None, layers: LoopCode | None = None):
        self.cpu_rows, self._first, self._redo, self._module = cpu_rows, gpu_first, gpu_redo, module
        self._sectors, self.layers = gpu_sectors, layers

    def _kernel(self, k):
        if self._module is None or not isinstance(k, str):
            return k
        import importlib
        return getattr(importlib.import_module(self._module), k)

    @property
    def gpu_first(self):
        return self._kernel(self._first)

    @property
    def gpu_redo(self):
        return self._kernel(self._redo)

    @property
    def gpu_sectors(self):
        """(first, redo) kernels over packed sectors, or None where this loop has none."""
        return None if self._sectors is None else tuple(self._kernel(k) for k in self._sectors)



def loop_codes(key: str, rows, layers_rows, ship_rows, module: str):
    """(CODE, SHIP_CODE) of a deep loop whose kernels in `module` are named as both loops name
    theirs: deep_kernel_KEY and deep_redo_KEY, with _sectors, _layers and _ship twins; its parallel
    rows, with the overlays' layers and the Ship's (rows_cpu.loop_rows)."""
    def code(cpu_rows, suffix="", **more):
        return LoopCode(cpu_rows, f"deep_kernel_{key}{suffix}", f"deep_redo_{key}{suffix}",
                        module=module, **more)
    sectors = (f"deep_kernel_{key}_sectors", f"deep_redo_{key}_sectors")
    return (code(rows, gpu_sectors=sectors, layers=code(layers_rows, "_layers")),
            code(ship_rows, "_ship"))

def gpu_getattr(module_globals: dict, build, names: frozenset):
    """A module's __getattr__ (PEP 562) that runs `build()` (which defines `names` as module
    globals) the first time one of `names` is asked for, once, whichever thread asks."""
    lock = threading.RLock()

    def __getattr__(name):
        if name in names:
            with lock:
                if name not in module_globals:
                    build()
            if name in module_globals:
                return module_globals[name]
        raise AttributeError(f"module {module_globals['__name__']!r} has no attribute {name!r}")
    return __getattr__


def _build_gpu():
    """numba.cuda and the GPU's operations, imported at their first use (a CPU frame never
    imports numba.cuda)."""
    global cuda, GPU_IMPORT_ERROR, GPU_MUL, GPU_ADD, GPU_SQRT, gpu_jit, MAX_REGISTERS, FIRST_JIT
    global zero_kernel, libdevice, GPU_MUL32, GPU_ADD32, GPU_SQRT32
    # Each name is bound once, to its final value: a thread that finds one bound reads it
    # without waiting for the build (only a name not yet bound goes through __getattr__ and its
    # lock), so a placeholder None bound first was read by a second GPU's worker mid-build
    try:
        from numba import cuda
    except Exception as exc:  # the CPU path must work where numba-cuda does not import
        cuda = None
        GPU_IMPORT_ERROR = exc
        GPU_MUL = GPU_ADD = GPU_SQRT = gpu_jit = MAX_REGISTERS = FIRST_JIT = zero_kernel = None
        GPU_MUL32 = GPU_ADD32 = GPU_SQRT32 = None
        return
    if simulator_enabled():
        GPU_MUL, GPU_ADD, GPU_SQRT = operator.mul, operator.add, math.sqrt
        GPU_MUL32, GPU_ADD32, GPU_SQRT32 = _mul32.py_func, _add32.py_func, _sqrt32.py_func
    else:
        from numba.cuda import libdevice
        GPU_MUL, GPU_ADD, GPU_SQRT = libdevice.dmul_rn, libdevice.dadd_rn, libdevice.dsqrt_rn

        @cuda.jit(device=True, inline="always")
        def GPU_MUL32(a, b):
            return libdevice.fmul_rn(f32(a), f32(b))

        @cuda.jit(device=True, inline="always")
        def GPU_ADD32(a, b):
            return libdevice.fadd_rn(f32(a), f32(b))

        @cuda.jit(device=True, inline="always")
        def GPU_SQRT32(a):
            return libdevice.fsqrt_rn(f32(a))

    def gpu_jit():
        """The GPU's decorator for a loop's functions: device functions."""
        return cuda.jit(device=True)

    # Registers per thread of the first-pass kernels: they wait on memory (the orbit and table
    # reads of each step) more than on arithmetic, so more resident threads beat the spills a cap
    # causes (docs/PERFORMANCE.md, "Deep zoom"; the caps tried: docs/notes/experiments.md). The
    # redo kernels keep theirs: a redone pixel's passes are one long chain of dependent steps,
    # which spills would lengthen. The simulator's jit takes no such option.
    MAX_REGISTERS = 64
    FIRST_JIT = {"cache": True} if simulator_enabled() else {"cache": True,
                                                             "max_registers": MAX_REGISTERS}

    @cuda.jit(cache=True)
    def zero_kernel(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = 0

    GPU_IMPORT_ERROR = None


_GPU_NAMES = frozenset({"cuda", "GPU_IMPORT_ERROR", "GPU_MUL", "GPU_ADD", "GPU_SQRT", "gpu_jit",
                        "MAX_REGISTERS", "FIRST_JIT", "zero_kernel", "GPU_MUL32", "GPU_ADD32",
                        "GPU_SQRT32"})
__getattr__ = gpu_getattr(globals(), _build_gpu, _GPU_NAMES)
