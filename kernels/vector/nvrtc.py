"""The vector ops as CUDA C++ compiled at run time with NVRTC through CUDA Python's `cuda.core`,
launched on numba's stream in numba's (primary) context, on numba's device arrays.

One source string per elementwise op (dot is numba's alone), plus a four-elements-per-thread
variant of each ("nvrtc-ilp4"); PyCUDA's implementation (pycuda_impl) compiles the same strings.
Compiled on first use per op; a compiler failure raises ImplUnavailable with the log.
"""
from __future__ import annotations

import io
import threading

import numpy as np

from ..backend import first_line
from ..extras import install_hint
from .ops import THREADS_PER_BLOCK, ImplUnavailable, module_available

# n is 64-bit so sizes past 2^31 elements index correctly
SOURCES = {
    "copy": r'''
extern "C" __global__ void vec_copy(const float* __restrict__ a, float* __restrict__ out,
                                    unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i];
}''',
    "scale": r'''
extern "C" __global__ void vec_scale(const float* __restrict__ a, float* __restrict__ out,
                                     float s, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = s * a[i];
}''',
    "add": r'''
extern "C" __global__ void vec_add(const float* __restrict__ a, const float* __restrict__ b,
                                   float* __restrict__ out, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}''',
    "triad": r'''
extern "C" __global__ void vec_triad(const float* __restrict__ b, const float* __restrict__ c,
                                     float* __restrict__ out, float s, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = b[i] + s * c[i];
}''',
    "saxpy": r'''
extern "C" __global__ void vec_saxpy(const float* __restrict__ x, float* __restrict__ y,
                                     float s, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = s * x[i] + y[i];
}''',
    "seed-expr": r'''
extern "C" __global__ void vec_seed_expr(const float* __restrict__ a, const float* __restrict__ b,
                                         float* __restrict__ out, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = (a[i] * 10.0f + 2.0f) * ((b[i] + 2.0f) * 10.0f - 5.0f) * 5.0f;
}''',
}
KERNEL_NAMES = {name: "vec_" + name.replace("-", "_") for name in SOURCES}
SCALAR_ARG = {"scale", "triad", "saxpy"}

# The same ops with four elements per thread (instruction-level parallelism): thread i handles
# i, i+q, i+2q, i+3q with q = ceil(n/4), loading all of them into registers before any store, so
# four independent loads per input are in flight per thread; one element per thread leaves HBM3
# short of bytes in flight. Out-of-range lanes reload element i (always valid) and skip the store.
# Same C signatures as above, so kernel_args serves both. Per op: (C parameters, the inputs loaded,
# the array written, the value stored for lane k).
_ILP4_SPECS = {
    "copy": ("const float* __restrict__ a, float* __restrict__ out", ("a",), "out", "ra[k]"),
    "scale": ("const float* __restrict__ a, float* __restrict__ out, float s", ("a",), "out",
              "s * ra[k]"),
    "add": ("const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out",
            ("a", "b"), "out", "ra[k] + rb[k]"),
    "triad": ("const float* __restrict__ b, const float* __restrict__ c, float* __restrict__ out, "
              "float s", ("b", "c"), "out", "rb[k] + s * rc[k]"),
    "saxpy": ("const float* __restrict__ x, float* __restrict__ y, float s", ("x", "y"), "y",
              "s * rx[k] + ry[k]"),
    "seed-expr": ("const float* __restrict__ a, const float* __restrict__ b, "
                  "float* __restrict__ out", ("a", "b"), "out",
                  "(ra[k] * 10.0f + 2.0f) * ((rb[k] + 2.0f) * 10.0f - 5.0f) * 5.0f"),
}
ILP4_KERNEL_NAMES = {name: KERNEL_NAMES[name] + "_ilp4" for name in SOURCES}


def _ilp4_source(op_name: str) -> str:
    params, loaded, written, value = _ILP4_SPECS[op_name]
    regs = " ".join(f"float r{v}[4];" for v in loaded)
    loads = " ".join(f"r{v}[k] = {v}[at];" for v in loaded)
    return f"""
extern "C" __global__ void {ILP4_KERNEL_NAMES[op_name]}({params}, unsigned long long n) {{
    const unsigned long long q = (n + 3) / 4;
    const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i >= q) return;
    {regs}
#pragma unroll
    for (int k = 0; k < 4; ++k) {{
        const unsigned long long j = i + k * q;
        const unsigned long long at = j < n ? j : i;
        {loads}
    }}
#pragma unroll
    for (int k = 0; k < 4; ++k) {{
        const unsigned long long j = i + k * q;
        if (j < n) {written}[j] = {value};
    }}
}}"""


ILP4_SOURCES = {name: _ilp4_source(name) for name in SOURCES}
VARIANTS = {"plain": (SOURCES, KERNEL_NAMES, 1), "ilp4": (ILP4_SOURCES, ILP4_KERNEL_NAMES, 4)}


def device_pointer(arr) -> int:
    """The device address of a numba device array (or anything with __cuda_array_interface__)."""
    return int(arr.__cuda_array_interface__["data"][0])


def kernel_args(op_name: str, ins, out, s, n: int) -> list:
    """Arguments in the order of the op's CUDA C signature; pointers as numpy uint64 values."""
    ptrs = [device_pointer(a) for a in ins]
    if op_name != "saxpy":
        ptrs.append(device_pointer(out))
    args = [np.uint64(p) for p in ptrs]
    if op_name in SCALAR_ARG:
        args.append(np.float32(s))
    args.append(np.uint64(n))
    return args


def _core():
    """cuda.core's public namespace; releases before 0.3 kept it under cuda.core.experimental."""
    try:
        import cuda.core as core
        if hasattr(core, "Program") and hasattr(core, "launch"):
            return core
    except ImportError:
        pass
    import cuda.core.experimental as core  # noqa: F811
    return core


def core_version() -> str:
    try:
        from importlib.metadata import version
        return version("cuda-core")
    except Exception:
        return "unknown"


def unavailable_reason(backend) -> str:
    if not getattr(backend, "is_gpu", False):
        return "needs the CUDA backend (the CPU backend is selected)"
    if getattr(backend, "simulated", False):
        return "numba's CUDA simulator cannot run NVRTC-compiled code (cuda.core needs a real GPU)"
    if not module_available("cuda.core"):
        return f"CUDA Python's cuda.core is not installed (it comes with numba-cuda: {install_hint()})"
    try:
        _core()
    except Exception as exc:
        return f"cuda.core failed to import: {first_line(exc)}"
    return ""


class _NvrtcKernels:
    """Compiled kernels and cuda.core stream wrappers, shared by every caller in the process."""

    def __init__(self):
        self._kernels: dict = {}
        self._streams: dict = {}
        self._threads: set = set()
        self._device = None
        self._old_launch: bool | None = None

    def _device_current(self):
        core = _core()
        # cuda.core's current device is per thread; set_current() makes the device's primary
        # context current, which is the context numba uses
        tid = threading.get_ident()
        if self._device is None or tid not in self._threads:
            from numba import cuda
            dev = core.Device(cuda.get_current_device().id)
            dev.set_current()
            self._device = dev
            self._threads.add(tid)
        return self._device

    def kernel(self, op_name: str, variant: str = "plain"):
        k = self._kernels.get((variant, op_name))
        if k is not None:
            return k
        sources, names, _ = VARIANTS[variant]
        core = _core()
        dev = self._device_current()
        arch = getattr(dev, "arch", None)
        if arch is None:  # very old cuda.core: derive it from the compute capability
            cc = dev.compute_capability
            arch = f"{cc[0]}{cc[1]}"
        log = io.StringIO()
        try:
            mod = self._compile(core, sources[op_name], f"sm_{arch}", log)
            k = mod.get_kernel(names[op_name])
        except Exception as exc:
            detail = log.getvalue().strip() or first_line(exc)
            which = op_name if variant == "plain" else f"{op_name} ({variant})"
            raise ImplUnavailable(f"NVRTC could not compile {which!r}: {detail}") from exc
        self._kernels[(variant, op_name)] = k
        return k

    @staticmethod
    def _compile(core, source: str, arch: str, log):
        if hasattr(core, "ProgramOptions"):
            prog = core.Program(source, code_type="c++",
                                options=core.ProgramOptions(std="c++17", arch=arch))
            try:
                return prog.compile("cubin", logs=log)
            except TypeError:  # releases without the logs= keyword
                return prog.compile("cubin")
        # cuda.core 0.1: options are compiler flags given to compile()
        prog = core.Program(source, "c++")
        return prog.compile("cubin", options=("-std=c++17", f"-arch={arch}"), logs=log)

    def _launch(self, core, cs, blocks: int, kernel, args):
        if self._old_launch is None:
            try:  # cuda.core 0.1 put the stream in LaunchConfig and took the kernel first
                core.LaunchConfig(grid=1, block=1, stream=cs)
                self._old_launch = True
            except TypeError:
                self._old_launch = False
        if self._old_launch:
            core.launch(kernel, core.LaunchConfig(grid=blocks, block=THREADS_PER_BLOCK, stream=cs), *args)
        else:
            core.launch(cs, core.LaunchConfig(grid=blocks, block=THREADS_PER_BLOCK), kernel, *args)

    def stream(self, numba_stream):
        """A cuda.core Stream for numba's stream (same handle, no new stream)."""
        core = _core()
        dev = self._device_current()
        if not numba_stream:
            return core.Stream.from_handle(0) if hasattr(core.Stream, "from_handle") else dev.default_stream
        key = int(numba_stream.handle)
        s = self._streams.get(key)
        if s is None:
            if hasattr(numba_stream, "__cuda_stream__"):
                s = dev.create_stream(numba_stream)
            else:
                s = core.Stream.from_handle(key)
            self._streams[key] = (s, numba_stream)  # keep numba's stream alive with its wrapper
            return s
        return s[0]

    def run(self, op_name: str, ins, out, s, stream=None, variant: str = "plain"):
        n = int(out.size)
        if n == 0:
            return
        core = _core()
        k = self.kernel(op_name, variant)
        cs = self.stream(stream)
        per_thread = VARIANTS[variant][2]
        threads = (n + per_thread - 1) // per_thread
        blocks = (threads + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
        self._launch(core, cs, blocks, k, kernel_args(op_name, ins, out, s, n))


_KERNELS = _NvrtcKernels()


def ops(variant: str = "plain") -> dict:
    if variant not in VARIANTS:
        raise ValueError(f"unknown NVRTC variant {variant!r}; choose from: {', '.join(VARIANTS)}")

    def make(op_name):
        def run(ins, out, s, stream=None):
            _KERNELS.run(op_name, ins, out, s, stream, variant)
        return run
    return {name: make(name) for name in SOURCES}
