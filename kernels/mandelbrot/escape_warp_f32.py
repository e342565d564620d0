"""The app's GPU escape launch in float32: escape_warp.escape_warp_kernel's scheme (whole warps take
row segments of 32 pixels from an atomic counter and refill their idle lanes together) with
escape.py's float32 arithmetic and pixel coordinates read from two float32 arrays, so the
kernel does no float64 arithmetic at all. An escaped pixel stores |z_n|^2 (as float64) and n, and
escape.finish_kernel makes the smooth value, as for float64 frames.

The steps run in blocks (unroll_f32.py: float32 issues one operation a cycle, so a test after
every step would cost as much as the step's multiplies), with one escape test per block. Past the
bailout |z| only grows (|z| > 256 >= |c|, or |c| > 256 escaped at the first step), so a block's
last |z|^2 is above the bailout, or overflowed to inf or NaN, exactly when one of its steps
escaped; the pixel's exact count comes from single steps redone from the block's start.

- The blocks of steps between two looks at the warp run without a branch: after each block a
  lane's flag `ok` (its state is a whole block past the last accepted one, not escaped, and a
  whole block fits before max_iter) is folded with the block's escape test, and the state the
  next block starts from (sx, sy, n) is kept only while `ok` holds, by selects. A lane that left
  the blocks keeps computing with the others (in a warp it would wait for them anyway); its count
  is settled later from (sx, sy, n). The look's blocks are nested inlined calls (`_look_of`), so
  they compile into one straight run.
- The settling (single steps with a test after each, from the last accepted block, at most one
  block's steps) is deferred to the warp's next refill: the lanes that left the blocks since the
  last refill settle together, one divergent loop per refill instead of one per look, and a
  pixel near max_iter settles its last steps there too.
- Segment and pixel indices are int32 and unsigned where they index arrays (no 64-bit
  arithmetic, no negative-index wraparound code).

`escape_warp_kernel32` is built at unroll_f32's grouping and kept in numba's disk cache like the
other kernels (it reads the grouping from this module's globals, `_BLOCK` and `_LOOK`);
`build(steps, blocks)` compiles the same function with another grouping's globals for a bench
sweep (not cached: the cache keys on the name and source, which the copies share). The kernel
this one replaced (a branch per block, the redo in every look) is escape_warp_f32_blocks.py, a
bench variant.
"""
from __future__ import annotations

import types

import numpy as np

from .escape import BAILOUT2
from .escape_gpu import cuda
from .unroll_f32 import BLOCK_STEPS, BLOCKS_PER_LOOK, CACHE_KERNEL

if cuda is not None:
    from .escape_gpu import _add32_gpu as _add
    from .escape_gpu import _mul32_gpu as _mul
    from .escape_gpu import _shortcut32_gpu as _shortcut_gpu
    from .escape_gpu import _zstep32_gpu as _zstep
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


def _look_of(steps: int, blocks: int):
    """A device function running `blocks` blocks of `steps` steps on the block state: the steps
    between two looks at the warp."""
    block = np.int32(steps)

    @cuda.jit(device=True, inline="always")
    def one_block(x, y, x2, y2, sx, sy, n, ok, px, py, mi_block):
        """One block of steps; where `ok` held and the block did not escape (NaN, an overflow,
        fails the test too) its end becomes the accepted state (sx, sy, n), by selects."""
        for _ in range(block):
            x, y = _zstep(x, y, x2, y2, px, py)
            x2 = _mul(x, x)
            y2 = _mul(y, y)
        ok = ok & (_add(x2, y2) <= _B2)
        if ok:
            sx = x
            sy = y
            n = i32(n + block)
        ok = ok & (n <= mi_block)
        return x, y, x2, y2, sx, sy, n, ok

    # nested inlined calls compile into one straight run (a loop over them stays rolled, with a
    # 64-bit counter)
    look = one_block
    for _ in range(int(blocks) - 1):
        look = _then(one_block, look)
    return look


_BUILT: dict = {}


def build(steps: int, blocks: int):
    """escape_warp_kernel32 grouping `blocks` blocks of `steps` steps a look: the app's kernel at
    unroll_f32's grouping, else a copy compiled with that grouping's globals (once a process)."""
    if cuda is None:  # pragma: no cover - only where numba-cuda is broken
        return None
    key = (int(steps), int(blocks))
    if key == (BLOCK_STEPS, BLOCKS_PER_LOOK):
        return escape_warp_kernel32
    if key not in _BUILT:
        fn = escape_warp_kernel32.py_func
        scope = dict(fn.__globals__, _BLOCK=np.int32(key[0]), _LOOK=_look_of(*key))
        copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__,
                                  fn.__closure__)
        copy.__doc__ = fn.__doc__
        _BUILT[key] = cuda.jit(cache=False)(copy)
    return _BUILT[key]


if cuda is not None:
    _BLOCK = np.int32(BLOCK_STEPS)
    _LOOK = _look_of(BLOCK_STEPS, BLOCKS_PER_LOOK)

    @cuda.jit(cache=CACHE_KERNEL)
    def escape_warp_kernel32(values, counts, counter, thresh, band_row0, band_rows, xs, ys,
                             max_iter):
        """escape_warp.escape_warp_kernel for rows band_row0 .. band_row0 + band_rows of `values`,
        in float32: pixel (row r, column c) is xs[c] + i ys[r] (escape.pixel_axes). Segment s
        is row s // segs, columns 32 * (s % segs) ...; a warp's first segment is its warp number,
        later ones come from counter[0] (zero at launch), asked for one segment ahead. Escaped
        pixels get values = |z_n|^2 and counts = n, inside ones values = max_iter and counts =
        0 (the module docstring says how)."""
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
        mi_block = i32(mi - _BLOCK)      # a block starting at n <= mi_block ends by max_iter
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
                    stop = min(i32(n + _BLOCK), mi)
                    r2 = _ZERO
                    while n < stop:
                        n = i32(n + 1)
                        x, y = _zstep(x, y, x2, y2, px, py)
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
                x, y, x2, y2, sx, sy, n, ok = _LOOK(x, y, x2, y2, sx, sy, n, ok, px, py,
                                                     mi_block)
                if i32(cuda.popc(_warp.ballot_sync(_FULL_MASK, not ok))) >= need:
                    break
            if live and not ok:     # (while ok holds, x, y are sx, sy)
                live = False
                done = i32(1)
else:  # pragma: no cover - only where numba-cuda is broken
    escape_warp_kernel32 = None
