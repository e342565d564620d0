"""The float32 warp kernel the app ran before escape_warp.py's float32 one, kept as a bench variant
(GPU_EXPLORER_F32_KERNEL=blocks; "blocks:16,4" in tools/f32_block_sweep.py): the same scheme,
arithmetic, counts and values, with a branch after every block of steps and an escaped block's
redo (single steps from its saved z) inside every look at the warp. Its grouping is compiled in
(unroll_f32's, or GPU_EXPLORER_F32_BLOCK's, which turns numba's disk cache off).
"""
from __future__ import annotations

import numpy as np

from .escape import BAILOUT2
from .escape_gpu import cuda
from .unroll_f32 import BLOCK_STEPS, BLOCKS_PER_LOOK, CACHE_KERNEL

if cuda is not None:
    from .escape_gpu import _add32_gpu as _add
    from .escape_gpu import _mul32_gpu as _mul
    from .escape_gpu import _shortcut32_gpu as _shortcut_gpu
    from .escape_gpu import _zstep32_gpu as _zstep
    from .escape_warp import _FULL_MASK, _segment_span, _take, _warp

    _B2 = np.float32(BAILOUT2)
    _ZERO = np.float32(0.0)
    i32 = np.int32
    _BLOCK = i32(BLOCK_STEPS)
    _BLOCKS = i32(BLOCKS_PER_LOOK)
    _SPAN = i32(BLOCK_STEPS * BLOCKS_PER_LOOK)

    @cuda.jit(cache=CACHE_KERNEL)
    def escape_warp_kernel32_blocks(values, counts, counter, thresh, band_row0, band_rows, xs, ys,
                             max_iter):
        """escape_warp_kernel for rows band_row0 .. band_row0 + band_rows of `values`, in float32:
        pixel (row r, column c) is xs[c] + i ys[r] (escape.pixel_axes). Segment s is row
        s // segs, columns 32 * (s % segs) ...; a warp's first segment is its warp number, later
        ones come from counter[0] (zero at launch), asked for one segment ahead. Escaped pixels
        get values = |z_n|^2 and counts = n, inside ones values = max_iter and counts = 0."""
        cols = values.shape[1]
        segs = (cols + 31) // 32
        nseg = band_rows * segs
        lane = cuda.laneid
        lt = _warp.lanemask_lt()
        nwarps = cuda.gridsize(1) // 32
        seg = cuda.grid(1) // 32
        inv_segs = np.float32(1.0) / np.float32(segs)
        pend = 0
        asker = 0
        if lane == 0:
            pend = _take(counter)
        more = seg < nseg
        sr, sc0, slen = _segment_span(seg, False, segs, inv_segs, cols, 0)
        used = 0
        live = False
        done = i32(0)           # 2: escaped, store r2 and n; 3: inside, store max_iter
        r = 0
        c = 0
        n = i32(0)
        mi = i32(max_iter)              # counts are int32: so is max_iter
        mi_span = i32(mi - _SPAN)       # the last n with room for _BLOCKS whole blocks
        thresh32 = i32(thresh)
        px = _ZERO
        py = _ZERO
        x = _ZERO
        y = _ZERO
        x2 = _ZERO
        y2 = _ZERO
        r2 = _ZERO
        while True:
            if done != 0:
                row = band_row0 + r
                if done == 2:
                    values[row, c] = r2
                    counts[row, c] = n
                else:
                    values[row, c] = max_iter
                    counts[row, c] = 0
                done = i32(0)
            while more:                     # pixels for the idle lanes, in lane order
                mask = _warp.ballot_sync(_FULL_MASK, not live)
                if mask == 0:
                    break
                k = int(cuda.popc(mask))
                rank = int(cuda.popc(mask & lt))
                avail = slen - used
                got = False
                if not live and rank < avail:
                    r, c = sr, sc0 + used + rank
                    got = True
                if k < avail:
                    used += k
                else:                       # the segment runs out: on to the one asked for
                    seg = nwarps + _warp.shfl_sync(_FULL_MASK, pend, asker)
                    asker = cuda.ffs(mask) - 1
                    if lane == asker:
                        pend = _take(counter)
                    more = seg < nseg
                    sr, sc0, slen = _segment_span(seg, False, segs, inv_segs, cols, 0)
                    used = min(k - avail, slen)
                    if more and not live and rank >= avail and rank - avail < slen:
                        r, c = sr, sc0 + rank - avail
                        got = True
                if got:
                    px = xs[c]
                    py = ys[band_row0 + r]
                    if _shortcut_gpu(px, py):
                        values[band_row0 + r, c] = max_iter
                        counts[band_row0 + r, c] = 0
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
            while idle < need:
                if live:
                    # _BLOCKS blocks of _BLOCK steps with one escape test each, then single
                    # steps: the redo of an escaped block from its saved z, or, near max_iter,
                    # all the steps left; int32 counts (64-bit ones take two instructions)
                    stop = mi
                    if n <= mi_span:
                        stop = n                    # no single steps after whole blocks
                        for _ in range(_BLOCKS):
                            sx = x
                            sy = y
                            for _ in range(_BLOCK):
                                x, y = _zstep(x, y, x2, y2, px, py)
                                x2 = _mul(x, x)
                                y2 = _mul(y, y)
                            if not _add(x2, y2) <= _B2:     # escaped (NaN: overflowed)
                                x = sx
                                y = sy
                                x2 = _mul(x, x)
                                y2 = _mul(y, y)
                                stop = i32(n + _BLOCK)
                                break
                            n = i32(n + _BLOCK)
                            stop = n
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
                        live = False
                        done = i32(2)
                    elif n >= mi:
                        live = False
                        done = i32(3)
                idle = i32(cuda.popc(_warp.ballot_sync(_FULL_MASK, not live)))
else:  # pragma: no cover - only where numba-cuda is broken
    escape_warp_kernel32_blocks = None
