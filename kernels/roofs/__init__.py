"""The roofline's roofs: memory bandwidth and arithmetic peaks measured on the spot, per device.

    roofs = device_roofs(backend)             # kept per device; measured the first time
    roofs = device_roofs(backend, remeasure=True)
    roofs.f32_flops, roofs.f64_flops, roofs.int32_ops, roofs.bandwidth_Bps   # None: not measured
    roofs.note                                # why something is missing ("" when complete)
    roofs.how("bandwidth")                    # the probe that set it, its spread, the method

Qt-free; the window's roofline panel (explorer/roofline_panel.py) draws them. The work each job
did is counted in kernels/roofs/work.py and recorded with its Timings; kernels/roofs/hold.py says
which points beat their roof beyond its spread (the roofs are then re-measured).
"""
from __future__ import annotations

import datetime as _dt
import os
import functools

from .model import KIND_TITLES, KINDS, Roofs, missing_note, run_steps

# part of the cache key: a change to the microbenchmarks makes the kept roofs stale
# (5: timed through JobTimer, the bandwidth the best of the device copies and stream kernels;
# 6: the CPU's in-place update beside copy and triad, which pay a write-allocate read uncounted)
PROBES_VERSION = 6

__all__ = ["KINDS", "KIND_TITLES", "Roofs", "add_roofs", "device_roofs", "device_roofs_steps",
           "device_key", "kept_rates", "kept_roofs", "measure_roofs", "measure_roofs_steps",
           "missing_note"]


@functools.lru_cache(maxsize=1)
def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version
    out = []
    for dist in ("numba", "numba-cuda"):
        try:
            out.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            continue
    return ", ".join(out)


@functools.lru_cache(maxsize=1)
def _driver() -> str:
    try:
        from numba import cuda
        return "driver " + ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
    except Exception:
        return "driver ?"


def device_key(backend) -> str:
    """What the roofs are kept under: the device, the driver (GPU) or thread count (CPU),
    numba's versions and the probes' version."""
    from ..bench import device_name
    if getattr(backend, "is_gpu", False):
        where = f"cuda: {device_name(backend)}; {_driver()}"
        if backend.simulated:
            where += "; simulator"
    else:
        from numba import get_num_threads
        where = f"cpu: {device_name(backend)}; {get_num_threads()} numba threads"
    return f"{where}; {_versions()}; probes v{PROBES_VERSION}"


def measure_roofs_steps(backend, *, nbytes: int | None = None, target_ms: float = 20.0,
                        repeats: int = 3):
    """Measure the roofs of `backend` now, a probe at a time: yields each probe's name once it is
    done (a scheduler job lets other work run between them); returns the Roofs (nothing kept).

    `nbytes`: the device copies' array size (default 1 GiB on a GPU, less where less is free;
    64 MiB for the CPU's STREAM); `target_ms`: how long one arithmetic launch should last. Under
    the CUDA simulator the kernels run on a tiny grid and the roofs carry only the note."""
    from ..bench import device_name
    if getattr(backend, "is_gpu", False):
        from . import gpu_probe
        fields = yield from gpu_probe.measure_steps(
            backend, **({"nbytes": nbytes} if nbytes else {}), target_ms=target_ms,
            repeats=repeats)
    else:
        from . import cpu_probe
        fields = yield from cpu_probe.measure_steps(**({"nbytes": nbytes} if nbytes else {}),
                                                    target_ms=target_ms, repeats=repeats)
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    roofs = Roofs(backend=backend.name, device=device_name(backend), measured_at=now,
                  key=device_key(backend), **fields)
    if not roofs.note:
        gone = missing_note(roofs)
        if gone:
            roofs = _replace(roofs, note=gone)
    return roofs


def measure_roofs(backend, *, nbytes: int | None = None, target_ms: float = 20.0,
                  repeats: int = 3) -> Roofs:
    """measure_roofs_steps at once (a few seconds on a GPU; nothing kept)."""
    return run_steps(measure_roofs_steps(backend, nbytes=nbytes, target_ms=target_ms,
                                         repeats=repeats))


def _replace(roofs: Roofs, **kw) -> Roofs:
    import dataclasses
    return dataclasses.replace(roofs, **kw)


def kept_roofs(backend, folder: str | None = None) -> Roofs | None:
    """The roofs kept for `backend`'s device, driver and numba, or None; never measures (a
    file read: the window calls it on its own thread)."""
    from . import store
    try:
        return store.load(device_key(backend), folder)
    except Exception:       # a device that cannot be named: nothing kept for it
        return None


def _keep(roofs: Roofs, keep: bool, folder: str | None) -> Roofs:
    from . import store
    if keep and roofs.measured and not roofs.simulated:
        problem = store.save(roofs, folder)
        if problem:
            sep = "; " if roofs.note else ""
            roofs = _replace(roofs, note=f"{roofs.note}{sep}{problem}")
    return roofs


def device_roofs(backend, remeasure: bool = False, *, folder: str | None = None,
                 keep: bool = True, **measure_kw) -> Roofs:
    """The roofs of `backend`'s device: those kept in the cache folder for this device, driver
    and numba, else measured now (and kept, unless `keep` is False). `remeasure` measures anew.
    Roofs from the simulator are never kept."""
    if not remeasure:
        kept = kept_roofs(backend, folder)
        if kept is not None:
            return kept
    return _keep(measure_roofs(backend, **measure_kw), keep, folder)


def device_roofs_steps(backend, remeasure: bool = False, *, folder: str | None = None,
                       keep: bool = True, **measure_kw):
    """device_roofs a probe at a time (a generator: yields each probe's name; returns the
    Roofs), for a scheduler job that lets the app's own work go first between probes."""
    if not remeasure:
        kept = kept_roofs(backend, folder)
        if kept is not None:
            return kept
    roofs = yield from measure_roofs_steps(backend, **measure_kw)
    return _keep(roofs, keep, folder)


# (key, roofs file, its mtime and size) -> the rates read from it: the window asks on every frame,
# on the UI thread, and the file only changes when roofs are measured
_KEPT: dict[tuple, tuple[float, float] | None] = {}


def kept_rates(backend) -> tuple[float, float] | None:
    """(float32, float64) peaks kept for `backend`'s device, or None: never measures, since a
    frame's choice of number type must not wait for a microbenchmark (the roofline panel, the
    bench and tools/roofs_check.py measure them). Read from disk again only when the file
    changed."""
    from . import store
    try:
        key = device_key(backend)
        path = store.cache_path()
        st = os.stat(path)
    except Exception:       # no cache folder, no file yet, a device that cannot be named
        return None
    stamp = (key, path, st.st_mtime_ns, st.st_size)
    if stamp not in _KEPT:
        kept = store.load(key)
        _KEPT.clear()
        _KEPT[stamp] = (None if kept is None or not kept.f32_flops or not kept.f64_flops
                        else (kept.f32_flops, kept.f64_flops))
    return _KEPT[stamp]


def add_roofs(report: dict, backend, measure=None) -> dict:
    """Measure the backend's roofs now (when any result of a bench report counted work; kept for
    the window too) and add them, and each work's rates and % of roof, to the report. Where a
    result beats its roof by more than the roof's spread, the roof is stale: measured once more
    (and kept), and the report says which results beat it (`roofs_beaten`) and whether they still
    do. `measure(backend)` replaces the measurement (tests)."""
    from .report import annotate, counted
    measure = measure or (lambda be: device_roofs(be, remeasure=True))
    roofs = measure(backend) if counted(report) else None
    annotate(report, roofs)
    beaten = report.get("roofs_beaten") or []
    if beaten:
        first = list(beaten)
        annotate(report, measure(backend))
        report["roofs_remeasured"] = {"because": first,
                                      "still_beaten": report.get("roofs_beaten", [])}
    return report
