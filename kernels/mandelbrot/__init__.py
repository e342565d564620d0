"""The Mandelbrot workload: escape-time kernels for the GPU beside their CPU twins.

- `request`: MandelbrotRequest, DeepFrameRequest, ProgressiveRequest (frozen), DeepProgress, the
  iteration limit (automatic from the depth), the float64 precision check; no numba.
- `number_format`: the one rule for which arithmetic a place needs (float64, perturbation,
  extended) at a given number of pixels across.
- `escape`: the arithmetic of both number types, written once and compiled for both targets
  (numba.cuda and numba prange), the CPU twin (a band kernel per number type and formula);
  `escape_gpu`: the arithmetic compiled for the GPU, the warp primitives, the sliced and finishing
  GPU kernels; `escape_warp`: the app's GPU launches, float64 and float32, warps that refill their
  idle lanes together; `escape_variants`: the launches only benches select (`launch_settings`:
  their settings); `targets_f32`: the renderer's float32 targets.
- `colour`: values to RGBA (sqrt, log and histogram-equalised mappings), the CPU twins;
  `colour_gpu`: the same on the device; `colourer`: Colourer, which runs either.
- A `*_gpu` module (and escape_warp, escape_variants) imports numba.cuda; only
  GPU code imports it, at its first use, so a CPU frame never loads numba.cuda (~0.17 s).
- `renderer`: Renderer(backend) — one pipeline (buffers, escape, colour, the one copy to the host)
  for frames, strips of any size and a poster's bands, over `cpu_target` or `gpu_target` (device
  buffers, bands and iteration slices, the warp launch).
- `strips`: the one strip size; `zoom_path`: where each frame of a zoom movie looks.
- `deep/`: deep zoom (perturbation around an arbitrary-precision reference orbit, to 1e-10000);
  `deep_frames`: DeepFrameRenderer, its values coloured into Frames, strips for exports.
- `jobs`: which renderer draws a request (`renderer_kind`, `renderer_of`) and the scheduler's
  handlers; `tiles`: bands and frames as jobs for a pool (kernels.spread); `bench`: the
  `--bench` workloads (found by kernels.bench).

May import: numpy, numba, numba.cuda and the shared modules of `kernels` (backend, buffers, frame,
launch, palettes, timing). Never Qt, never another workload package.
"""
