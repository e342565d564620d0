"""The GPU's roofs: device-to-device copies (the driver's and a copy kernel's) between two large
buffers filled on the device, and the multiply-add chains of chains.py over enough threads to fill
every SM several times.

The chain kernels' length grows until one launch lasts `target_ms`, so launch overhead and clock
ramp-up weigh little; the best of `repeats` launches is the peak. Under the CUDA simulator the
kernels run once on a tiny grid (proving the code path) and no rate is claimed.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..buffers import OutOfDeviceMemory
from . import chains
from .model import KINDS, PEAK_FIELDS

THREADS = 256
BLOCKS_PER_SM = 32          # 4 waves of 2048 resident threads per SM
SIM_GRID = (2, 32)
START_ITER = 64
# the copy probe's buffers: large enough that the copy runs at the memory's pace (in smaller
# ones launch and ramp-up weigh in the rate); the best of its repeats is the roof
COPY_BYTES = 2**30
COPY_REPEATS = 10
MAX_ITER = 1 << 20         # loop trips, each chains.GPU_UNROLL steps


if chains.cuda is not None:
    @chains.cuda.jit(cache=True)
    def _fill(a):
        i = chains.cuda.grid(1)
        if i < a.size:
            a[i] = np.float32((i * 2654435761) & 0xFFFF)     # no runs of one value
else:  # pragma: no cover - only where numba-cuda is broken
    _fill = None


def _elapsed_ms(cuda, stream, launch) -> float:
    start, end = cuda.event(timing=True), cuda.event(timing=True)
    start.record(stream)
    launch()
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end)


def chain_rate(kind: str, target_ms: float = 20.0, repeats: int = 3, blocks: int | None = None
               ) -> tuple[float, dict]:
    """(operations per second, details) of the chain kernel of `kind` on the current device."""
    from numba import cuda
    dev = cuda.get_current_device()
    sms = int(dev.MULTIPROCESSOR_COUNT)
    blocks = blocks or sms * BLOCKS_PER_SM
    threads = blocks * THREADS
    k = chains.kernel(kind, gpu=True)
    x, y = chains.constants(kind)
    stream = cuda.stream()
    out = cuda.device_array(threads, dtype=chains.KIND_DTYPES[kind], stream=stream)

    def launch(n):
        return lambda: k[blocks, THREADS, stream](out, n, x, y)

    _elapsed_ms(cuda, stream, launch(START_ITER))        # compile, clocks up
    n, best = chains.calibrate(lambda m: _elapsed_ms(cuda, stream, launch(m)), target_ms,
                               START_ITER, MAX_ITER, repeats)
    ops = chains.ops(threads, n, gpu=True)
    return ops / (best * 1e-3), {"blocks": blocks, "threads_per_block": THREADS, "n_iter": n,
                                 "chains": chains.GPU_CHAINS, "ms": best, "ops": ops}


def simulate_chains(kinds=KINDS, n_iter: int = 4) -> dict:
    """Run each chain kernel on a tiny grid under the simulator: {kind: the threads' outputs}."""
    from numba import cuda
    got = {}
    blocks, threads = SIM_GRID
    for kind in kinds:
        out = cuda.device_array(blocks * threads, dtype=chains.KIND_DTYPES[kind])
        x, y = chains.constants(kind)
        with warnings.catch_warnings():         # the int32 chains wrap by design
            warnings.simplefilter("ignore", RuntimeWarning)
            chains.kernel(kind, gpu=True)[blocks, threads](out, n_iter, x, y)
        got[kind] = out.copy_to_host()
    return got


def copy_bytes(requested: int) -> int:
    """Bytes of each of the copy probe's two buffers: `requested`, less where the device has less
    than four times that free (whole MiB, at least 16 MiB)."""
    from ..buffers import device_free_bytes
    info = device_free_bytes()
    size = requested if info is None else min(requested, info[0] // 4)
    return max(16 * 2**20, size - size % 2**20)


def _filled(cuda, nbytes: int, stream):
    """Two float32 device arrays of nbytes each, the first filled on the device (no host data
    to make and copy over: the probe must stay quick however large its buffers)."""
    from ..buffers import ensure_device_fits
    ensure_device_fits(2 * nbytes, what="the bandwidth probe")
    n = nbytes // 4
    a = cuda.device_array(n, dtype=np.float32, stream=stream)
    b = cuda.device_array(n, dtype=np.float32, stream=stream)
    _fill[(n + 255) // 256, 256, stream](a)
    return a, b


def copy_bandwidth(backend, nbytes: int, repeats: int) -> tuple[float | None, dict]:
    """Bytes read + written per second of a copy kernel, the best of `repeats` copies between two
    device buffers of `nbytes` (copy_bytes). The roof is what a kernel of the app's kind reaches:
    the driver's own copy (kept in the details) uses wider loads than such kernels do and would
    put a roof above every one of them."""
    from numba import cuda

    from ..transfer import _copy, gbs
    stream = cuda.stream()
    a, b = _filled(cuda, nbytes, stream)
    grid = ((a.size + 255) // 256, 256, stream)
    copies = {"d2d-memcpy": lambda: b.copy_to_device(a, stream=stream),
              "d2d-kernel": lambda: _copy[grid](b, a)}
    rates = {}
    for name, copy in copies.items():
        copy()                                                # compile, first touch
        ms = min(_elapsed_ms(cuda, stream, copy) for _ in range(repeats))
        rates[name] = gbs(2 * a.nbytes, ms)
    best = rates.get("d2d-kernel")
    return (best * 1e9 if best else None), {"bytes": a.nbytes, "GB/s": rates}


def measure(backend, nbytes: int = COPY_BYTES, target_ms: float = 20.0, repeats: int = 3) -> dict:
    """Fields for Roofs: the rates, and `note` for what could not be measured."""
    if backend.simulated:
        simulate_chains()
        return {"note": "simulator: roofs not measured (the CUDA simulator has no timing)",
                "simulated": True, "details": {"simulated": True}}
    out, notes, details = {}, [], {}
    try:
        out["bandwidth_Bps"], details["copy"] = copy_bandwidth(backend, copy_bytes(nbytes),
                                                               max(COPY_REPEATS, repeats))
    except (OutOfDeviceMemory, MemoryError) as exc:
        notes.append(f"bandwidth not measured: {exc}")
    for kind in KINDS:
        try:
            out[PEAK_FIELDS[kind]], details[kind] = chain_rate(kind, target_ms, repeats)
        except Exception as exc:        # a kernel that cannot run leaves the others standing
            from ..backend import first_line
            notes.append(f"{kind} peak not measured: {first_line(exc)}")
    out["note"] = "; ".join(notes)
    out["details"] = details
    return out

