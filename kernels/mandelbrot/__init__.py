"""The Mandelbrot workload: escape-time kernels for the GPU beside their CPU twins.

- `request`: MandelbrotRequest (frozen), the iteration limit, the float64 precision check; no numba.
- `escape`: the arithmetic, written once and compiled for both targets (numba.cuda and numba prange).
- `renderer`: Renderer(backend) — buffers, bands, colouring on the device, the one copy to the host,
  strips for exports of any size.
- `bench`: the `--bench` workloads (found by kernels.bench; nothing here imports it).

May import: numpy, numba, numba.cuda and the shared modules of `kernels` (backend, buffers, frame,
launch, palettes, timing). Never Qt, never another workload package.
"""
