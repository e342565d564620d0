"""The bandwidth roof's stream probes: the app's own stream kernels, offered by the workload
packages that hold a `roof_probe` module (kernels/vector/roof_probe.py: every GPU implementation's
vector ops, the ILP variants included). They are found by name, as kernels.bench finds the bench
workloads: every workload imports the roofs, so the roofs must import no workload.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil

STREAM_N = 2**26            # float32 elements: 256 MiB an array, beyond every cache; the bench's N
STREAM_OPS = None           # the ops each probe module runs (None: all its stream ops)
# the simulator runs a Python thread per CUDA thread: one small probe proves the path
SIM_N = 2**8
SIM_OPS = ("triad",)
SIM_IMPLS = ("cuda-jit-ilp4",)


def probe_modules() -> list[str]:
    """Every workload package's roof_probe module, in name order."""
    import kernels
    return [f"kernels.{info.name}.roof_probe"
            for info in sorted(pkgutil.iter_modules(kernels.__path__), key=lambda m: m.name)
            if info.ispkg and importlib.util.find_spec(f"kernels.{info.name}.roof_probe")]


def stream_rows(backend, n: int | None = None, repeats: int = 10, ops=None, impls=None):
    """Yield every probe module's rows (kernels.roofs.gpu_probe.rate_row's layout, each with its
    `probe` name; `error` where one failed) at N = `n` (default STREAM_N, less where it does not
    fit). `ops`, `impls`: the names to run (None: STREAM_OPS, every implementation)."""
    for name in probe_modules():
        yield from importlib.import_module(name).stream_rows(
            backend, n or STREAM_N, repeats=repeats, ops=ops if ops is not None else STREAM_OPS,
            impls=impls)
