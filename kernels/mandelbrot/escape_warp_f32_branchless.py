"""A leaner float32 warp kernel: escape_warp_f32.escape_warp_kernel32's scheme and arithmetic (the
same counts and values) with fewer instructions that are not the iteration's own.

- The blocks of steps between two looks at the warp run without a branch: after each block a
  lane's flag `ok` (its state is a whole block past the last accepted one, not escaped, and a
  whole block fits before max_iter) is folded with the block's escape test, and the state the
  next block starts from (sx, sy, n) is kept only while `ok` holds, by selects. A lane that left
  the blocks keeps computing with the others (in a warp it would wait for them anyway); its count
  is settled later from (sx, sy, n). The compiler can unroll the blocks into one straight run.
- The settling (single steps with a test after each, from the last accepted block, at most one
  block's steps) is deferred to the warp's next refill: the lanes that left the blocks since the
  last refill settle together, one divergent loop per refill instead of one per look, and a
  pixel near max_iter settles its last steps there too instead of in a single-step loop every
  look.
- Segment and pixel indices are int32 and unsigned where they index arrays (no 64-bit
  arithmetic, no negative-index wraparound code).

`build(steps, blocks)` makes the kernel for a grouping (unroll_f32.py's meaning of steps and
blocks); escape_warp_f32_variants.py says which kernel the app runs.
"""
from __future__ import annotations

import numpy as np

from .escape import BAILOUT2, cuda

if cuda is not None:
    from .escape_f32 import _add_gpu as _add
    from .escape_f32 import _mul_gpu as _mul
    from .escape_f32 import _shortcut_gpu
    from .escape_warp import _FULL_MASK, _take, _warp

    _B2 = np.float32(BAILOUT2)
    _ZERO = np.float32(0.0)
    i32 = np.int32
    u32 = np.uint32

    @cuda.jit(device=True)
    def _segment_span32(seg, segs, inv_segs, cols):
        """(row, first column, length) of row segment `seg`, all int32: seg // segs by a float32
        estimate, corrected (an integer division is a long sequence)."""
        sr = i32(np.float32(seg) * inv_segs)
        while sr * segs > seg:
            sr = i32(sr - 1)
        while (sr + 1) * segs <= seg:
            sr = i32(sr + 1)
        sc0 = i32((seg - sr * segs) * 32)
        return sr, sc0, i32(min(i32(32), i32(cols - sc0)))


def _then(first, rest):
    """A device function running `first`, then `rest`, on the block state."""
    @cuda.jit(device=True, inline="always")
    def both(x, y, x2, y2, sx, sy, n, ok, px, py, mi_block):
        x, y, x2, y2, sx, sy, n, ok = first(x, y, x2, y2, sx, sy, n, ok, px, py, mi_block)
        return rest(x, y, x2, y2, sx, sy, n, ok, px, py, mi_block)
    return both


def build(steps: int, blocks: int, cache: bool = True):
    """The branch-free float32 warp kernel for `blocks` blocks of `steps` steps a look (the same
    arguments as escape_warp_f32.escape_warp_kernel32)."""
    if cuda is None:  # pragma: no cover - only where numba-cuda is broken
        return None
    block = i32(steps)
    nblocks = int(blocks)

    @cuda.jit(device=True, inline="always")
    def _block(x, y, x2, y2, sx, sy, n, ok, px, py, mi_block):
        """One block of steps; where `ok` held and the block did not escape (NaN, an overflow,
        fails the test too) its end becomes the accepted state (sx, sy, n), by selects."""
        for _ in range(block):
            y = _add(_mul(_add(x, x), y), py)
            x = _add(_add(x2, -y2), px)
            x2 = _mul(x, x)
            y2 = _mul(y, y)
        ok = ok & (_add(x2, y2) <= _B2)
        if ok:
            sx = x
            sy = y
            n = i32(n + block)
        ok = ok & (n <= mi_block)
        return x, y, x2, y2, sx, sy, n, ok

    # the look's blocks as nested inlined calls, so that they compile into one straight run (a
    # loop over them stays rolled, with a 64-bit counter)
    blocks_fn = _block
    for _ in range(nblocks - 1):
        blocks_fn = _then(_block, blocks_fn)

    @cuda.jit(cache=cache)
    def escape_warp_kernel32_branchless(values, counts, counter, thresh, band_row0, band_rows,
                                        xs, ys, max_iter):
        """escape_warp_f32.escape_warp_kernel32 with branch-free blocks and settling deferred to
        the refill (module docstring); the same results."""
        cols = i32(values.shape[1])
        segs = i32((cols + 31) // 32)
        nseg = i32(band_rows * segs)
        row0 = i32(band_row0)
        lane = i32(cuda.laneid)
        lt = _warp.lanemask_lt()
        nwarps = i32(cuda.gridsize(1) // 32)
        seg = i32(cuda.grid(1) // 32)
        inv_segs = np.float32(1.0) / np.float32(segs)
        pend = i32(0)       # the next segment's number - nwarps, held by lane `asker`
        asker = i32(0)
        if lane == 0:
            pend = i32(_take(counter))
        more = seg < nseg
        sr, sc0, slen = _segment_span32(seg, segs, inv_segs, cols)
        used = i32(0)
        live = False
        done = i32(0)       # 1: settle from (sx, sy, n), then 2: escaped, 3: inside
        r = i32(0)
        c = i32(0)
        n = i32(0)
        mi = i32(max_iter)
        mi_block = i32(mi - block)      # a block starting at n <= mi_block ends by max_iter
        thresh32 = i32(thresh)
        mi_value = np.float64(max_iter)
        px = _ZERO
        py = _ZERO
        x = _ZERO
        y = _ZERO
        x2 = _ZERO
        y2 = _ZERO
        sx = _ZERO
        sy = _ZERO
        r2 = _ZERO
        while True:
            if done != 0:
                if done == 1:
                    # at most a block of single steps from the last accepted block: the count a
                    # test after every step gives (the block's steps repeated exactly)
                    x = sx
                    y = sy
                    x2 = _mul(x, x)
                    y2 = _mul(y, y)
                    stop = min(i32(n + block), mi)
                    r2 = _ZERO
                    while n < stop:
                        n = i32(n + 1)
                        y = _add(_mul(_add(x, x), y), py)
                        x = _add(_add(x2, -y2), px)
                        x2 = _mul(x, x)
                        y2 = _mul(y, y)
                        r2 = _add(x2, y2)
                        if r2 > _B2:
                            break
                    if r2 > _B2:
                        done = i32(2)
                    elif n >= mi:
                        done = i32(3)
                    else:           # never (a block escapes only where one of its steps does):
                        live = True     # the pixel would carry on, as the blocks kernel's does
                        done = i32(0)
                row = u32(row0 + r)
                col = u32(c)
                if done == 2:
                    values[row, col] = r2
                    counts[row, col] = n
                elif done == 3:
                    values[row, col] = mi_value
                    counts[row, col] = 0
                done = i32(0)
            while more:                     # pixels for the idle lanes, in lane order
                mask = _warp.ballot_sync(_FULL_MASK, not live)
                if mask == 0:
                    break
                k = i32(cuda.popc(mask))
                rank = i32(cuda.popc(mask & lt))
                avail = i32(slen - used)
                got = False
                if not live and rank < avail:
                    r = sr
                    c = i32(sc0 + used + rank)
                    got = True
                if k < avail:
                    used = i32(used + k)
                else:                       # the segment runs out: on to the one asked for
                    seg = i32(nwarps + i32(_warp.shfl_sync(_FULL_MASK, pend, asker)))
                    asker = i32(cuda.ffs(mask) - 1)
                    if lane == asker:
                        pend = i32(_take(counter))
                    more = seg < nseg
                    sr, sc0, slen = _segment_span32(seg, segs, inv_segs, cols)
                    used = i32(min(i32(k - avail), slen))
                    if more and not live and rank >= avail and rank - avail < slen:
                        r = sr
                        c = i32(sc0 + rank - avail)
                        got = True
                if got:
                    row = u32(row0 + r)
                    col = u32(c)
                    px = xs[col]
                    py = ys[row]
                    if _shortcut_gpu(px, py):
                        values[row, col] = mi_value
                        counts[row, col] = 0
                    else:
                        live = True
                        n = i32(0)
                        x = _ZERO
                        y = _ZERO
                        x2 = _ZERO
                        y2 = _ZERO
            need = thresh32 if more else i32(32)
            idle = i32(cuda.popc(_warp.ballot_sync(_FULL_MASK, not live)))
            if idle == 32:
                if not more:
                    break
                continue
            # every lane runs the blocks, converged (an idle lane's results are dropped: it would
            # wait for the others anyway), with one vote per look: enough lanes left the blocks?
            ok = live & (n <= mi_block)
            sx = x
            sy = y
            while True:
                x, y, x2, y2, sx, sy, n, ok = blocks_fn(x, y, x2, y2, sx, sy, n, ok, px, py,
                                                         mi_block)
                if i32(cuda.popc(_warp.ballot_sync(_FULL_MASK, not ok))) >= need:
                    break
            if live and not ok:     # (while ok holds, x, y are sx, sy)
                live = False
                done = i32(1)

    return escape_warp_kernel32_branchless
