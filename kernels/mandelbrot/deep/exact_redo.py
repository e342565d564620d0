"""The pixels float64 deltas cannot place, iterated exactly: the per-pixel loops hand back a pixel
their last pass still doubts as guard.untrusted(value) (below 0), and `settle` gives each the
count MPFR gives at the precision its conditioning needs (mpfr_escape.settled_value), on all the
host's cores. A pixel whose count has not settled by the largest precision tried keeps that
answer and is counted as marked.

Cost: about one reference orbit's time per such pixel (0.7 s for KF's 5e227 at 864 bits, twice
that and more to confirm the count at a higher precision); KF's 5e227 has ~2 % of them, the other
KF files and the test frames far fewer (docs/PERFORMANCE.md, "Exact where doubles fail"). Paid
only where the loop's own bound says float64 failed, never per pixel of the frame.

A pixel is iterated as a place of its whole picture (DeepRequest.picture), so a band's answer is
the one-piece picture's.
"""
from __future__ import annotations

from collections import OrderedDict
from decimal import Decimal

import numpy as np

from . import mpfr_escape


def untrusted_pixels(values: np.ndarray) -> np.ndarray:
    """(row, col) of the pixels the loop handed back (values below 0), as an (N, 2) array."""
    return np.argwhere(values < 0)


def trusted(value):
    """The loop's own value of a pixel it handed back (guard.untrusted undone)."""
    return -1.0 - value


class ExactCache:
    """MPFR's answers for pixels already iterated, by picture (a function of the place and the
    pixel alone, so keeping them is safe): a re-render, a recolour or a band drawn again costs no
    MPFR run. A renderer holds one; the last PICTURES pictures are kept."""
    PICTURES = 4

    def __init__(self):
        self._pictures: OrderedDict = OrderedDict()

    @staticmethod
    def key(whole) -> tuple:
        """The place by value (a band's picture() spells its centre its own way)."""
        return (Decimal(str(whole.center_re)), Decimal(str(whole.center_im)), whole.width_decimal,
                tuple(int(v) for v in whole.size), int(whole.max_iter))

    def picture(self, whole) -> dict:
        """{(row, col): (value, settled)} of `whole` (a DeepRequest.picture()), made on first use."""
        k = self.key(whole)
        got = self._pictures.pop(k, None)
        self._pictures[k] = {} if got is None else got
        while len(self._pictures) > self.PICTURES:
            self._pictures.popitem(last=False)
        return self._pictures[k]


def exact_at(request, rows, cols, threads: int | None = None,
             cache: ExactCache | None = None, cancel=None) -> tuple[np.ndarray, int]:
    """MPFR's values of pixels (rows[k], cols[k]) of `request`'s frame, as places of its whole
    picture, and how many of them did not settle (marked); those in `cache` not iterated again."""
    whole = request.picture()
    row0 = 0 if request.within is None else int(request.within[1])
    places = [(row0 + int(r), int(c)) for r, c in zip(rows, cols)]
    known = cache.picture(whole) if cache is not None else {}
    todo = [p for p in places if p not in known]
    got = mpfr_escape.settled_values(whole, todo, threads=threads, cancel=cancel)
    for p, (v, _bits, settled) in zip(todo, got):
        known[p] = (v, settled)
    return (np.array([known[p][0] for p in places], dtype=np.float64),
            sum(0 if known[p][1] else 1 for p in places))


def settle(request, values: np.ndarray, exact: bool = True, threads: int | None = None,
           cache: ExactCache | None = None, cancel=None) -> dict:
    """Every pixel of `values` (request's frame, on the host) that the loop handed back, replaced
    by its exact value (`exact`) or by the loop's own (not exact: all of them marked). Returns
    {"exact_pixels": iterated in MPFR, "marked_pixels": left doubtful}."""
    where = untrusted_pixels(values)
    rows, cols = where[:, 0], where[:, 1]
    if len(where) == 0:
        return {"exact_pixels": 0, "marked_pixels": 0}
    if not exact:
        values[rows, cols] = trusted(values[rows, cols])
        return {"exact_pixels": 0, "marked_pixels": int(len(where))}
    values[rows, cols], marked = exact_at(request, rows, cols, threads, cache, cancel)
    return {"exact_pixels": int(len(where)), "marked_pixels": marked}
