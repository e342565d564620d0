"""Deep zoom for the Mandelbrot workload: frames far below float64's ~1e-13, to 1e-1000 and deeper.

- `request`: DeepRequest (frozen; centre as decimal strings of any length), `number_format(width)`.
- `reference`: ReferenceOrbit, the centre's orbit in arbitrary precision (gmpy2, optional), reusable.
- `floatexp`: complex numbers with a float64 mantissa and an integer exponent, for both targets.
- `bla`: the bilinear approximation table (numba, CPU).
- `perturb`: the per-pixel loop (perturbation, rebasing, BLA), GPU kernel and CPU twin.
- `renderer`: DeepRenderer(backend).render_values(request) -> DeepResult (values + Timings).
- `exact`: brute force per pixel in gmpy2, the yardstick of the tests.
- `locations`: published deep-zoom coordinates; `bench`: workloads (not auto-discovered).

May import: numpy, numba, numba.cuda, gmpy2 (lazily), the shared modules of `kernels` and
kernels.mandelbrot.escape (for its value convention). Never Qt.
"""
from .request import DeepRequest, number_format  # noqa: F401
