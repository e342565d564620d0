"""Launching numba CUDA kernels frame after frame: prepared launches and resident grids.

numba-cuda converts every argument of every launch to kernel parameters in Python, which for a
kernel of many arguments costs more host time than the launch itself (docs/notes/
performance-history.md, "Distance heatmap"). Device arrays reused from a BufferPool convert to the same parameters each time, so they are
converted once and kept; scalars are converted per call, as numba would. This leans on numba-cuda
internals (pinned below 0.31 in pyproject.toml): on any surprise it falls back, for good, to the
ordinary launch, so results never depend on it.

`resident_blocks` sizes the grid of a persistent kernel (one whose threads loop over the work) to
what the GPU holds at once.
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np

from .host_costs import note_host_cost

_TYPES = []     # numba.cuda.types, imported at the first launch: a CPU frame never loads numba.cuda


def _array_type():
    """numba.cuda's array type class, the one numba-cuda itself checks arguments against."""
    if not _TYPES:
        from numba.cuda import types
        _TYPES.append(types)
    return _TYPES[0].Array


# arrays whose converted parameters are kept per argument: a renderer's 3 value slots and a spare
_KEPT_ARRAYS = 4
# scalars whose numba type follows their Python class alone (int: int64, float: float64)
_PY_SCALARS = (bool, int, float, complex)
# scalars whose conversion a later launch may reuse when the value is the same (_same_scalar)
_KEPT_SCALARS = (bool, int, float)
_KEPT_NP_SCALARS = (np.bool_, np.integer, np.floating)


class _NotCompiled(LookupError):
    """The kernel has no overload for these argument types yet."""


class PreparedKernel:
    """`PreparedKernel(dispatcher, griddim, blockdim, stream)(*args)` launches like
    `dispatcher[griddim, blockdim, stream](*args)`."""

    def __init__(self, dispatcher, griddim, blockdim, stream):
        self.dispatcher = dispatcher
        self.griddim, self.blockdim, self.stream = griddim, blockdim, stream
        from .backend import simulator_enabled
        self.fast = not simulator_enabled()  # the simulator has no compiled kernels to prepare
        # argument signature -> (the compiled overload for it, its loaded function): one launcher
        # may be called with arrays of several dtypes (zero_kernel zeroes uint32 counters and
        # int64 totals), and each must run its own overload, never the first one prepared
        self._kernels: dict[tuple, object] = {}
        self._config = None
        # position -> {id(array): (array, its numba type, its params)}: renderers rotate a few
        # buffers (value slots), so the last _KEPT_ARRAYS arrays per position are kept, not just
        # the last one; no more, since a kept array stays allocated
        self._array_params: dict[int, dict[int, tuple[object, object, list]]] = {}
        # (position, numba type) -> (the scalar's class, its value, its params) as last launched
        self._scalar_params: dict[tuple, tuple] = {}

    def __call__(self, *args):
        if self.fast:
            try:
                return self._launch_prepared(args)
            except _NotCompiled:    # numba's own launch compiles it; prepared from the next call
                pass
            except Exception as exc:  # a numba-cuda change: the ordinary path still works
                self.fast = False
                warnings.warn(f"prepared kernel launch unavailable ({exc!r}); using numba's own",
                              RuntimeWarning, stacklevel=2)
        self.dispatcher[self.griddim, self.blockdim, self.stream](*args)

    def forget(self, ids) -> None:
        """Drop the kept parameters of the arrays whose id() is in `ids`."""
        for kept in self._array_params.values():
            for i in [i for i in kept if i in ids]:
                del kept[i]

    def _setup(self, args):
        from numba.cuda.dispatcher import LaunchConfig
        argtypes = tuple(self.dispatcher.typeof_pyval(a) for a in args)
        kernel = self.dispatcher.overloads.get(argtypes)
        if kernel is None:
            raise _NotCompiled(f"no compiled overload for {argtypes}")
        grid = tuple(self.griddim) + (1,) * (3 - len(self.griddim)) if isinstance(self.griddim, tuple) \
            else (int(self.griddim), 1, 1)
        block = tuple(self.blockdim) + (1,) * (3 - len(self.blockdim)) if isinstance(self.blockdim, tuple) \
            else (int(self.blockdim), 1, 1)
        try:
            self._config = LaunchConfig(grid=grid, block=block, shmem_size=0, is_cooperative=False)
        except TypeError:  # cuda.core before 1.0 named it differently
            self._config = LaunchConfig(grid=grid, block=block, shmem_size=0, cooperative_launch=False)
        if kernel.debug or kernel.extensions:
            raise RuntimeError("debug kernels and argument extensions need numba's own launch")
        return kernel

    def _signature(self, args):
        """(the arguments' types, {position: numba type} of arrays not yet converted). A kept
        array's type was computed when it was converted; a Python or NumPy scalar's numba type
        follows its class; anything else is typed as numba types it."""
        array = _array_type()
        key: list = []
        fresh: dict[int, object] = {}
        for i, val in enumerate(args):
            if type(val) in _PY_SCALARS or isinstance(val, np.generic):
                key.append(type(val))
                continue
            hit = self._array_params.get(i, {}).get(id(val))
            if hit is not None and hit[0] is val:
                key.append(hit[1])
                continue
            ty = self.dispatcher.typeof_pyval(val)
            key.append(ty)
            if isinstance(ty, array):
                fresh[i] = ty
        return tuple(key), fresh

    def _launch_prepared(self, args):
        from numba.cuda.dispatcher import launch
        key, fresh = self._signature(args)
        got = self._kernels.get(key)
        if got is None:
            t = time.perf_counter()
            kernel = self._setup(args)
            # the loaded function of this stream's context, asked once: numba asks the driver
            # for the current context on every get_cufunc, holding the GIL
            got = self._kernels[key] = (kernel, kernel._codelibrary.get_cufunc().kernel)
            note_host_cost("launch setup", (time.perf_counter() - t) * 1e3)
        kernel, function = got
        params: list = []
        retr: list = []
        array = _array_type()
        for i, (ty, val) in enumerate(zip(kernel.argument_types, args)):
            if isinstance(ty, array):
                kept = self._array_params.setdefault(i, {})
                if i in fresh:
                    converted: list = []
                    kernel._prepare_args(ty, val, self.stream, retr, converted)
                    if retr:
                        raise RuntimeError("host arrays need copies; pass device arrays")
                    kept.pop(id(val), None)
                    if len(kept) >= _KEPT_ARRAYS:
                        del kept[next(iter(kept))]          # the oldest
                    kept[id(val)] = (val, fresh[i], converted)
                params.extend(kept[id(val)][2])
            else:
                # a scalar equal to its last value at this position reuses its conversion
                # (most of a frame's scalars stay the same from frame to frame)
                hit = self._scalar_params.get((i, ty))
                if hit is not None and type(val) is hit[0] and _same_scalar(val, hit[1]):
                    params.extend(hit[2])
                    continue
                converted = []
                kernel._prepare_args(ty, val, self.stream, retr, converted)
                if type(val) in _KEPT_SCALARS or isinstance(val, _KEPT_NP_SCALARS):
                    self._scalar_params[(i, ty)] = (type(val), val, converted)
                params.extend(converted)
        launch(self.stream, self._config, function, *params)


def _same_scalar(a, b) -> bool:
    """a and b of one class convert to the same parameter: equal, and for a zero (0.0 == -0.0)
    the same sign."""
    try:
        if a != b:
            return False
        if a == 0 and isinstance(a, (float, np.floating)):
            return math.copysign(1.0, a) == math.copysign(1.0, b)
        return bool(a == b)
    except (TypeError, ValueError):     # a value equality cannot settle: convert it again
        return False


class Launchers:
    """The PreparedKernels of one stream, kept per (kernel, grid, block), and each kernel's
    resident grid once it is compiled: a renderer that launches the same kernels frame after
    frame asks here instead of `dispatcher[grid, block, stream]`, whose per-call argument
    conversion holds the GIL that other GPUs' workers wait for."""

    def __init__(self, stream):
        self.stream = stream
        self._kernels: dict = {}
        self._resident: dict = {}

    def __call__(self, dispatcher, grid, block):
        key = (dispatcher, grid, block)
        got = self._kernels.get(key)
        if got is None:
            got = self._kernels[key] = PreparedKernel(dispatcher, grid, block, self.stream)
        return got

    def forget(self, arrays) -> None:
        """Let `arrays` go: their converted parameters are no longer kept (a renderer replacing
        its orbit and table, which would otherwise stay allocated while kept here)."""
        ids = {id(a) for a in arrays}
        for kernel in self._kernels.values():
            kernel.forget(ids)

    def resident(self, dispatcher, threads: int, fallback_per_sm: int) -> int:
        """resident_blocks, asked of the driver once per kernel (after it is compiled)."""
        got = self._resident.get((dispatcher, threads))
        if got is None:
            got = resident_blocks(dispatcher, threads, fallback_per_sm)
            if dispatcher.overloads:
                self._resident[(dispatcher, threads)] = got
        return got


def resident_blocks(kernel, threads: int, fallback_per_sm: int = 8) -> int:
    """Blocks of `threads` that all SMs hold at once for this compiled kernel (by its register
    count); more would only start once the resident ones have taken every pixel."""
    from numba import cuda
    dev = cuda.get_current_device()
    per_sm = fallback_per_sm
    try:
        got = kernel.get_regs_per_thread() if kernel.overloads else 0
        regs = max(got.values(), default=0) if isinstance(got, dict) else int(got)
        if regs:
            warp_regs = -(-regs * 32 // 256) * 256          # registers are allocated per warp
            warps = int(dev.MAX_REGISTERS_PER_MULTIPROCESSOR) // warp_regs
            per_sm = max(1, min(warps // (threads // 32),
                                int(dev.MAX_THREADS_PER_MULTIPROCESSOR) // threads))
    except Exception:  # an older numba-cuda or a driver attribute missing: keep the fallback
        per_sm = fallback_per_sm
    return int(dev.MULTIPROCESSOR_COUNT) * per_sm
