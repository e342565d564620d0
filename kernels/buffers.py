"""Device arrays and pinned host buffers, allocated once per (name, shape, dtype) and reused.

A frame's pixels flow through the same memory frame after frame: allocating per frame costs
more than the kernels (pinned allocation alone is ~ms) and fragments device memory. Host frames
come from a small ring so the picture on screen is never overwritten while it is being painted.
"""
from __future__ import annotations

import os
import time

import numpy as np

from .host_costs import note_host_cost


class OutOfDeviceMemory(MemoryError):
    """A device allocation does not fit; str(exc) says how much was asked and how much is free."""


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def device_free_bytes() -> tuple[int, int] | None:
    """(free, total) bytes on the current CUDA device, or None when it cannot be asked."""
    try:
        from numba import cuda
        from .backend import simulator_enabled
        if simulator_enabled():
            return None
        free, total = cuda.current_context().get_memory_info()
        return int(free), int(total)
    except Exception:
        return None


def free_device_bytes() -> int | None:
    """The free bytes alone of device_free_bytes(), or None when they cannot be asked."""
    info = device_free_bytes()
    return None if info is None else info[0]


def ensure_device_fits(nbytes: int, margin: float = 0.9, what: str = "this job") -> None:
    """Raise OutOfDeviceMemory before allocating when `nbytes` would not fit in free memory."""
    info = device_free_bytes()
    if info is None:
        return
    free, total = info
    if nbytes > free * margin:
        raise OutOfDeviceMemory(f"{what} needs {_mb(nbytes)} of GPU memory but only {_mb(free)} of "
                                f"{_mb(total)} is free; use a smaller size")


# host_available_bytes' last answer is reused this long: every deep frame's request checks its
# orbit against it, a movie's frames hundreds of times a second across the GPUs' workers
HOST_AVAILABLE_TTL_S = 0.5
_host_available: list = [-1.0, None]        # [monotonic time read, bytes]


def host_available_bytes() -> int | None:
    """Memory the OS can hand out now (MemAvailable counts reclaimable caches; MemFree does not),
    or None when it cannot be told; read at most every HOST_AVAILABLE_TTL_S."""
    import time
    now = time.monotonic()
    t, got = _host_available
    if 0.0 <= now - t < HOST_AVAILABLE_TTL_S:
        return got
    got = _read_host_available()
    _host_available[:] = [now, got]
    return got


def _read_host_available() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def copy_frame_to_host(device_array, host_array, stream) -> None:
    """Queue a device→host copy of a whole contiguous frame on `stream`.

    DeviceNDArray.copy_to_host checks shapes, strides and dtypes in Python each call, several times
    the driver call it ends in (docs/notes/performance-history.md, "Distance heatmap"). Frames here
    are pool buffers of the same size and dtype, checked once when allocated, so the driver call is
    used directly on a real GPU.
    """
    if host_array.nbytes != device_array.nbytes:
        raise ValueError(f"frame copy of {device_array.nbytes} bytes into {host_array.nbytes}")
    from .backend import simulator_enabled
    if simulator_enabled():
        device_array.copy_to_host(host_array.view(device_array.dtype).reshape(device_array.shape),
                                  stream=stream)
        return
    from numba.cuda.cudadrv import driver
    driver.device_to_host(host_array, device_array, host_array.nbytes, stream=stream)


# shapes of one device buffer whose views are kept (a keyframe has 8 sectors)
_VIEWS_KEPT = 16


class BufferPool:
    """Per-renderer cache of device arrays, pinned host arrays and host rings.

    Not thread-safe by design: a pool belongs to one renderer, used only on the worker thread.
    """

    RING = 3

    def __init__(self, backend=None):
        self.backend = backend
        self._device: dict[str, tuple[tuple, np.dtype, object]] = {}   # name -> the last view
        self._bases: dict[str, tuple[np.dtype, object, dict]] = {}     # name -> its allocation
        self._host: dict[str, tuple[tuple, np.dtype, list, int]] = {}
        self.allocations = 0  # counted so tests can prove reuse

    def device(self, name: str, shape, dtype, *, stream=None):
        """A device array for `name`: a view of one allocation per name and dtype, which grows
        only when a larger shape is asked. Frames whose shape changes call after call (a
        keyframe's sectors, a poster's last band) reuse it: freeing device memory waits for the
        GPU, so reallocating per shape made the host and the GPU take turns."""
        shape, dtype = tuple(int(s) for s in shape), np.dtype(dtype)
        hit = self._device.get(name)
        if hit and hit[0] == shape and hit[1] == dtype:
            return hit[2]
        n = int(np.prod(shape))
        base = self._bases.get(name)
        if base is None or base[0] != dtype or base[1].shape[0] < n:
            base = self._grow(name, max(n, 1), dtype, stream)
        views = base[2]
        arr = views.get(shape)
        if arr is None:
            if len(views) >= _VIEWS_KEPT:
                del views[next(iter(views))]        # the oldest shape
            arr = views[shape] = base[1][:n].reshape(shape) if shape != (n,) else base[1][:n]
        self._device[name] = (shape, dtype, arr)
        return arr

    def _grow(self, name: str, n: int, dtype: np.dtype, stream):
        """A new allocation of `n` elements for `name` (the old one released first)."""
        from numba import cuda
        self._device.pop(name, None)
        self._bases.pop(name, None)
        nbytes = n * dtype.itemsize
        ensure_device_fits(nbytes, what=f"buffer {name!r} ({n:,} × {dtype})")
        t = time.perf_counter()
        try:
            arr = cuda.device_array((n,), dtype=dtype, stream=stream or 0)
        except Exception as exc:
            if "OUT_OF_MEMORY" in str(exc).upper() or "out of memory" in str(exc).lower():
                raise OutOfDeviceMemory(f"the GPU ran out of memory allocating {_mb(nbytes)} "
                                        f"for {name!r}") from exc
            raise
        base = self._bases[name] = (dtype, arr, {})
        self.allocations += 1
        note_host_cost("allocate", (time.perf_counter() - t) * 1e3)
        return base

    def host(self, name: str, shape, dtype, *, pinned: bool = True, ring: int = 1) -> np.ndarray:
        """A host array for `name`, pinned when on a real GPU. With ring > 1, successive calls
        rotate through `ring` arrays so that earlier results stay valid for a while."""
        shape, dtype = tuple(int(s) for s in shape), np.dtype(dtype)
        hit = self._host.get(name)
        if not (hit and hit[0] == shape and hit[1] == dtype and len(hit[2]) == ring):
            use_pinned = pinned and self._real_gpu()
            arrays = []
            t = time.perf_counter()
            for _ in range(ring):
                if use_pinned:
                    from numba import cuda
                    arrays.append(cuda.pinned_array(shape, dtype=dtype))
                else:
                    arrays.append(np.empty(shape, dtype=dtype))
                self.allocations += 1
            note_host_cost("allocate", (time.perf_counter() - t) * 1e3)
            hit = (shape, dtype, arrays, -1)
        idx = (hit[3] + 1) % ring
        self._host[name] = (hit[0], hit[1], hit[2], idx)
        return hit[2][idx]

    def _real_gpu(self) -> bool:
        b = self.backend
        return bool(b is not None and getattr(b, "is_gpu", False) and not getattr(b, "simulated", False))

    def clear(self):
        self._device.clear()
        self._bases.clear()
        self._host.clear()
