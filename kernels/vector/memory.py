"""What fits in memory: the sizes a sweep may run (host, and device, memory with a margin) and the
size of the reference copies. `host_free_bytes` and `free_device_bytes` are the probes (seams
the tests patch, here)."""
from __future__ import annotations

from .. import buffers as _buffers
from ..buffers import free_device_bytes

MIN_EXP = 10
# The reference copies run well beyond any CPU's caches and large enough for the GPU copies to reach
# their plateau (docs/PERFORMANCE.md); halved while the probe's buffers do not fit.
REF_BYTES = 256 * 2**20
MIN_REF_BYTES = 16 * 2**20
HOST_MARGIN = 0.8      # use at most this share of the available host memory
DEVICE_MARGIN = 0.9


def host_free_bytes() -> int | None:
    """Host memory available to a new allocation."""
    return _buffers.host_available_bytes()


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def sizes_up_to(max_exp: int, min_exp: int = MIN_EXP) -> list[int]:
    return [2**k for k in range(min_exp, max_exp + 1)]


def host_bytes_needed(n: int, gpu: bool, pinned: bool) -> int:
    # two random inputs, an output, and for the GPU the pageable result of end-to-end runs;
    # the pinned mode keeps its own page-locked copies of all three
    return 4 * n * ((4 if gpu else 3) + (3 if pinned else 0))


def device_bytes_needed(n: int) -> int:
    return 4 * n * 3


def fit_problem(n: int, gpu: bool, pinned: bool) -> str:
    """Why a size cannot be run here, or "" when it fits in free host (and device) memory."""
    need = host_bytes_needed(n, gpu, pinned)
    free = host_free_bytes()
    if free is not None and need > free * HOST_MARGIN:
        return (f"N = {n:,} needs {_mib(need)} of host memory but only {_mib(free)} is available")
    if gpu:
        need = device_bytes_needed(n)
        free = free_device_bytes()
        if free is not None and need > free * DEVICE_MARGIN:
            return (f"N = {n:,} needs {_mib(need)} of GPU memory but only {_mib(free)} is free")
    return ""


def reference_host_bytes(nbytes: int, gpu: bool) -> int:
    # kernels.transfer.TransferProbe: the source and the CPU copy's destination, and on the GPU a
    # pinned and a pageable buffer for the host<->device copies
    return nbytes * (4 if gpu else 2)


def reference_bytes(gpu: bool, want: int = REF_BYTES) -> int:
    """The size of the reference copies: `want`, halved while the probe does not fit in free host
    (and device: source and destination) memory, never below MIN_REF_BYTES nor above `want`."""
    nbytes = int(want)
    while nbytes > MIN_REF_BYTES:
        host, dev = host_free_bytes(), free_device_bytes() if gpu else None
        host_ok = host is None or reference_host_bytes(nbytes, gpu) <= host * HOST_MARGIN
        dev_ok = dev is None or 2 * nbytes <= dev * DEVICE_MARGIN
        if host_ok and dev_ok:
            break
        nbytes //= 2
    return max(nbytes, min(int(want), MIN_REF_BYTES))


def max_fitting_exponent(gpu: bool, pinned: bool, cap: int = 40) -> int:
    """The largest k with 2^k elements fitting in memory now (at least MIN_EXP)."""
    k = MIN_EXP
    while k < cap and not fit_problem(2 ** (k + 1), gpu, pinned):
        k += 1
    return k
