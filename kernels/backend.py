"""Which compute backends can run here, and why CUDA cannot when it cannot.

`cpu` always works. `cuda` is a real NVIDIA GPU through numba-cuda. When the environment sets
NUMBA_ENABLE_CUDASIM=1, numba.cuda is numba's simulator: it is offered as `cuda` with
`simulated=True` so the GPU code paths can be tested without a GPU, but `auto` never picks it.
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

CHOICES = ("auto", "cpu", "cuda")


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here; str(exc) is a plain-words reason."""


@dataclass(frozen=True)
class Backend:
    name: str               # "cpu" or "cuda"
    simulated: bool = False  # True under NUMBA_ENABLE_CUDASIM=1
    device: str = "CPU"      # human-readable device name

    @property
    def is_gpu(self) -> bool:
        return self.name == "cuda"

    @property
    def label(self) -> str:
        return "GPU (CUDA simulator)" if self.simulated else ("GPU" if self.is_gpu else "CPU")


class CudaMissing:
    """Stands in for numba.cuda where it does not import (no CUDA runtime library, say): a kernel
    module's `@cuda.jit` still decorates, so the CPU twins beside its GPU kernels import and run;
    calling or launching such a kernel raises BackendUnavailable with the reason. Never reached
    on a path that `resolve` allowed: the GPU is only chosen when numba.cuda imports."""

    def __init__(self, error: BaseException):
        self.error = error

    def is_available(self) -> bool:
        return False

    def jit(self, func=None, *args, **options):
        if callable(func) and not isinstance(func, str):     # @cuda.jit on a function
            return _GpuOnly(func, self.error)
        return lambda f: _GpuOnly(f, self.error)              # @cuda.jit(...) or a signature

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"numba.cuda.{name} is not here: numba-cuda did not import "
                             f"({first_line(self.error)})")


class _GpuOnly:
    """A GPU kernel or device function that could not be compiled here (see CudaMissing)."""

    def __init__(self, func, error):
        self.py_func, self.error = func, error

    def _refuse(self, *args, **kwargs):
        raise BackendUnavailable(f"no GPU code here: numba-cuda did not import "
                                 f"({first_line(self.error)})")

    __call__ = __getitem__ = _refuse


@functools.lru_cache(maxsize=1)
def numba_cuda():
    """numba.cuda, imported once; where it does not import (numba-cuda missing, or failing as it
    loads: with no CUDA runtime library it raises DynamicLibNotFoundError, not ImportError), a
    CudaMissing, so a kernel module's CPU half still imports. `cuda_status` says why."""
    try:
        from numba import cuda
    except Exception as exc:
        return CudaMissing(exc)
    return cuda


def cuda_imported() -> bool:
    """True when numba.cuda (or its simulator) imported here."""
    return not isinstance(numba_cuda(), CudaMissing)


def simulator_enabled() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


@dataclass(frozen=True)
class CudaStatus:
    usable: bool
    reason: str  # empty when usable
    device: str = ""
    simulated: bool = False


def first_line(error) -> str:
    """A one-line, plain-words summary of an error message or exception, for reasons shown to users.

    The first non-empty line, stripped; when it ends with a colon it only announces what follows
    (numba's "Error at driver init: " then the cause on the next line), so the next line is added.
    An empty message gives the exception's type name, or "unknown error" for empty text."""
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    if not lines:
        return type(error).__name__ if isinstance(error, BaseException) else "unknown error"
    out = lines[0]
    if out.endswith(":") and len(lines) > 1:
        out = f"{out} {lines[1]}"
    return out


# cuda-pathfinder's words when a CUDA library is nowhere to be found (DynamicLibNotFoundError)
_NOT_FOUND = re.compile(r'Failure finding "([^"]+)"')


def driver_present() -> bool:
    """True when the NVIDIA driver's library loads (loading it starts nothing on the GPU)."""
    import ctypes
    for name in (("nvcuda.dll",) if os.name == "nt" else ("libcuda.so.1", "libcuda.dylib")):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    return False


def import_failure(exc: BaseException) -> str:
    """Why numba.cuda did not import, in one line: a CUDA library that is missing is named with
    how to get it; with no driver either, the machine has no usable NVIDIA GPU in the first place."""
    found = _NOT_FOUND.search(str(exc))
    if found is None and type(exc).__name__ != "DynamicLibNotFoundError":
        return f"numba-cuda failed to import: {first_line(exc)}"
    lib = found.group(1) if found else first_line(exc)
    runtime = "cudart" in lib
    if not driver_present():
        return (f"no NVIDIA driver found (libcuda is missing) and no "
                f"{'CUDA runtime (libcudart)' if runtime else lib}: "
                "this machine has no usable NVIDIA GPU")
    from .extras import install_hint
    return (f"{'the CUDA runtime library' if runtime else 'the CUDA library'} {lib} was not "
            f"found: install the cuda12 or cuda13 extra matching your driver "
            f"(e.g. {install_hint('cuda12')})")


def _probe_cuda() -> CudaStatus:
    try:
        from numba import cuda
    except ImportError as exc:
        return CudaStatus(False, f"numba-cuda is not installed ({exc.name or exc}); "
                                 "install the app with the cuda12 or cuda13 extra")
    except Exception as exc:  # numba-cuda failing at import: no CUDA runtime, an unsupported numpy
        return CudaStatus(False, import_failure(exc))
    if simulator_enabled():
        return CudaStatus(True, "", "CUDA simulator", simulated=True)
    try:
        available = cuda.is_available()
    except Exception as exc:
        return CudaStatus(False, f"CUDA check failed: {first_line(exc)}")
    if not available:
        err = None
        try:
            err = cuda.cuda_error()
        except Exception as exc:
            err = exc
        if err:
            text = first_line(err)
            if "driver" in text.lower() and "cannot be found" in text.lower():
                return CudaStatus(False, "no NVIDIA driver found (libcuda is missing): "
                                         "this machine has no usable NVIDIA GPU")
            return CudaStatus(False, f"CUDA is unusable: {text}")
        return CudaStatus(False, "no CUDA-capable GPU was found")
    try:
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    except Exception as exc:
        return CudaStatus(False, f"the GPU could not be opened: {first_line(exc)}")
    try:
        from numba.cuda.cudadrv import nvvm
        if not nvvm.is_available():
            return CudaStatus(False, "NVVM (the CUDA compiler library) is missing: install the "
                                     "app with the cuda12 or cuda13 extra matching your driver")
    except Exception as exc:
        return CudaStatus(False, f"NVVM (the CUDA compiler library) is unusable: {first_line(exc)}")
    return CudaStatus(True, "", name)


@functools.lru_cache(maxsize=1)
def cuda_status() -> CudaStatus:
    """Probe CUDA once per process (cached: the probe opens a context)."""
    try:
        return _probe_cuda()
    finally:    # numba retained the context itself, or will not use it: an early retain goes
        from . import context_ahead
        context_ahead.release()


def resolve(choice: str = "auto") -> Backend:
    """Map a user's choice to a Backend, or raise BackendUnavailable with the reason."""
    if choice not in CHOICES:
        raise ValueError(f"unknown backend {choice!r}; choose one of: {', '.join(CHOICES)}")
    if choice == "cpu":
        return Backend("cpu")
    status = cuda_status()
    if choice == "auto":
        if status.usable and not status.simulated:
            return Backend("cuda", device=status.device)
        return Backend("cpu")
    if not status.usable:
        raise BackendUnavailable(status.reason)
    return Backend("cuda", simulated=status.simulated, device=status.device)


def available() -> dict[str, Backend | str]:
    """Every concrete backend: the Backend when it runs here, else the reason it does not."""
    out: dict[str, Backend | str] = {"cpu": Backend("cpu")}
    try:
        out["cuda"] = resolve("cuda")
    except BackendUnavailable as exc:
        out["cuda"] = str(exc)
    return out
