"""The GPU's primary context opened on a thread of its own while the main thread imports numba.

cuInit and the context cost a headless render 0.25 s on an H200, all of it inside the driver. Called
through ctypes they hold no GIL, so on a thread started as soon as the command is parsed they run
beside the main thread's imports (numba, numba.cuda: 0.6 s) instead of after them. numba-cuda then
retains the same primary context (device 0 of CUDA_VISIBLE_DEVICES, as numba's default) and finds
it made; `release()` hands this retain back once numba holds its own (kernels.backend.cuda_status).

Only libcuda is loaded here, no CUDA Python module: the thread takes no import lock the main
thread needs, and where there is no driver or GPU it just ends.
"""
from __future__ import annotations

import atexit
import ctypes
import threading

_state: dict = {"thread": None, "lib": None, "device": None}
_lock = threading.Lock()


def _open(device: int) -> None:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    if lib.cuInit(0) != 0 or lib.cuDeviceGet(ctypes.byref(dev), int(device)) != 0:
        return
    if lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0:
        _state.update(lib=lib, device=dev)


def start(device: int = 0) -> bool:
    """Open `device`'s primary context on a daemon thread, once per process; False if already
    started."""
    with _lock:
        if _state["thread"] is not None:
            return False
        t = threading.Thread(target=_open, args=(device,), name="cuda-context-ahead", daemon=True)
        _state["thread"] = t
    t.start()
    # a command that ends early (a usage error) waits for the driver call rather than leave
    # the interpreter's shutdown racing it
    atexit.register(release)
    return True


def release() -> bool:
    """Wait for the thread, then hand its retain back; True when it had one. Call once numba has
    retained the context itself, or knows it will not use the GPU. Safe to call twice."""
    with _lock:
        t = _state["thread"]
    if t is None:
        return False
    t.join()
    with _lock:
        lib, dev = _state["lib"], _state["device"]
        _state.update(lib=None, device=None)
    if lib is None:
        return False
    # the _v2 entry point is the one CUDA >= 11 headers call (the plain name is the old ABI's)
    fn = getattr(lib, "cuDevicePrimaryCtxRelease_v2", None) or lib.cuDevicePrimaryCtxRelease
    fn(dev)
    return True
