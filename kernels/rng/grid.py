"""Launch shapes of the package's kernels: blocks of THREADS_PER_BLOCK, and grids sized to the
threads the GPU can hold at once (all of them resident, none waiting for a second wave), each
thread then striding over the data.

The number of resident blocks depends on the compiled kernel (its registers and shared memory),
so it is asked of the driver's occupancy calculator through numba's
`max_cooperative_grid_blocks`. Under numba's CUDA simulator, which runs one Python thread per CUDA
thread, grids stay tiny.
"""
from __future__ import annotations

import numba

from ..backend import simulator_enabled

THREADS_PER_BLOCK = 256
WARP = 32
SIM_THREADS_PER_BLOCK = 16   # a power of two: the simulator's block sums are shared-memory trees
SIM_BLOCKS = 2

_resident: dict = {}


def threads_per_block() -> int:
    return SIM_THREADS_PER_BLOCK if simulator_enabled() else THREADS_PER_BLOCK


def arg_types(dispatcher, args) -> tuple:
    typeof = getattr(dispatcher, "typeof_pyval", numba.typeof)
    return tuple(typeof(a) for a in args)


def is_compiled(dispatcher, args) -> bool:
    """True when `dispatcher` holds a version for these arguments (always under the simulator,
    which interprets Python)."""
    overloads = getattr(dispatcher, "overloads", None)
    if overloads is None or not hasattr(dispatcher, "compile") or simulator_enabled():
        return True
    return arg_types(dispatcher, args) in overloads


def compile_for(dispatcher, args):
    """The compiled kernel for these arguments' types (None under the simulator)."""
    if simulator_enabled() or not hasattr(dispatcher, "compile"):
        return None
    return dispatcher.compile(arg_types(dispatcher, args))


def resident_blocks(dispatcher, args, tpb: int | None = None) -> int:
    """Blocks of `tpb` threads that all fit on the GPU at once for this kernel (compiling it for
    these arguments' types when needed)."""
    tpb = tpb or threads_per_block()
    if simulator_enabled():
        return SIM_BLOCKS
    key = (dispatcher, arg_types(dispatcher, args), tpb)
    hit = _resident.get(key)
    if hit is not None:
        return hit
    blocks = 0
    try:
        blocks = int(compile_for(dispatcher, args).max_cooperative_grid_blocks(tpb))
    except Exception:  # an occupancy query a driver refuses: fall back to the hardware limits
        blocks = 0
    if blocks < 1:
        from numba import cuda
        dev = cuda.get_current_device()
        blocks = dev.MULTIPROCESSOR_COUNT * max(1, dev.MAX_THREADS_PER_MULTI_PROCESSOR // tpb)
    _resident[key] = blocks
    return blocks


# ---- holding the stream while launches are queued -------------------------------------------------
GATE_US = 300

try:
    import numpy as _np
    from numba import cuda as _cuda

    _NS = _np.uint32(1000)

    @_cuda.jit(cache=True)       # a module-level kernel: numba's disk cache serves it
    def _gate(us):
        if _cuda.grid(1) == 0:
            for _ in range(us):
                _cuda.nanosleep(_NS)
except Exception:  # numba-cuda missing: the GPU paths are never taken
    _gate = None


def hold_stream(stream, timer=None) -> None:
    """Queue a one-thread kernel that idles for about GATE_US µs before the timed launches.

    A CUDA event on an idle stream is stamped the moment it is recorded, so the time numba spends
    in Python preparing the launch that follows (tens of µs, a large share of a short kernel) would
    be counted as kernel time. Behind the gate, the start event is stamped when the gate ends, by
    which time the launches are queued: the events then time the kernels alone (NVBench does the
    same). Nothing is held under the simulator, which times nothing."""
    if simulator_enabled() or _gate is None:
        return
    if timer is not None and not is_compiled(_gate, (GATE_US,)):
        with timer.phase("compile"):
            compile_for(_gate, (GATE_US,))
    _gate[1, 32, stream](GATE_US)
