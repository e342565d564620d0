"""frexp and ldexp for the CPU's compiled loops, by the bits of the double (numba intrinsics).

numba calls a C function for each math.frexp / math.ldexp; the BLA table's merges and the period
test make a dozen such calls per entry, which cost more than their arithmetic. Here a normal
double's exponent is read and written directly, and ldexp is a product with an exact power of two,
which rounds exactly as ldexp does (once, and only into the subnormal range or to inf); zeros,
subnormals, inf, nan and exponents past a double's range go to math's functions. Bit for bit the
same results as math.frexp / math.ldexp (tests/kernels/test_pow2_scale.py). CPU only: the GPU
kernels have their own (floatexp.py).
"""
from __future__ import annotations

import math

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_EXP_MASK = 0x7FF << 52
_HALF_EXP = 1022 << 52          # the exponent field of a double in [0.5, 1)


@intrinsic
def _bits(typingctx, x):
    """The 64 bits of a float64 as an int64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, i):
    """The float64 whose bits are the int64 i."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@njit(inline="always")
def frexp(x):
    """math.frexp(x): (m, e) with x = m·2^e, |m| in [0.5, 1)."""
    b = _bits(x)
    f = (b >> 52) & 0x7FF
    if f == 0 or f == 0x7FF:
        return math.frexp(x)
    return _from_bits((b & ~_EXP_MASK) | _HALF_EXP), f - 1022


@njit(inline="always")
def ldexp(x, k):
    """math.ldexp(x, k) = x·2^k."""
    if -1022 <= k <= 1023:
        return x * _from_bits((k + 1023) << 52)
    return math.ldexp(x, k)
