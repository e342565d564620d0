"""The fixed-point reference engine's doubles of Z (fixed_engine._record_fast, read from the top
limbs of two's complement numbers) against the exact value of the limbs: within one unit in the
last place for every sign, size and limb pattern, exact floatexp below float64's range."""
from fractions import Fraction

import numpy as np
import pytest
from numba import njit

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
from kernels.mandelbrot.numbers import mpfr_lib  # noqa: E402

if mpfr_lib.LIBRARY is None:
    pytest.skip(f"no GMP library for the fixed-point engine: {mpfr_lib.WHY_NOT}",
                allow_module_level=True)

from kernels.mandelbrot.reference import fixed_engine as fe  # noqa: E402


@njit
def _read(L, n, out, tk, tm, te):
    return fe._record_fast(L, L.ctypes.data, n + 1, n, 0, out, 0, tk, tm, te)


def _limbs(v: int, w: int) -> np.ndarray:
    return np.frombuffer((v % (1 << (64 * w))).to_bytes(8 * w, "little"), dtype=np.uint64)


def _cases(n: int, rng):
    one = 1 << (64 * n)             # 1.0 in units of the last fraction limb
    yield from (0, one, -one, one >> 11, -(one >> 11), (one >> 11) - 1, -(one >> 11) + 1,
                one >> 5, -(one >> 5), 255 * one, -255 * one, (one >> 1) + 1, -(one >> 1) - 1,
                one >> 300 if n > 5 else 1, -1, 1, -(1 << 63) * (one >> 64), (1 << 63) * (one >> 64))
    for _ in range(400):
        shift = int(rng.integers(-8, min(64 * n - 2, 1200)))
        v = int.from_bytes(rng.bytes(8 * (n + 1)), "little") % one
        v = (v >> shift) if shift > 0 else (v << -shift) % (256 * one)
        yield v if rng.random() < 0.5 else -v


@pytest.mark.parametrize("n", [2, 3, 13, 14, 30])
def test_doubles_from_the_top_limbs_match_the_exact_value(n):
    rng = np.random.default_rng(n)
    w = n + 1
    L = np.zeros((fe.N_ROWS, 2 * w), dtype=np.uint64)
    out = np.zeros(1, np.complex128)
    tk, tm, te = np.zeros(1, np.int64), np.zeros((1, 2)), np.zeros(1, np.int64)
    cases = list(_cases(n, rng))
    for vx, vy in zip(cases, cases[::-1]):
        L[fe.X, :w], L[fe.Y, :w] = _limbs(vx, w), _limbs(vy, w)
        nt, escaped = _read(L, n, out, tk, tm, te)
        assert not escaped
        for got, v in ((out[0].real, vx), (out[0].imag, vy)):
            exact = float(Fraction(v, 1 << (64 * n)))
            if nt == 0 and abs(exact) > 2.0 ** -900:
                assert abs(got - exact) <= np.spacing(abs(exact)), (n, v, got, exact)
        if nt:                      # below float64's range: the exact floatexp of both parts
            for m, v in ((tm[0, 0], vx), (tm[0, 1], vy)):
                assert abs(m * 2.0 ** int(te[0]) - float(Fraction(v, 1 << (64 * n)))) <= \
                    np.spacing(max(abs(tm[0, 0]), abs(tm[0, 1]))) * 2.0 ** int(te[0])
