"""Deep zoom for the Mandelbrot workload: frames far below float64's ~1e-13, to 1e-1000 and deeper.

- `request`: DeepRequest (frozen; centre as decimal strings of any length), `deep_format(width)` (perturbation or extended).
- `reference`: ReferenceOrbit, the centre's orbit in arbitrary precision (gmpy2, optional), reusable,
  saved and restored as an `orbit_snapshot`; iterated by `mpfr_engine` (MPFR's C API from numba,
  `mpfr_lib` loads it; `mpfr_threads` squares on threads through `spin_barrier`) or, without the
  library, `reference_gmpy2`; stopped at the frame's period by `period_stop`; `orbit_format`: the
  constants of its float forms.
- `floatexp`: complex numbers with a float64 mantissa and an integer exponent, for both targets.
- `bla`: the bilinear approximation table (numba, CPU); `layout`: its columns and the stats';
  `bla_ship`: the Burning Ship's (a conjugating A, an R-linear B), in the perturbation loop's layout.
- `perturbation_loop`: the per-pixel loop of perturbation-format frames (the method, perturbation
  with rebasing and BLA, is described there), compiled for CPU and GPU once per key: float64 or
  float32 deltas, formula (formulas.py; `step_helpers.make_ship_steps`), overlays' layers, and
  tables without single steps; `flat_build`: the orbit and table in its layout.
- `extended_loop`: the per-pixel loop of extended-format frames (floatexp deltas), both targets.
- `passes_gpu`: the two GPU passes (first, redo) every loop's kernels run, its pixel function
  and arguments as parameters, the overlays' layers a compile-time flag; `rows_cpu`: the row
  body every loop's CPU rows run, likewise.
- `guard`: the accuracy guard's constants; `step_helpers`: pieces both loops compile in;
  `targets`: the CPU's and the GPU's arithmetic and decorators, `LoopCode`, `gpu_getattr`: a
  loop module's GPU code (and numba.cuda) is made at the first use of one of its names, so a
  deep frame on the CPU never imports numba.cuda.
- `loop_args`: the loops' arguments by name (PixelGrid, PerturbationArgs, ExtendedArgs).
- `renderer`: DeepRenderer(backend).render_values(request) -> DeepResult (`result`: values +
  Timings; `frame_geometry`: where the pixels sit and the table's bound), on
  `cpu_pixels` (CpuPixels: bands of rows) or `gpu_pixels` (GpuPixels: uploads, kernel launches).
- `exact`: brute force per pixel in gmpy2, the yardstick of the tests.
- `locations`: published deep-zoom coordinates; `bench`: workloads (not auto-discovered).

May import: numpy, numba, numba.cuda, llvmlite, gmpy2 (lazily; its MPFR library by ctypes), the shared modules of `kernels` and
kernels.mandelbrot.escape (for its value convention). Never Qt.
"""
from .request import DeepRequest  # noqa: F401
