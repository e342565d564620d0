"""The perturbation loop's layout of the BLA table (flat_build.py: zo, bt) written block by block,
for a table built while its orbit is still being computed (table_ahead.py).

A block is bla._build_parallel's: 2^CHUNK_LEVELS single steps and the merged steps above them up
to level CHUNK_LEVELS, each entry made by the same code from the same entries, so bt's rows are
the ones loop_tables makes of build_table's table, bit for bit. A block's entries depend only on
the orbit's points it covers, so a block is final as soon as those are; only where each level
starts depends on the orbit's final length, and the levels here start where an orbit of the
largest length the frame allows (max_iter + 1 points) would put them: the levels have gaps at
their ends, which nothing reads (a level's count is the final one) and which cost no memory
until written.

The entries below level CHUNK_LEVELS live in a block's scratch rows (in cache) only long enough
to be merged and written to bt: the table itself (tab, tabe) keeps only the levels from
CHUNK_LEVELS up, which the merges across blocks read, so the second thread writes half the
memory build_table would (whose first touch is most of its cost on a machine where fresh pages
are slow). An entry's radius is scaled (bla._finish) only once the level above has merged it,
so a block finishes its levels below CHUNK_LEVELS and the final pass the levels from
CHUNK_LEVELS up.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bla import _finish, _merge, _single_at
from .flat_build import bt_row, bt_row_at, zo_row


@njit(inline="always")
def _block(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, tab, tabe, st, ste, zo, bt, zc,
           bc, clamp, c):
    """Block c through the scratch rows st, ste (level lv of the block from row 2^(top+1) -
    2^(top+1-lv) on): bt's rows of its levels below `top`, zo's rows of its single steps, and
    its entry of level `top` (unfinished) in tab, tabe."""
    size = 1 << top
    base = 0
    for lv in range(top + 1):
        span = size >> lv
        lo = c * span
        hi = min(lo + span, counts[lv])
        if lv == 0:
            for j in range(lo, hi):
                _single_at(orbit, oexp, eps_bits, st, ste, j, j - lo)
        else:
            below = base - 2 * span
            for j in range(lo, hi):
                _merge(cm, ce, st, ste, below + 2 * (j - lo), base + j - lo)
        base += span
    base = 0
    for lv in range(top):
        span = size >> lv
        lo = c * span
        for j in range(lo, min(lo + span, counts[lv])):
            _finish(st, ste, base + j - lo)
            bt_row_at(st, ste, base + j - lo, bt, offsets[lv] + j, bc, clamp)
        base += span
    # the single steps' radii sit in zo beside Z (scratch row j - c*size is level 0's entry j)
    for k in range(c * size + 1, min((c + 1) * size, counts[0]) + 1):
        zo_row(orbit, st, -c * size, counts[0], zo, zc, k)
    if c < counts[top]:
        for i in range(st.shape[1]):
            tab[offsets[top] + c, i] = st[base, i]
        for i in range(ste.shape[1]):
            tabe[offsets[top] + c, i] = ste[base, i]


@njit(cache=True, nogil=True)
def stream_blocks(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, c0, c1, tab, tabe, zo,
                  bt, zc, bc, clamp):
    """Blocks c0 .. c1-1 (whole ones: their entries exist whatever the orbit's final length)."""
    rows = (2 << top) - 1
    st = np.empty((rows, tab.shape[1]), dtype=tab.dtype)
    ste = np.empty((rows, tabe.shape[1]), dtype=tabe.dtype)
    for c in range(c0, c1):
        _block(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, tab, tabe, st, ste, zo, bt,
               zc, bc, clamp, c)


@njit(cache=True, nogil=True)
def final_blocks(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, c0, tab, tabe, zo, bt, zc,
                 bc, clamp, points):
    """The rest of the layout of an orbit of `points` points (`counts` its levels' final counts):
    blocks c0 .. on (the last one, partial, where the blocks before it are done), then the levels
    from `top` up merged and finished in tab, tabe and written to bt, and zo's first and last
    rows (no single step from the last point)."""
    rows = (2 << top) - 1
    st = np.empty((rows, tab.shape[1]), dtype=tab.dtype)
    ste = np.empty((rows, tabe.shape[1]), dtype=tabe.dtype)
    size = 1 << top
    for c in range(c0, (counts[0] + size - 1) // size):
        _block(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, tab, tabe, st, ste, zo, bt,
               zc, bc, clamp, c)
    nlev = counts.shape[0]
    for lv in range(top + 1, nlev):
        for j in range(counts[lv]):
            _merge(cm, ce, tab, tabe, offsets[lv - 1] + 2 * j, offsets[lv] + j)
    for lv in range(top, nlev):
        for j in range(counts[lv]):
            k = offsets[lv] + j
            _finish(tab, tabe, k)
            bt_row(tab, tabe, bt, bc, clamp, k)
    zo_row(orbit, st, 0, 0, zo, zc, 0)
    zo_row(orbit, st, 0, 0, zo, zc, points - 1)
