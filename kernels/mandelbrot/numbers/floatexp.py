"""Complex numbers with an extended exponent ("floatexp"): (mr, mi, e) = (mr + i*mi) * 2**e, with
max(|mr|, |mi|) in [0.5, 1) (or both 0 with e = EZERO). One exponent for both parts: the smaller part
only matters relative to the larger one, and one exponent keeps a complex product to one
renormalisation. Deltas of a frame 1e-1000 wide are ~1e-1003: far below float64's 1e-308.

Written once (`make_floatexp`) with the multiply and add the target must use, like escape.py:
plain operators on the CPU, explicitly rounded libdevice operations on the GPU (never contracted
into FMAs), so both targets compute bit-identical values. frexp/ldexp scale by powers of two,
which is exact (ldexp rounds only into the subnormal range, identically on both).
"""
from __future__ import annotations

import math

from .orbit_format import EZERO

# exponent differences beyond this make the smaller operand vanish next to the larger (2^-1100
# is below the smallest subnormal relative to a mantissa in [0.5, 1))
_FAR = 1100
# ldexp takes an int32 exponent: clamp shifts to a range that still saturates to 0 or inf
_CLAMP = 4000


def make_floatexp(mul, add, jit):
    """(fe_norm, fe_add, fe_mul, fe_to_double, fe_lt) compiled by `jit` with `mul` / `add`."""

    @jit
    def clamp(k):
        # int(): ldexp wants a plain int (the simulator hands numpy integers from arrays)
        if k > _CLAMP:
            return _CLAMP
        if k < -_CLAMP:
            return -_CLAMP
        return int(k)

    @jit
    def fe_norm(xr, xi, e):
        """Renormalise (xr + i*xi) * 2**e so that max(|xr|, |xi|) lies in [0.5, 1)."""
        a = max(abs(xr), abs(xi))
        if a == 0.0:
            return 0.0, 0.0, EZERO
        _, k = math.frexp(a)
        return math.ldexp(xr, -k), math.ldexp(xi, -k), e + k

    @jit
    def fe_add(ar, ai, ae, br, bi, be):
        if ae >= be:
            d = int(be - ae)
            if d < -_FAR:
                return ar, ai, ae
            return fe_norm(add(ar, math.ldexp(br, d)), add(ai, math.ldexp(bi, d)), ae)
        d = int(ae - be)
        if d < -_FAR:
            return br, bi, be
        return fe_norm(add(math.ldexp(ar, d), br), add(math.ldexp(ai, d), bi), be)

    @jit
    def fe_mul(ar, ai, ae, br, bi, be):
        return fe_norm(add(mul(ar, br), -mul(ai, bi)), add(mul(ar, bi), mul(ai, br)), ae + be)

    @jit
    def fe_to_double(mr, mi, e):
        k = clamp(e)
        return math.ldexp(mr, k), math.ldexp(mi, k)

    @jit
    def fe_norm2_lt(ar, ai, ae, br, bi, be):
        """|a|^2 < |b|^2 for normalised a, b: their mantissas' squares lie in [0.25, 2) (or are 0),
        so exponents more than 2 apart decide alone (and no ldexp can overflow)."""
        aa = add(mul(ar, ar), mul(ai, ai))
        bb = add(mul(br, br), mul(bi, bi))
        if aa == 0.0 or bb == 0.0:
            return aa < bb
        s = 2 * (ae - be)
        if s > 4:
            return False
        if s < -4:
            return True
        return math.ldexp(aa, int(s)) < bb

    return fe_norm, fe_add, fe_mul, fe_to_double, fe_norm2_lt
