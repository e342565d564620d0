"""cuRAND's Philox4_32_10 on the GPU through nvmath-python's device API (`nvmath.device.random`),
called from numba kernels. nvmath-python is optional: when it cannot be imported (or its device
code cannot be built) the generator is listed with the reason, never hidden.

Philox is counter-based: a state is a key (the seed) and a 128-bit counter, and `init(seed,
subsequence, offset, state)` is cheap. So each thread makes its own state in registers at the
start of the kernel from (seed, subsequence = chunk·threads + thread, offset 0) and nothing is
loaded or stored. nvmath's samplers take a pointer to a state; the pointer to a register-held
state comes from a small numba intrinsic (an alloca in the kernel's entry block, which LLVM keeps
in registers once the LTO-linked cuRAND functions are inlined). If that intrinsic fails to build,
the documented way is used instead: an array of states in device memory (`StatesPhilox4_32_10`,
one per thread), initialised by the same kernel; the result's note then says so.

float32 values come four at a time (`uniform4`, `normal4`), float64 two at a time
(`uniform2_double`, `normal2_double`); each thread writes its group to neighbouring elements.
"""
from __future__ import annotations

import functools

from numba import uint64

from ..backend import first_line, numba_cuda

# numba.cuda, or where it does not import (no CUDA runtime) a stand-in: the CPU twins still run
cuda = numba_cuda()

_failures: dict[str, str] = {}   # what failed to build, remembered so available() can say so


def import_problem() -> str:
    """"" when nvmath-python's device random API imports, else why not."""
    if "import" in _failures:
        return _failures["import"]
    try:
        from nvmath.device import random  # noqa: F401
    except ImportError as exc:
        _failures["import"] = (f"nvmath-python is not installed ({exc.name or exc}); install "
                               "nvmath-python with its CUDA extra (e.g. nvmath-python[cu12]) to get "
                               "cuRAND's device API")
    except Exception as exc:  # installed but broken: missing CUDA libraries, headers, ...
        _failures["import"] = f"nvmath-python's device API failed to import: {first_line(exc)}"
    return _failures.get("import", "")


def problem(backend) -> str:
    """Why the Philox generator cannot run on `backend`, or ""."""
    if not getattr(backend, "is_gpu", False):
        return "cuRAND's device API runs on the GPU only; pick the cuda backend"
    if getattr(backend, "simulated", False):
        return ("numba's CUDA simulator cannot link nvmath-python's cuRAND device code (LTO-IR); "
                "it runs on a real GPU only")
    return import_problem() or _failures.get("compile", "")


def remember_failure(exc) -> str:
    _failures["compile"] = f"nvmath-python's cuRAND device code could not be built: {first_line(exc)}"
    return _failures["compile"]


@functools.lru_cache(maxsize=1)
def compiled_apis():
    """nvmath's cuRAND device functions compiled (to LTO-IR) for the current GPU."""
    from nvmath.device import random
    return random.Compile(cc=None)


@functools.lru_cache(maxsize=1)
def _register_state():
    """A numba intrinsic `new_state()` returning a pointer to a Philox state in the calling
    kernel's own (register) memory, typed as nvmath's samplers expect."""
    import numba
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic
    from nvmath.device import random

    # nvmath types an array of states as a pointer whose .dtype is the state's numba type
    state_ty = numba.typeof(random.StatesPhilox4_32_10(1)).dtype

    @intrinsic
    def new_state(typingctx):
        sig = types.CPointer(state_ty)()

        def codegen(context, builder, signature, args):
            # a pointer's pointee is the state's data type (numba's PointerModel); cuRAND reads
            # the counter with 16-byte vector loads, should the state ever stay in memory
            ptr = cgutils.alloca_once(builder, context.get_data_type(state_ty))
            ptr.align = 16
            return ptr

        return sig, codegen

    return new_state


def _samplers(dtype: str, normal: bool):
    from nvmath.device import random
    if dtype == "float32":
        return (random.normal4 if normal else random.uniform4), 4
    return (random.normal2_double if normal else random.uniform2_double), 2


@functools.cache
def generate_kernel(dtype: str, normal: bool, in_registers: bool):
    """kernel[blocks, tpb, stream](out, start, count, seed, subsequence_base[, states]) fills
    out[start:start+count]. With in_registers=False the last argument is a StatesPhilox4_32_10
    with one state per thread."""
    from nvmath.device import random
    apis = compiled_apis()
    sample, width = _samplers(dtype, normal)
    jit = cuda.jit(link=apis.files, extensions=apis.extension)

    if width == 4:
        @cuda.jit(device=True)
        def put(out, e, end, v):
            out[e] = v.x
            if e + 1 < end:
                out[e + 1] = v.y
            if e + 2 < end:
                out[e + 2] = v.z
            if e + 3 < end:
                out[e + 3] = v.w
    else:
        @cuda.jit(device=True)
        def put(out, e, end, v):
            out[e] = v.x
            if e + 1 < end:
                out[e + 1] = v.y

    if in_registers:
        new_state = _register_state()

        @jit
        def generate(out, start, count, seed, subsequence_base):
            t = cuda.grid(1)
            step = width * cuda.gridsize(1)
            state = new_state()
            random.init(seed, subsequence_base + uint64(t), uint64(0), state)
            end = start + count
            e = start + width * t
            while e < end:
                put(out, e, end, sample(state))
                e += step
        return generate

    @jit
    def generate_in_memory(out, start, count, seed, subsequence_base, states):
        t = cuda.grid(1)
        step = width * cuda.gridsize(1)
        random.init(seed, subsequence_base + uint64(t), uint64(0), states[t])
        end = start + count
        e = start + width * t
        while e < end:
            put(out, e, end, sample(states[t]))
            e += step
    return generate_in_memory


def new_states(count: int):
    """nvmath's array of `count` Philox states in device memory (the fallback's)."""
    from nvmath.device import random
    return random.StatesPhilox4_32_10(count)


GROUP = {"float32": 4, "float64": 2}
