"""The pixels float64 deltas cannot place, iterated again: the per-pixel loops hand back a pixel
their last pass still doubts as guard.untrusted(value) (below 0). What `settle` does with them is
the renderer's `exact_redo`:

* False (the default): nothing; they keep the loop's value and are counted as marked.
* PROVED: each runs in double-double against a double-double orbit (dd_pixels.py, the middle tier:
  far cheaper than MPFR, with a sound bound that proves nearly all of them); those it cannot
  prove keep its value and are marked.
* True (--exact-pixels): the middle tier, then those it cannot prove get the count MPFR gives at
  the precision their conditioning needs (mpfr_escape.settled_value), on all the host's cores.
  A pixel whose MPFR count has not settled by the largest precision tried is marked too.

The middle tier does not reach pictures below the perturbation format's spacings (the extended
format, where next to no pixel is handed back): there its pixels go on as if it had not run.
Nor another formula's (formulas.py): the Burning Ship's go to MPFR alone, in gmpy2's loop
(exact_ship.py), when True asks for it; PROVED leaves them marked.

MPFR's cost: about one reference orbit's time per such pixel, twice that and more to confirm the
count at a higher precision; KF's 5e227 hands back ~3 % of its pixels, the other KF files and the
test frames far fewer (docs/PERFORMANCE.md, "Exact where doubles fail"). Paid only where the
loop's own bound says float64 failed, never per pixel of the frame.

A pixel is iterated as a place of its whole picture (DeepRequest.picture), so a band's answer is
the one-piece picture's.
"""
from __future__ import annotations

from collections import OrderedDict
from decimal import Decimal

import numpy as np

from ..requests.formulas import MANDELBROT
from ..requests.request import DOUBTFUL_STAGE
from . import dd_pixels, exact_ship, mpfr_escape

# exact_redo's setting for the middle tier without MPFR (see the docstring)
PROVED = "proved"
# the overlays' redone layer (overlays.D_REDONE): 2 where a pixel stays marked
REDONE_LAYER = 4


def mode_of(request, default):
    """What to do with the handed-back pixels of `request`: its own `pixels` field when it names
    one ("marked", "proved", "exact"), else the renderer's `default` (its exact_redo)."""
    return {"marked": False, "proved": PROVED, "exact": True}.get(getattr(request, "pixels", ""),
                                                                   default)


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
        self.orbits: dict = {}      # the middle tier's double-double orbit of the last picture

    @staticmethod
    def key(whole) -> tuple:
        """The place by value (a band's picture() spells its centre its own way), and its
        formula."""
        return (Decimal(str(whole.center_re)), Decimal(str(whole.center_im)), whole.width_decimal,
                tuple(int(v) for v in whole.size), int(whole.max_iter),
                getattr(whole, "formula", MANDELBROT))

    def picture(self, whole) -> dict:
        """{(row, col): (value, settled)} of `whole` (a DeepRequest.picture()), made on first use
        (MPFR's answers; the middle tier's are kept under ("dd", row, col))."""
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
    values, settled = _exact_at(request, rows, cols, threads, cache, cancel)
    return values, int((~settled).sum())


def _exact_at(request, rows, cols, threads, cache, cancel) -> tuple[np.ndarray, np.ndarray]:
    """exact_at with whether each pixel settled."""
    whole = request.picture()
    row0 = 0 if request.within is None else int(request.within[1])
    places = [(row0 + int(r), int(c)) for r, c in zip(rows, cols)]
    known = cache.picture(whole) if cache is not None else {}
    todo = [p for p in places if p not in known]
    engine = mpfr_escape if whole.formula == MANDELBROT else exact_ship
    got = engine.settled_values(whole, todo, threads=threads, cancel=cancel)
    for p, (v, _bits, settled) in zip(todo, got):
        known[p] = (v, settled)
    return (np.array([known[p][0] for p in places], dtype=np.float64),
            np.array([bool(known[p][1]) for p in places], dtype=bool))


def resolve(request, rows, cols, exact: bool = True, threads: int | None = None,
            cache: ExactCache | None = None, cancel=None,
            progress=None) -> tuple[np.ndarray, dict, np.ndarray]:
    """New values of the handed-back pixels (rows[k], cols[k]) of `request`'s frame, as `exact`
    (True, PROVED or False: the docstring) has them: the middle tier's where it proves the count,
    else MPFR's (True), else the middle tier's unproved value (marked); NaN where no tier ran
    (the loop's own value stands, marked). With the counts {"dd_pixels": proved by the middle
    tier, "exact_pixels": iterated in MPFR, "marked_pixels"} and which pixels stay marked."""
    if not exact:
        return (np.full(len(rows), np.nan), {"dd_pixels": 0, "exact_pixels": 0,
                                             "marked_pixels": len(rows)},
                np.ones(len(rows), dtype=bool))
    exact = exact is True
    if progress is not None and len(rows):     # a stage of its own: seconds at the hardest places
        progress(0.0, DOUBTFUL_STAGE)
    whole = request.picture()
    row0 = 0 if request.within is None else int(request.within[1])
    places = [(row0 + int(r), int(c)) for r, c in zip(rows, cols)]
    known = cache.picture(whole) if cache is not None else {}
    threads = threads or mpfr_escape.workers()
    new = np.full(len(places), np.nan)
    proved = np.zeros(len(places), dtype=bool)
    if whole.formula == MANDELBROT and dd_pixels.reaches(whole):
        todo = [p for p in places if ("dd",) + p not in known]
        if todo:
            orbits = cache.orbits if cache is not None else None
            v, ok = dd_pixels.dd_at(whole, todo, threads, orbits, cancel, thorough=exact)
            for p, vk, okk in zip(todo, v, ok):
                known[("dd",) + p] = (float(vk), bool(okk))
        for k, p in enumerate(places):
            new[k], proved[k] = known[("dd",) + p]
    doubt = np.flatnonzero(~proved)
    marked = ~proved
    if exact and len(doubt):
        new[doubt], settled = _exact_at(request, np.asarray(rows)[doubt],
                                        np.asarray(cols)[doubt], threads, cache, cancel)
        marked[doubt] = ~settled
    return new, {"dd_pixels": int(proved.sum()), "exact_pixels": len(doubt) if exact else 0,
                 "marked_pixels": int(marked.sum())}, marked


def settle(request, values: np.ndarray, exact: bool = True, threads: int | None = None,
           cache: ExactCache | None = None, cancel=None, layers=None, progress=None) -> dict:
    """Every pixel of `values` (request's frame, on the host) that the loop handed back, replaced
    by `resolve`'s value (the loop's own where none; `exact`: True, PROVED or False). Returns
    resolve's counts. `layers` (the overlays', loop_args.LayerArgs): a pixel settled drops from 2
    (marked) to 1 (redone) in the redone layer."""
    where = untrusted_pixels(values)
    rows, cols = where[:, 0], where[:, 1]
    if len(where) == 0:
        return {"dd_pixels": 0, "exact_pixels": 0, "marked_pixels": 0}
    new, got, marked = resolve(request, rows, cols, exact, threads, cache, cancel, progress)
    values[rows, cols] = np.where(np.isnan(new), trusted(values[rows, cols]), new)
    if layers is not None:
        layers[REDONE_LAYER, rows[~marked], cols[~marked]] = 1
    return got
