"""The float forms a reference orbit is kept in for the kernels (reference.py's docstring says
which), and the constants both reference engines share."""
from __future__ import annotations

# floatexp exponent of an exact zero: far below any real exponent, so a zero added to anything
# vanishes and products of zeros stay far below too (int32 and sums of two stay in range)
EZERO = -(1 << 29)
# below this magnitude the plain float64 pair loses digits: take the floatexp form from MPFR
TINY = 2.0 ** -960
# |Z| above this may have escaped (|Z|^2 > BAILOUT2 decides, as in the kernels)
ESCAPE = 255.99
