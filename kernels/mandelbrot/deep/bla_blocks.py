"""The BLA table (bla.py) and the perturbation loop's layout of it (flat_build.py) written block by
block, for a table built while its orbit is still being computed (table_ahead.py).

A block is bla._build_parallel's: 2^CHUNK_LEVELS single steps and the merged steps above them up
to level CHUNK_LEVELS, each entry made by the same code from the same entries, so the table is
build_table's bit for bit wherever the loops read it. Its entries depend only on the orbit's
points the block covers, so a block is final as soon as those are; only where each level starts
depends on the orbit's final length, and the levels here start where an orbit of the largest
length the frame allows (max_iter + 1 points) would put them: the levels have gaps at their ends,
which nothing reads (a level's count is the final one) and which cost no memory until written.

An entry's radius is scaled (bla._finish) only once the level above has merged it, so a block
finishes its levels below CHUNK_LEVELS and the final pass the levels from CHUNK_LEVELS up.
"""
from __future__ import annotations

from numba import njit

from .bla import _finish, _merge, _single
from .flat_build import bt_row, zo_row


@njit(inline="always")
def _block(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, tab, tabe, bt, bc, clamp,
           layout, c):
    """Block c: its single steps, the merges up to level `top`, the levels below `top` finished
    and (layout) written to bt."""
    size = 1 << top
    for j in range(c * size, min((c + 1) * size, counts[0])):
        _single(orbit, oexp, eps_bits, tab, tabe, j)
    for lv in range(1, top + 1):
        src = offsets[lv - 1]
        dst = offsets[lv]
        span = size >> lv
        for j in range(c * span, min((c + 1) * span, counts[lv])):
            _merge(cm, ce, tab, tabe, src + 2 * j, dst + j)
    for lv in range(top):
        span = size >> lv
        for j in range(c * span, min((c + 1) * span, counts[lv])):
            k = offsets[lv] + j
            _finish(tab, tabe, k)
            if layout:
                bt_row(tab, tabe, bt, bc, clamp, k)


@njit(cache=True, nogil=True)
def stream_blocks(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, c0, c1, tab, tabe, zo,
                  bt, zc, bc, clamp, layout):
    """Blocks c0 .. c1-1, whole ones (their entries exist whatever the orbit's final length), and
    (layout) the rows of zo their single steps start from."""
    size = 1 << top
    for c in range(c0, c1):
        _block(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, tab, tabe, bt, bc, clamp,
               layout, c)
        if layout:
            for k in range(c * size + 1, (c + 1) * size + 1):
                zo_row(orbit, tab, offsets[0], counts[0], zo, zc, k)


@njit(inline="always")
def _upper(orbit, cm, ce, offsets, counts, top, tab, tabe, zo, bt, zc, bc, clamp, layout, last):
    """The levels above `top` merged, the levels from `top` up finished (and written to bt), and
    zo's first and last rows (no single step from the last point)."""
    nlev = counts.shape[0]
    for lv in range(top + 1, nlev):
        for j in range(counts[lv]):
            _merge(cm, ce, tab, tabe, offsets[lv - 1] + 2 * j, offsets[lv] + j)
    for lv in range(top, nlev):
        for j in range(counts[lv]):
            k = offsets[lv] + j
            _finish(tab, tabe, k)
            if layout:
                bt_row(tab, tabe, bt, bc, clamp, k)
    if layout:
        zo_row(orbit, tab, offsets[0], counts[0], zo, zc, 0)
        zo_row(orbit, tab, offsets[0], counts[0], zo, zc, last)


@njit(cache=True, nogil=True)
def final_blocks(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, c0, tab, tabe, zo, bt, zc,
                 bc, clamp, layout, points):
    """The rest of the table of an orbit of `points` points (`counts` its levels' final counts):
    blocks c0 .. on (the last one, partial, where the blocks before it are done) and everything
    above the blocks."""
    size = 1 << top
    nblocks = (counts[0] + size - 1) // size
    for c in range(c0, nblocks):
        _block(orbit, oexp, cm, ce, eps_bits, offsets, counts, top, tab, tabe, bt, bc, clamp,
               layout, c)
    _upper(orbit, cm, ce, offsets, counts, top, tab, tabe, zo, bt, zc, bc, clamp, layout,
           points - 1)
    if layout:
        for k in range(c0 * size + 1, points - 1):
            zo_row(orbit, tab, offsets[0], counts[0], zo, zc, k)
