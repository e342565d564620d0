"""OrbitSnapshot: everything a ReferenceOrbit needs to be saved and restored (an on-disk cache of
references keeps these), plain data only: strings, numbers and numpy arrays.

Stable: fields are only ever added (with defaults), never renamed or dropped. The last point is
kept exactly (MPFR's hexadecimal form at full precision, as `format(mpfr, "a")` writes it and
`gmpy2.mpfr(text, precision, 16)` reads it back), so a restored orbit extends bit for bit as the
original would have.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OrbitSnapshot:
    """centre_re, centre_im: the decimal strings the orbit was made for; precision: bits;
    iterations: how far it was asked to go; escaped; period: the n it stopped at by the period
    test, or None; length: points Z_0 .. Z_{length-1};
    z: (length,) complex128, Z_n as float64 pairs (0 where |Z_n| is below float64's range);
    tiny_n (k,) int64, tiny_m (k, 2) float64, tiny_e (k,) int32: the exact floatexp form
    (mantissas in [0.5, 1), exponent) of those points;
    last_re, last_im: Z_{length-1} exactly, MPFR hex strings;
    deriv: dZ/dc at the last point as (re, im, exp) floatexp, for the period test to go on."""
    centre_re: str
    centre_im: str
    precision: int
    iterations: int
    escaped: bool
    period: int | None
    length: int
    z: np.ndarray
    tiny_n: np.ndarray
    tiny_m: np.ndarray
    tiny_e: np.ndarray
    last_re: str
    last_im: str
    deriv: tuple[float, float, int]

    def check(self) -> OrbitSnapshot:
        """ValueError in plain words when the fields do not fit together (a damaged cache file)."""
        if self.precision < 2 or self.length < 1 or self.iterations < self.length - 1:
            raise ValueError(f"reference snapshot: precision {self.precision}, length "
                             f"{self.length} and iterations {self.iterations} do not fit together")
        if self.z.dtype != np.complex128 or self.z.shape != (self.length,):
            raise ValueError(f"reference snapshot: orbit of shape {self.z.shape} ({self.z.dtype}),"
                             f" expected ({self.length},) complex128")
        k = self.tiny_n.shape[0]
        if (self.tiny_m.shape != (k, 2) or self.tiny_e.shape != (k,)
                or (k and (self.tiny_n.min() < 0 or self.tiny_n.max() >= self.length))):
            raise ValueError("reference snapshot: the tiny points' arrays do not fit the orbit")
        if self.period is not None and self.period != self.length - 1:
            raise ValueError(f"reference snapshot: period {self.period} is not its last point "
                             f"({self.length - 1})")
        return self
