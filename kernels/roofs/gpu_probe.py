"""The GPU's roofs: the bandwidth as the best of the device copies (the driver's memcpy and a copy
kernel between two large buffers filled on the device) and of the app's own stream kernels
(stream_probe.py: every GPU implementation's vector ops, the ILP variants included), and the
multiply-add chains of chains.py over enough threads to fill every SM several times.

Every launch is timed as the app times its jobs: through JobTimer (kernels/timing.py: CUPTI's
activity records where cupti-python runs, else CUDA events behind a gate), so no host pause can
enter a roof. The chain kernels' length grows until one launch lasts `target_ms`, so launch
overhead and clock ramp-up weigh little; the best of `repeats` launches is the peak, and the
spread of those repeats ((slowest - fastest) / median) is kept beside it. Under the CUDA simulator
the kernels run once on a tiny grid (proving the code path) and no rate is claimed.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..buffers import OutOfDeviceMemory
from . import chains
from .model import KINDS, KIND_TITLES, PEAK_FIELDS, roof_entry, spread

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


def timed_ms(backend, stream, launch, label: str) -> tuple[float | None, str]:
    """(GPU milliseconds of one `launch()`, the timing method) through JobTimer, as every job
    of the app is timed; None under the simulator."""
    from ..timing import JobTimer
    t = JobTimer(backend, stream, label)
    with t.phase("kernel", gpu=True):
        launch()
    got = t.finish()
    return got.phases_ms["kernel"], got.method


def method_of(methods) -> str:
    """One word for the methods a probe's launches were timed by."""
    methods = sorted(set(m for m in methods if m))
    return methods[0] if len(methods) == 1 else " / ".join(methods)


def _cuda_backend():
    from ..backend import resolve
    return resolve("cuda")


def chain_rate(kind: str, target_ms: float = 20.0, repeats: int = 3, blocks: int | None = None,
               backend=None) -> tuple[float, dict]:
    """(operations per second, details) of the chain kernel of `kind` on the current device."""
    from numba import cuda
    backend = backend or _cuda_backend()
    dev = cuda.get_current_device()
    sms = int(dev.MULTIPROCESSOR_COUNT)
    blocks = blocks or sms * BLOCKS_PER_SM
    threads = blocks * THREADS
    k = chains.kernel(kind, gpu=True)
    x, y = chains.constants(kind)
    stream = cuda.stream()
    out = cuda.device_array(threads, dtype=chains.KIND_DTYPES[kind], stream=stream)
    runs: dict[int, list] = {}
    methods: set = set()

    def time_ms(n):
        ms, how = timed_ms(backend, stream, lambda: k[blocks, THREADS, stream](out, n, x, y),
                           f"roofs {kind} chains")
        runs.setdefault(n, []).append(ms)
        methods.add(how)
        return ms

    k[blocks, THREADS, stream](out, START_ITER, x, y)     # compile, clocks up: outside a timer
    stream.synchronize()
    n, best = chains.calibrate(time_ms, target_ms, START_ITER, MAX_ITER, repeats)
    ops = chains.ops(threads, n, gpu=True)
    return ops / (best * 1e-3), {"blocks": blocks, "threads_per_block": THREADS, "n_iter": n,
                                 "chains": chains.GPU_CHAINS, "ms": best, "ops": ops,
                                 "times_ms": runs[n], "method": method_of(methods)}


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


def rate_row(probe: str, nbytes: int, times, methods, **more) -> dict:
    """One bandwidth probe: its best rate (bytes read + written over the fastest run), the
    median's, the spread of its runs and how they were timed (rates None when not timed)."""
    timed = sorted(t for t in times if t)
    best = nbytes / (timed[0] * 1e-3) if timed else None
    median = nbytes / (timed[len(timed) // 2] * 1e-3) if timed else None
    return dict(probe=probe, bytes=int(nbytes), Bps=best, median_Bps=median, spread=spread(timed),
                repeats=len(timed), method=method_of(methods), **more)


def device_copies(backend, nbytes: int, repeats: int) -> list[dict]:
    """The device copies' rows: the driver's memcpy and a copy kernel, each `repeats` copies
    between two device buffers of `nbytes` (copy_bytes)."""
    from numba import cuda

    from ..transfer import _copy
    stream = cuda.stream()
    a, b = _filled(cuda, nbytes, stream)
    grid = ((a.size + 255) // 256, 256, stream)
    copies = {"d2d-memcpy": lambda: b.copy_to_device(a, stream=stream),
              "d2d-kernel": lambda: _copy[grid](b, a)}
    rows = []
    for name, copy in copies.items():
        copy()                                                # compile, first touch
        stream.synchronize()
        times, methods = [], set()
        for _ in range(repeats):
            ms, how = timed_ms(backend, stream, copy, f"roofs {name}")
            times.append(ms)
            methods.add(how)
        rows.append(rate_row(name, 2 * a.nbytes, times, methods, copy=name))
    return rows


def _free_now() -> None:
    """Hand the copies' buffers back at once: the stream probes' fit check counts free memory."""
    try:
        from numba import cuda
        cuda.current_context().deallocations.clear()
    except Exception:
        pass


def cache_bytes() -> int | None:
    """The device's L2 size: a memory-bound point that moved less than twice it may have run
    from the cache, above the memory's slope, without the roof being wrong."""
    try:
        from numba import cuda
        return int(cuda.get_current_device().L2_CACHE_SIZE)
    except Exception:
        return None


def best_bandwidth(rows: list[dict]):
    """(B/s, the row that set it) of the fastest probe, or (None, None)."""
    timed = [r for r in rows if r.get("Bps")]
    if not timed:
        return None, None
    best = max(timed, key=lambda r: r["Bps"])
    return best["Bps"], best


def measure_steps(backend, nbytes: int = COPY_BYTES, target_ms: float = 20.0, repeats: int = 3,
                  stream_n: int | None = None):
    """Measure the roofs a probe at a time: yields each probe's name once it is done (a
    scheduler job runs other work between them); returns the fields for Roofs, with `note` for
    what could not be measured and, in details["roofs"], how each roof was set."""
    from . import stream_probe
    if backend.simulated:
        simulate_chains()
        rows = list(stream_probe.stream_rows(backend, n=stream_probe.SIM_N, repeats=2,
                                             ops=stream_probe.SIM_OPS,
                                             impls=stream_probe.SIM_IMPLS))
        yield "simulated chains and stream kernels"
        return {"note": "simulator: roofs not measured (the CUDA simulator has no timing)",
                "simulated": True, "details": {"simulated": True, "bandwidth": rows}}
    out, notes, details, rows = {}, [], {"roofs": {}}, []
    reps = max(COPY_REPEATS, repeats)
    try:
        rows += device_copies(backend, copy_bytes(nbytes), reps)
    except (OutOfDeviceMemory, MemoryError) as exc:
        notes.append(f"device copies not measured: {exc}")
    _free_now()
    yield "device copies"
    for row in stream_probe.stream_rows(backend, n=stream_n, repeats=reps):
        rows.append(row)
        yield row["probe"]
    out["bandwidth_Bps"], best = best_bandwidth(rows)
    details["bandwidth"] = rows
    details["cache_bytes"] = cache_bytes()
    if best is None:
        notes.append("bandwidth not measured: no probe ran")
    else:
        details["roofs"]["bandwidth"] = roof_entry(
            best["probe"], best["spread"], best["repeats"], best["method"], bytes=best["bytes"],
            probes=len([r for r in rows if r.get("Bps")]),
            **{k: best[k] for k in ("op", "impl", "n", "copy") if k in best})
    for kind in KINDS:
        try:
            out[PEAK_FIELDS[kind]], details[kind] = chain_rate(kind, target_ms, repeats,
                                                               backend=backend)
            times = details[kind]["times_ms"]
            details["roofs"][kind] = roof_entry(
                f"{KIND_TITLES[kind]} multiply-add chains", spread(times), len(times),
                details[kind]["method"])
        except Exception as exc:        # a kernel that cannot run leaves the others standing
            from ..backend import first_line
            notes.append(f"{kind} peak not measured: {first_line(exc)}")
        yield f"{KIND_TITLES[kind]} chains"
    details["method"] = method_of(e["method"] for e in details["roofs"].values())
    out["note"] = "; ".join(notes)
    out["details"] = details
    return out


def measure(backend, nbytes: int = COPY_BYTES, target_ms: float = 20.0, repeats: int = 3,
            stream_n: int | None = None) -> dict:
    """measure_steps at once: the fields for Roofs."""
    from .model import run_steps
    return run_steps(measure_steps(backend, nbytes, target_ms, repeats, stream_n))
