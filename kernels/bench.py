"""Benchmark registry and runner behind `main.py --bench` (cli/bench.py prints and writes the report).

Each workload package (`kernels/<workload>/`) holds a `bench` module with `workloads() ->
list[Workload]`; the registry finds them by walking the packages, so no workload module imports
its bench and adding a workload needs no list to edit. A workload runs on one backend and returns
result dicts in the JSON layout of docs/CLI.md, "Benchmarks" (median of repeated runs after a
warm-up).
"""
from __future__ import annotations

import datetime as _dt
import gc
import importlib
import importlib.util
import pkgutil
import platform
import statistics
from dataclasses import dataclass
from typing import Callable

from .roofs.report import result_work
from .timing import PHASES, Timings

# shared modules that measure something themselves (the copy bandwidths every ceiling refers to)
SHARED_WORKLOAD_MODULES = ("kernels.transfer",)


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    run: Callable  # (backend, repeats:int) -> list[dict]
    backends: tuple = ("cpu", "cuda")
    # backends where it runs only when named (--only): the CPU twin of a long deep workload
    named_only: tuple = ()


def workload_modules() -> list[str]:
    """`kernels.transfer` first, then every workload package's bench module, in name order."""
    import kernels
    names = list(SHARED_WORKLOAD_MODULES)
    for info in sorted(pkgutil.iter_modules(kernels.__path__), key=lambda m: m.name):
        if info.ispkg and importlib.util.find_spec(f"kernels.{info.name}.bench") is not None:
            names.append(f"kernels.{info.name}.bench")
    return names


def all_workloads() -> list[Workload]:
    out: list[Workload] = []
    for modname in workload_modules():
        out.extend(importlib.import_module(modname).workloads())
    return out


def median_timings(runs: list[Timings]) -> dict:
    """Per-phase median over runs; a phase stays None when no run measured it."""
    med = {}
    for p in PHASES:
        vals = [t.phases_ms.get(p) for t in runs if t.phases_ms.get(p) is not None]
        med[p] = statistics.median(vals) if vals else None
    return med


def time_runs(fn: Callable[[], Timings], repeats: int = 20, warmup: int = 2) -> tuple[list[Timings], float | None]:
    """Run fn warmup+repeats times; return the measured Timings and the first call's compile ms.

    The garbage collector is paused while timing, as timeit does: a sub-millisecond frame measured
    late in a long bench otherwise pays for collecting everything the earlier workloads left."""
    compile_ms = None
    for i in range(warmup):
        t = fn()
        if i == 0:
            compile_ms = t.phases_ms.get("compile")
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        runs = [fn() for _ in range(repeats)]
    finally:
        if was_enabled:
            gc.enable()
    return runs, compile_ms


def result(workload: str, backend, variant: str, size: str, runs: list[Timings],
           compile_ms=None, metrics: dict | None = None) -> dict:
    phases = median_timings(runs)
    if compile_ms is not None:
        phases["compile"] = compile_ms
    nb = runs[0].bytes if runs else {"h2d": 0, "d2h": 0}
    return {"workload": workload, "backend": getattr(backend, "name", str(backend)),
            "variant": variant, "size": size, "phases_ms": phases,
            "bytes": {"h2d": nb.get("h2d", 0), "d2h": nb.get("d2h", 0)},
            "metrics": dict(metrics or {}), "work": result_work(runs)}


def versions() -> dict:
    # package metadata, not imports: --bench must not load Qt just to print its version
    from importlib.metadata import PackageNotFoundError, version
    out = {"python": platform.python_version()}
    for dist in ("numpy", "numba", "numba-cuda", "cuda-core", "cuda-bindings", "PyQt6", "pyqtgraph", "pycuda"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            continue
    try:
        from numba import cuda
        drv = cuda.cudadrv.driver.driver.get_version()
        out["cuda_driver"] = ".".join(map(str, drv))
        out["cuda_runtime"] = ".".join(map(str, cuda.runtime.get_version()))
    except Exception:
        pass
    return out


def device_name(backend) -> str:
    if getattr(backend, "is_gpu", False):
        return backend.device
    import os
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu} ({os.cpu_count()} cores)"


def run(backend, only: str | None = None, repeats: int = 20, progress=print) -> dict:
    """Run every workload (or those whose name starts with `only`) on `backend`."""
    wls = [w for w in all_workloads() if backend.name in w.backends]
    if only:
        wls = [w for w in wls if w.name == only or w.name.startswith(only)]
        if not wls:
            names = sorted({w.name for w in all_workloads()})
            raise ValueError(f"no workload named {only!r}; choose one of: {', '.join(names)}")
    results = []
    for w in wls:
        progress(f"# {w.name}: {w.description}")
        results.extend(w.run(backend, repeats))
    return {"device": device_name(backend), "versions": versions(),
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "results": results}

