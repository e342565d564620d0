"""A host array page-locked for every GPU of the process while a poster's bands are copied into
it: a copy from the device into pageable memory goes through the driver's staging buffers (the
CPU copies every byte once more), one into page-locked memory is the copy engine's alone.

The registration is portable (CU_MEMHOSTREGISTER_PORTABLE): made once with one GPU's context
current, it holds for every context, so each GPU's worker copies straight into its bands' rows.
"""
from __future__ import annotations

from contextlib import contextmanager

# CU_MEMHOSTREGISTER_PORTABLE in the driver's API (cuda.h)
PORTABLE = 0x01


class PinUnavailable(RuntimeError):
    """The array could not be page-locked here (no real GPU, or the driver refused)."""


@contextmanager
def pinned(array, device: int = 0):
    """While inside, `array` (C-contiguous, in host memory) is page-locked for every GPU;
    unlocked on leaving. PinUnavailable, before anything is locked, where it cannot be."""
    from ..backend import simulator_enabled
    if simulator_enabled():
        raise PinUnavailable("the CUDA simulator has no page-locked memory")
    if not array.flags.c_contiguous:
        raise PinUnavailable("only a contiguous array can be page-locked")
    try:
        from numba import cuda
        from numba.cuda.cudadrv.driver import driver
    except Exception as exc:       # no numba-cuda: nothing to lock for
        raise PinUnavailable(f"numba-cuda is not usable: {exc}") from None
    ptr, size = int(array.ctypes.data), int(array.nbytes)
    with cuda.gpus[device]:
        try:
            driver.cuMemHostRegister(ptr, size, PORTABLE)
        except Exception as exc:   # the driver's refusal, in one line
            raise PinUnavailable(f"cuMemHostRegister refused: {exc}") from None
    try:
        yield array
    finally:
        try:
            with cuda.gpus[device]:
                driver.cuMemHostUnregister(ptr)
        except Exception as exc:    # still locked: the process's end unlocks it
            import warnings
            warnings.warn(f"cuMemHostUnregister failed: {exc}", RuntimeWarning, stacklevel=2)
