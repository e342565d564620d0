"""pow2_scale's frexp / ldexp (the BLA table's and the period test's, by the bits of the double)
give math's results bit for bit, inside a double's normal range and at its edges."""
import math

import numpy as np
from numba import njit

from kernels.mandelbrot.numbers import pow2_scale


@njit
def _both(xs, ks, out):
    for i in range(xs.shape[0]):
        out[i, 0], out[i, 1] = pow2_scale.frexp(xs[i])
        out[i, 2], out[i, 3] = math.frexp(xs[i])
        out[i, 4] = pow2_scale.ldexp(xs[i], ks[i])
        out[i, 5] = math.ldexp(xs[i], ks[i])


def test_frexp_and_ldexp_match_math_bit_for_bit():
    rng = np.random.default_rng(7)
    n = 50_000
    with np.errstate(over="ignore"):
        xs = rng.standard_normal(n) * np.exp2(rng.integers(-1080, 1030, n).astype(float))
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
             2.225073858507201e-308, 1.7976931348623157e308, 0.5, 1.0, -0.75]
    xs = np.concatenate([xs, edges, edges, edges])
    ks = np.concatenate([rng.integers(-2300, 2300, n),
                         np.full(len(edges), -1074), np.full(len(edges), 1023),
                         np.full(len(edges), -1023)])
    out = np.empty((xs.shape[0], 6))
    _both(xs, ks, out)
    bits = out.view(np.int64)
    np.testing.assert_array_equal(bits[:, 0], bits[:, 2])      # mantissas, nan's bits included
    np.testing.assert_array_equal(out[:, 1], out[:, 3])        # exponents
    np.testing.assert_array_equal(bits[:, 4], bits[:, 5])      # ldexp, subnormal rounding included
    # the cases that take the fast path and those that do not both occur
    assert np.isfinite(out[:, 4]).sum() > n // 3 and (out[:, 4] == 0).sum() > 100
    assert np.isinf(out[:, 4]).sum() > 100
