"""The compute layer of GPU Explorer. Never imports Qt, pyqtgraph, explorer or cli.

Shared parts (modules):
  backend    which backends run here (cpu, cuda, the CUDA simulator) and why CUDA cannot
  scheduler  the one worker thread under all compute: typed requests in, typed events out
  jobs       the scheduler's default handlers, gathered from the workload packages
  timing     Timings and JobTimer (CUDA events on the job's stream, a wall clock on the host)
  buffers    BufferPool (device arrays, pinned host rings), memory probes, OutOfDeviceMemory
  launch     prepared kernel launches (argument conversion done once)
  transfer   copy bandwidths (the ceilings every rate is compared with)
  frame      Frame, the result of a picture request
  palettes   colour tables, read without importing pyqtgraph
  bench      the --bench registry and its JSON layout
  numba_cache  where numba keeps compiled kernels; in memory only where it has no folder for them

Workload packages (each: frozen requests, kernels beside their CPU twins, a renderer, the
scheduler's jobs, the --bench workloads), which never import each other:
  mandelbrot  escape-time pictures: float64 frames, deep zoom by perturbation (mandelbrot/deep/),
              colouring on the device, strips and poster tiles, zoom paths for movies
  distance    the great-circle distance heatmap over a lat/lon grid
  vector      vector-op throughput (copy, scale, add, triad, ...) in every way of running it
  rng         random numbers made on the device, and reductions and histograms done right

Subpackage that is not a workload:
  spread      independent jobs (poster bands, movie frames) over every GPU or a Dask cluster;
              it knows no workload

import-linter contracts in pyproject.toml, checked by tests/test_layers.py, keep these rules.
"""
import os as _os

# Small launches are deliberate here (warm-up frames, one-pixel readouts, tiny previews); numba's
# low-occupancy warning would otherwise flood the console and the logs for each of them.
_os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")

# A module loaded while a timing gate's kernel spins waits for it (stream_gate.py): eager loading
# makes the load happen in numba's module load, where the gates are opened first, and not inside a
# kernel's first launch. Read by the driver at cuInit, so set before anything here can call it.
_os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")

# numba's CPU target would import scipy.linalg (0.3 s) only to ask whether a BLAS is there
from .numba_blas import skip_blas_probe as _skip_blas_probe  # noqa: E402
_skip_blas_probe()

# started by a process that found no folder for numba's kernel cache (a Dask worker, say): its
# kernels compile in memory too, set up before any kernel module here is imported (numba_cache)
if _os.environ.get("GPU_EXPLORER_NUMBA_CACHE") == "memory":
    from .numba_cache import compile_in_memory as _compile_in_memory
    _compile_in_memory()
