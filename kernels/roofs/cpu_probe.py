"""The CPU's roofs, over the threads numba uses: a STREAM-like copy and triad and an in-place
update for the bandwidth, and chains.py's multiply-add chains for the arithmetic peaks.

Bandwidth counts bytes read plus written (copy: 2 arrays, triad: 3, update a = a + s·c: 3), the
best of the three kernels and of `repeats` runs each. A store to an array not read first costs a
read of its line as well (write-allocate), which copy and triad do not count and the update does
not make: without it the vector view's in-place saxpy stood above the roof (docs/PERFORMANCE.md,
"How the roofs are measured"). Each is timed as the vector view's CPU loops are (their pieces
claimed and stamped inside the loop, cpu_chunks), with the spread of the repeats of the probe
that set each roof. The chain kernels run one prange slot per thread, each slot
CPU_CHAINS scalar chains (numba's scalar code: SIMD code could go further, see the note).
"""
from __future__ import annotations

import time

import numpy as np
from numba import get_num_threads, njit, prange

from . import chains
from ..cpu_chunks import (STAMPED, WORKERS, claim, control, enter, leave, piece, reset,
                          stamped)
from ..timing import WALL
from .model import KIND_TITLES, KINDS, PEAK_FIELDS, roof_entry, spread

TRIAD_SCALAR = 3.0
# a parallel launch wakes the threads first: with fewer steps than this, a loaded machine's
# wake-up could pass for the work
MIN_STEPS = 1 << 16


PIECES_PER_THREAD = 4


COPY, TRIAD, UPDATE = 0, 1, 2


@njit(cache=True)
def _stream_piece(a, b, c, s, kind):
    if kind == TRIAD:
        for i in range(a.size):
            a[i] = b[i] + s * c[i]
    elif kind == UPDATE:
        for i in range(a.size):
            a[i] = a[i] + s * c[i]
    else:
        for i in range(a.size):
            a[i] = b[i]


@njit(parallel=True, cache=True)
def _stream(a, b, c, s, kind, pieces, ctl):
    """a = b (COPY), a = b + s·c (TRIAD) or a = a + s·c (UPDATE), its pieces claimed and stamped
    (cpu_chunks)."""
    n = a.size
    reset(ctl)
    for _w in prange(ctl[WORKERS]):
        clocks = enter()            # this thread's clocks (cpu_chunks)
        ran = False
        p = claim(ctl)
        while p < pieces:
            ran = True
            lo, hi = piece(p, n, pieces)
            _stream_piece(a[lo:hi], b[lo:hi], c[lo:hi], s, kind)
            p = claim(ctl)
        leave(ctl, clocks, ran)


def _once_ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3


def _stamped_ms(fn, repeats: int) -> list[float]:
    fn()                                    # compile, first touch
    return [fn() for _ in range(max(1, repeats))]


def stream_bandwidth(nbytes: int, repeats: int) -> tuple[float, dict]:
    """Bytes per second of the fastest of copy (2 arrays), triad and update (3 arrays each) of
    nbytes each."""
    n = max(1024, nbytes // 8)
    rng = np.random.default_rng(7)
    b, c = rng.random(n), rng.random(n)
    a = np.ones(n)
    pieces = PIECES_PER_THREAD * get_num_threads()
    run, ctl = stamped(_stream), control()
    times = {name: _stamped_ms(lambda kind=kind: run(a, b, c, TRIAD_SCALAR, kind, pieces, ctl),
                               repeats)
             for name, kind in (("copy", COPY), ("triad", TRIAD), ("update", UPDATE))}
    moved = {"copy": 2 * 8 * n, "triad": 3 * 8 * n, "update": 3 * 8 * n}
    rates = {k: moved[k] / (min(t) * 1e-3) for k, t in times.items()}
    best = max(rates, key=rates.get)
    return rates[best], {"bytes": 8 * n, "B/s": rates, "ms": {k: min(t) for k, t in times.items()},
                         "set_by": best, "spread": spread(times[best]),
                         "repeats": len(times[best])}


def chain_rate(kind: str, target_ms: float = 20.0, repeats: int = 3, slots: int | None = None
               ) -> tuple[float, dict]:
    """(operations per second, details) of the CPU chain kernel of `kind` over every thread."""
    slots = slots or get_num_threads()
    k = chains.kernel(kind, gpu=False)
    x, y = chains.constants(kind)
    out = np.zeros(slots, dtype=chains.KIND_DTYPES[kind])
    k(out, 1, x, y)                         # compile
    runs: dict[int, list] = {}

    def time_ms(m):
        runs.setdefault(m, []).append(_once_ms(lambda: k(out, m, x, y)))
        return runs[m][-1]
    n, best = chains.calibrate(time_ms, target_ms, repeats=repeats, min_n=MIN_STEPS)
    ops = chains.ops(slots, n, gpu=False)
    return ops / (best * 1e-3), {"threads": slots, "n_iter": n, "chains": chains.CPU_CHAINS,
                                 "ms": best, "ops": ops, "times_ms": runs[n], "method": WALL}


def cache_bytes() -> int | None:
    """The largest CPU cache (Linux's sysfs; None elsewhere): a memory-bound point that moved
    less than twice it may have run from the cache, above the memory's slope."""
    import glob
    sizes = []
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            text = open(path, encoding="ascii").read().strip()
        except OSError:
            continue
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:].upper(), 1)
        digits = text.rstrip("KMGkmg")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes) if sizes else None


def measure_steps(nbytes: int = 64 * 2**20, target_ms: float = 20.0, repeats: int = 3):
    """Measure the CPU's roofs a probe at a time (yields each probe's name once done); returns
    the fields for Roofs."""
    bw, copy = stream_bandwidth(nbytes, repeats)
    details = {"stream": copy, "threads": get_num_threads(), "cache_bytes": cache_bytes(),
               "method": WALL,
               "roofs": {"bandwidth": roof_entry(f"STREAM {copy['set_by']}", copy["spread"],
                                                 copy["repeats"], STAMPED, bytes=copy["bytes"])}}
    out = {"bandwidth_Bps": bw, "details": details}
    yield "STREAM copy, triad and update"
    for kind in KINDS:
        out[PEAK_FIELDS[kind]], details[kind] = chain_rate(kind, target_ms, repeats)
        times = details[kind]["times_ms"]
        details["roofs"][kind] = roof_entry(f"{KIND_TITLES[kind]} multiply-add chains",
                                            spread(times), len(times), WALL)
        yield f"{KIND_TITLES[kind]} chains"
    out["note"] = ""
    return out


def measure(nbytes: int = 64 * 2**20, target_ms: float = 20.0, repeats: int = 3) -> dict:
    """Fields for Roofs measured on the CPU."""
    from .model import run_steps
    return run_steps(measure_steps(nbytes, target_ms, repeats))
