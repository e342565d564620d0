"""The Mandelbrot workload: escape-time kernels for the GPU beside their CPU twins.

Its packages, from the ground up (each stands only on those listed before it; the
import-linter contract "mandelbrot-layers" in pyproject.toml holds them to it):

- `requests/`: What a frame is asked for: formulas, the frozen requests, number format and type; no
  numba.
- `numbers/`: Number systems for compiled code: floatexp, double-double, pow2 scaling, MPFR's C
  API.
- `tables/`: The bilinear approximation (BLA) tables of a reference orbit, in the loops' flat
  layout.
- `loops/`: The per-pixel loops: float64/float32 escape and the deep perturbation and extended
  loops.
- `reference/`: The reference orbit in arbitrary precision: its engines, period stop, caches,
  nuclei.
- `redo/`: Pixels float64 deltas cannot place, iterated again: MPFR, double-double, exact
  yardstick.
- `colouring/`: Values to RGBA on either backend: the mappings, the Colourer, the overlays' layers.
- `frames/`: Float64 and float32 frames under Renderer: CPU and GPU targets, work count, preview,
  warm.
- `deep/`: Deep-zoom frames: DeepRenderer, its pixels on CPU or GPU, geometry, sectors, tables
  ahead.
- `keyframes/`: Zoom movies' paths and exponential-map keyframes: drawn, sampled, assembled,
  judged.
- `benches/`: Bench-only code: deep-zoom workloads and places, published locations, bench launches.

At the top, found by name: `renderer` (Renderer, services.render), `jobs` (the scheduler's
handlers, kernels.jobs), `bench` (the `--bench` workloads, kernels.bench); `deep_frames`
(DeepFrameRenderer), `tiles` (bands and frames as jobs for a pool), `compare` (both number types).

May import: numpy, numba, numba.cuda and the shared modules of `kernels` (backend, buffers, frame,
launch, palettes, timing). Never Qt, never another workload package.
"""
