"""An audit of a deep render against MPFR: a sample of its pixels iterated exactly
(mpfr_escape.settled_value, on all the host's cores) and their escape counts compared.

The sample (`choose`): pixels drawn at random (seeded: the same sample each time), every pixel where
a second render of the same picture disagrees on the count, and pixels whose count lies past the
reference's escape (they ran on after rebasing to the orbit's start). A value v of the renders is
escape.py's smooth count (n - 1) + f with f in [0, 1), so its escape iteration is floor(v) + 1;
the audit compares floor(v) with MPFR's, and "within ±1" allows the smoothing's rounding at the
bailout.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import mpfr_escape


@dataclass
class Audit:
    """pixels: (row, col, why, render's count, MPFR's count, bits) for each pixel audited."""
    pixels: list = field(default_factory=list)

    @property
    def errors(self) -> np.ndarray:
        return np.array([abs(p[3] - p[4]) for p in self.pixels], dtype=np.int64)

    @property
    def within_one(self) -> int:
        return int((self.errors <= 1).sum())

    @property
    def worst(self) -> int:
        return int(self.errors.max()) if self.pixels else 0

    def summary(self) -> str:
        n = len(self.pixels)
        share = 100.0 * self.within_one / n if n else 100.0
        return (f"{self.within_one:,} of {n:,} pixels within ±1 of MPFR ({share:.2f} %); "
                f"worst {self.worst:,} iterations")


def counts(values: np.ndarray) -> np.ndarray:
    """Escape iteration - 1 of each value (floor: the smooth part dropped)."""
    return np.floor(values).astype(np.int64)


def choose(values: np.ndarray, random: int = 64, seed: int = 34, other: np.ndarray | None = None,
           past: int | None = None, past_count: int = 32) -> list[tuple[int, int, str]]:
    """(row, col, why) of the pixels to audit, each once: every pixel whose count differs from
    `other`'s ("disputed"), `past_count` of those with a count past `past` ("past", the reference's
    escape), `random` more drawn at random ("random")."""
    h, w = values.shape
    rng = np.random.default_rng(seed)
    picked: dict[tuple[int, int], str] = {}
    if other is not None:
        for r, c in np.argwhere(counts(values) != counts(other)):
            picked[(int(r), int(c))] = "disputed"
    if past is not None:
        beyond = np.argwhere((values >= past) & (values < values.max() + 1))
        for r, c in beyond[rng.permutation(len(beyond))[:past_count]]:
            picked.setdefault((int(r), int(c)), "past")
    for k in rng.permutation(h * w)[:random]:
        picked.setdefault((int(k // w), int(k % w)), "random")
    return [(r, c, why) for (r, c), why in picked.items()]


def truths(request, pixels, threads: int | None = None) -> list:
    """MPFR's (value, bits, settled) of each (row, col, why) of `pixels` in `request`'s frame."""
    return mpfr_escape.settled_values(request, [(r, c) for r, c, _ in pixels], threads=threads)


def compare(values: np.ndarray, pixels, truth) -> Audit:
    """A render's values at `pixels` against `truths`' answers."""
    out = Audit()
    for (r, c, why), (v, bits, _settled) in zip(pixels, truth):
        out.pixels.append((r, c, why, int(math.floor(values[r, c])), int(math.floor(v)), bits))
    return out


def audit(request, values: np.ndarray, pixels, threads: int | None = None) -> Audit:
    """Each (row, col, why) of `pixels` in `request`'s frame (values: its render) against MPFR."""
    return compare(values, pixels, truths(request, pixels, threads))
