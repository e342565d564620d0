"""The app's GPU escape launches: whole warps share out the frame and refill their idle lanes
together, one loop per number type; `warp_kernel(formula, number_type, counting)` chooses a kernel.

With one thread per pixel a warp runs as long as its slowest pixel while the lanes whose pixels
escaped early idle. Here a fixed number of resident warps take row segments of 32 pixels from an
atomic counter (one atomic per segment, asked for a segment ahead so that no lane waits on it) and
iterate their lanes' pixels a few iterations at a time, refilling the lanes that finished,
together, once enough of them have. An escaped pixel's |z|^2 and n are stored as they are;
escape_gpu.finish_kernel turns them into the smooth value. The arithmetic is escape.py's, so the
values equal every other launch's and the CPU twin's bit for bit. Burning Ship and the
lane-efficiency overlay get loops of their own as the module loads (`_make_warp_loop`), so no loop
asks which it runs and the Mandelbrot kernels compile as they did before there were others.
"""
from __future__ import annotations

import numpy as np

from ..requests import formulas
from .escape import BAILOUT2
from .escape_gpu import cuda
from .formula_twins import twin


if cuda is not None:
    from .escape_gpu import _FULL_MASK, _point_gpu, _shortcut_gpu, _shortcut_ship_gpu
    from .escape_gpu import _step_gpu, _step_ship_gpu, _take, _warp
    _STEPS = 8     # escape_warp_kernel's iterations between two looks at its warp

    @cuda.jit(device=True)
    def _segment_row(seg, segs, inv_segs):
        """seg // segs by a float32 estimate, corrected (the 64-bit division is a long call)."""
        r = np.int64(np.float32(seg) * inv_segs)
        while r * segs > seg:
            r -= 1
        while (r + 1) * segs <= seg:
            r += 1
        return r

    @cuda.jit(device=True)
    def _segment_span(seg, listed, segs, inv_segs, cols, total):
        """(row, first column, length) of row segment `seg`; for a list, (0, first entry, length)."""
        if listed:
            return 0, seg * 32, min(32, total - seg * 32)
        sr = _segment_row(seg, segs, inv_segs)
        sc0 = (seg - sr * segs) * 32
        return sr, sc0, min(32, cols - sc0)

    @cuda.jit(device=True)
    def _segment_pixel(listed, order, sr, pos, cols, inv_cols):
        """(band row, column) of the pixel at `pos` of a segment (a column, or a list entry)."""
        if not listed:
            return sr, pos
        p = order[pos]
        r = int(float(p) * inv_cols)        # the integer division is a long call; exact below
        while r * cols > p:
            r -= 1
        while (r + 1) * cols <= p:
            r += 1
        return r, p - r * cols

    # _warp_max_bodies halves its way to the most bodies below _STEPS: exact for a power of two
    assert _STEPS & (_STEPS - 1) == 0

    @cuda.jit(device=True)
    def _warp_max_bodies(t, single):
        """Bodies the warp issued in this pass: the most any lane ran in the _STEPS loop (t),
        plus one when any lane took the single step. Votes only: uniform over the warp. The two
        common votes are cast before either is looked at, so the warp waits on them once; a pass
        where no lane ran all _STEPS finds the most by halving (three votes for _STEPS = 8)."""
        full = _warp.ballot_sync(_FULL_MASK, t >= _STEPS)
        extra = 0
        if _warp.ballot_sync(_FULL_MASK, single) != 0:
            extra = 1
        most = _STEPS
        if full == 0:
            most = 0
            half = _STEPS // 2
            while half > 0:
                if _warp.ballot_sync(_FULL_MASK, t >= most + half) != 0:
                    most += half
                half //= 2
        return most + extra

    def _make_warp_loop(counting: bool, iterate, shortcut):
        """The warp launch's loop, written once. `iterate` and `shortcut`: the formula's step and
        cardioid test (escape._make_escape). `counting`, a constant of the compile (the branches
        it guards are gone where it is False, slots and lanes never touched), adds the
        lane-efficiency overlay's accounting: slots[row, col] = the lane-iterations of every pixel
        (int32), lanes[0] += its warp's, one atomic per warp. A warp issues the iteration body in
        step: in one pass each live lane runs up to _STEPS bodies (fewer where its pixel escapes)
        or, near max_iter, one; the warp issues the most of them, +1 where any lane took a single
        step, each occupying all 32 lanes. Every lane keeps the warp's count W of bodies issued
        (from votes); a pixel's lane-iterations are W when its lane stores it minus W when its
        lane took it (its iterations and those its lane idled through until the refill), the
        frame's 32 W summed over the warps (lanes left without a pixel at the end included).
        Not the roofline's static model (frame_work.py): docs/notes/performance-history.md,
        "Overlays"."""

        @cuda.jit(device=True)
        def loop(values, counts, counter, order, hist, thresh, band_row0, band_rows, grid_row0,
                 grid_col0, cx, cy, step, half_w, half_h, max_iter, slots, lanes):
            cols = values.shape[1]
            listed = hist.shape[0] > 0
            inv_cols = 1.0 / float(cols)
            if listed:
                total = 0
                for k in range(hist.shape[0]):
                    total += hist[k]
                segs = 1
                nseg = (total + 31) // 32
            else:
                total = band_rows * cols
                segs = (cols + 31) // 32
                nseg = band_rows * segs
            lane = cuda.laneid
            lt = _warp.lanemask_lt()
            nwarps = cuda.gridsize(1) // 32
            seg = cuda.grid(1) // 32
            inv_segs = np.float32(1.0) / np.float32(segs)
            pend = asker = 0        # pend: the next segment's number - nwarps, held by `asker`
            if lane == 0:
                pend = _take(counter)
            more = seg < nseg
            sr, sc0, slen = _segment_span(seg, listed, segs, inv_segs, cols, total)
            used = 0
            live = False
            done = 0                # 2: escaped, store r2 and n; 3: inside, store max_iter
            r = c = n = 0
            px = py = x = y = x2 = y2 = r2 = 0.0
            wsteps = 0              # (counting) bodies this warp issued so far (uniform)
            start = 0               # (counting) wsteps when this lane took its pixel
            while True:
                if done != 0:
                    row = band_row0 + r
                    if done == 2:
                        values[row, c] = r2
                        counts[row, c] = n
                    else:
                        values[row, c] = float(max_iter)
                        counts[row, c] = 0
                    if counting:
                        slots[row, c] = wsteps - start
                    done = 0
                while more:                     # pixels for the idle lanes, in lane order
                    mask = _warp.ballot_sync(_FULL_MASK, not live)
                    if mask == 0:
                        break
                    k = int(cuda.popc(mask))
                    rank = int(cuda.popc(mask & lt))
                    avail = slen - used
                    got = False
                    if not live and rank < avail:
                        r, c = _segment_pixel(listed, order, sr, sc0 + used + rank, cols,
                                              inv_cols)
                        got = True
                    if k < avail:
                        used += k
                    else:                       # the segment runs out: on to the one asked for
                        seg = nwarps + _warp.shfl_sync(_FULL_MASK, pend, asker)
                        # the next one is asked for by an idle lane (any lane would do; a fixed
                        # one would let the compiler split the loop in two, one copy for it)
                        asker = cuda.ffs(mask) - 1
                        if lane == asker:
                            pend = _take(counter)   # nothing may use it here: no wait
                        more = seg < nseg
                        sr, sc0, slen = _segment_span(seg, listed, segs, inv_segs, cols, total)
                        used = min(k - avail, slen)
                        if more and not live and rank >= avail and rank - avail < slen:
                            r, c = _segment_pixel(listed, order, sr, sc0 + rank - avail, cols,
                                                  inv_cols)
                            got = True
                    if got:
                        px, py = _point_gpu(r, c, grid_row0 + band_row0, grid_col0, cx, cy, step,
                                            half_w, half_h)
                        if shortcut(px, py):
                            values[band_row0 + r, c] = float(max_iter)
                            counts[band_row0 + r, c] = 0
                            if counting:
                                slots[band_row0 + r, c] = 0
                        else:
                            live = True
                            if counting:
                                start = wsteps
                            n = 0
                            x = y = x2 = y2 = 0.0
                need = thresh if more else 32
                idle = int(cuda.popc(_warp.ballot_sync(_FULL_MASK, not live)))
                if idle == 32:
                    if not more:
                        break
                    continue
                while idle < need:
                    t = 0
                    single = False
                    if live:
                        if n + _STEPS <= max_iter:
                            n0 = n      # the loop's own counter only: t from n after it
                            # _STEPS iterations with no look at the warp between them
                            for _ in range(_STEPS):
                                n += 1
                                x, y, x2, y2, r2 = iterate(x, y, x2, y2, px, py)
                                if r2 > BAILOUT2:
                                    break
                            t = n - n0
                        else:
                            n += 1
                            single = True
                            x, y, x2, y2, r2 = iterate(x, y, x2, y2, px, py)
                        # r2 is the last iterate's: above the bailout only where it escaped
                        if r2 > BAILOUT2:
                            live = False
                            done = 2
                        elif n >= max_iter:
                            live = False
                            done = 3
                    if counting:
                        wsteps += _warp_max_bodies(t, single)
                    idle = int(cuda.popc(_warp.ballot_sync(_FULL_MASK, not live)))
            if counting and lane == 0:
                cuda.atomic.add(lanes, 0, 32 * wsteps)
        return loop

    _plain_loop = _make_warp_loop(False, _step_gpu, _shortcut_gpu)
    _counting_loop = _make_warp_loop(True, _step_gpu, _shortcut_gpu)

    @cuda.jit(cache=True)
    def escape_warp_kernel(values, counts, counter, order, hist, thresh, band_row0, band_rows,
                           grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter):
        """The float64 pass over rows band_row0 .. band_row0 + band_rows of `values`: segment s is
        row s // segs, columns 32 * (s % segs) ...; a warp's first segment is its warp number,
        later ones come from counter[0] (zero at launch). A warp iterates its lanes' pixels until
        at least `thresh` lanes have finished (all 32 once the segments have run out), then those
        lanes store their results and take the segment's next pixels, in lane order, together.
        With a non-empty `hist` (the sorted launch, escape_variants.py) segments are runs of 32 of
        the list `order` instead (entry = band row * cols + column; sum(hist) entries), the pixels
        still to do, those expected to take longest first. An escaped pixel gets values = |z_n|^2
        and counts = n, one inside (max_iter reached, or the cardioid/bulb test) values = max_iter
        and counts = 0."""
        _plain_loop(values, counts, counter, order, hist, thresh, band_row0, band_rows,
                    grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter, counts, counter)

    @cuda.jit(cache=True)
    def escape_warp_overlay_kernel(values, counts, counter, order, hist, thresh, band_row0,
                                   band_rows, grid_row0, grid_col0, cx, cy, step, half_w, half_h,
                                   max_iter, slots, lanes):
        """escape_warp_kernel (same arguments first, same values and counts), which also writes
        slots[row, col] = the lane-iterations of every pixel it runs (int32) and adds its warp's
        lane-iterations to lanes[0] (int64), one atomic per warp (_make_warp_loop says how they
        are counted)."""
        _counting_loop(values, counts, counter, order, hist, thresh, band_row0, band_rows,
                       grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter, slots, lanes)

    # Burning Ship's warp launch: escape_warp_kernel's code over its own loop (formula_twins.py);
    # it has no overlay twin (overlays are drawn for the Mandelbrot set only)
    escape_warp_kernel_ship = cuda.jit(cache=True)(twin(
        escape_warp_kernel.py_func, "escape_warp_kernel_ship",
        _plain_loop=_make_warp_loop(False, _step_ship_gpu, _shortcut_ship_gpu)))
else:  # pragma: no cover - only where numba-cuda is broken
    escape_warp_kernel = escape_warp_overlay_kernel = escape_warp_kernel_ship = None


# ---------------------------------------------------------------- float32

# escape_warp_kernel's scheme with escape.py's float32 arithmetic and the pixel coordinates read
# from two float32 arrays (escape.pixel_axes): no float64 arithmetic at all. The steps run in blocks
# of BLOCK_STEPS with one escape test each, BLOCKS_PER_LOOK blocks between two looks at the warp:
# float32 issues one operation a cycle, so every test, branch and counter update costs as much as
# an iteration's multiply. Past the bailout |z| only grows (|z| > 256 >= |c|, or |c| > 256 escaped
# at the first step), so a block's last |z|^2 is above the bailout, or overflowed to inf or NaN,
# exactly when one of its steps escaped; the exact count comes from single steps redone from the
# block's start.
#
# - The look's blocks run without a branch: after each block a lane's flag `ok` (its state is a
#   whole block past the last accepted one, not escaped, and a whole block fits before max_iter) is
#   folded with the block's escape test, and the state the next block starts from (sx, sy, n) is
#   kept only while `ok` holds, by selects. A lane that left the blocks keeps computing with the
#   others (in a warp it would wait for them anyway). The blocks are nested inlined calls
#   (`_look_of`), so they compile into one straight run.
# - The settling (single steps from the last accepted block, at most one block's) is deferred to
#   the warp's next refill: one divergent loop per refill instead of one per look.
# - Segment and pixel indices are int32, and unsigned where they index arrays (no 64-bit
#   arithmetic, no negative-index wraparound code).
#
# The kernel reads its grouping from this module's globals (`_BLOCK`, `_LOOK`), so a bench can
# compile it at another (escape_variants.warp_kernel32).
# The grouping, chosen by tools/f32_block_sweep.py (docs/notes/performance-history.md):
BLOCK_STEPS, BLOCKS_PER_LOOK = 16, 4

if cuda is not None:
    from .escape_gpu import _add32_gpu as _add
    from .escape_gpu import _mul32_gpu as _mul
    from .escape_gpu import _shortcut32_gpu as _shortcut32
    from .escape_gpu import _step32_gpu as _step32
    from .escape_gpu import _zstep32_gpu as _zstep

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


if cuda is not None:
    _BLOCK = np.int32(BLOCK_STEPS)
    _LOOK = _look_of(BLOCK_STEPS, BLOCKS_PER_LOOK)

    @cuda.jit(cache=True)
    def escape_warp_kernel32(values, counts, counter, thresh, band_row0, band_rows, xs, ys,
                             max_iter):
        """escape_warp_kernel in float32, in picture order (no list): pixel (row r, column c) is
        xs[c] + i ys[r] (escape.pixel_axes); the comment above says how it steps."""
        cols = i32(values.shape[1])
        segs = i32((cols + 31) // 32)
        nseg = i32(band_rows * segs)
        row0 = i32(band_row0)
        lane = i32(cuda.laneid)
        lt = _warp.lanemask_lt()
        nwarps = i32(cuda.gridsize(1) // 32)
        seg = i32(cuda.grid(1) // 32)
        inv_segs = np.float32(1.0) / np.float32(segs)
        pend = asker = i32(0)   # pend: the next segment's number - nwarps, held by `asker`
        if lane == 0:
            pend = i32(_take(counter))
        more = seg < nseg
        sr, sc0, slen = _segment_span32(seg, segs, inv_segs, cols)
        used = i32(0)
        live = False
        done = i32(0)       # 1: settle from (sx, sy, n), then 2: escaped, 3: inside
        r = c = n = i32(0)
        mi = i32(max_iter)
        mi_block = i32(mi - _BLOCK)      # a block starting at n <= mi_block ends by max_iter
        thresh32 = i32(thresh)
        mi_value = np.float64(max_iter)
        px = py = x = y = x2 = y2 = sx = sy = r2 = _ZERO
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
                        x, y, x2, y2, r2 = _step32(x, y, x2, y2, px, py)
                        if r2 > _B2:
                            break
                    if r2 > _B2:
                        done = i32(2)
                    elif n >= mi:
                        done = i32(3)
                    else:           # never (a block escapes only where one of its steps does):
                        live = True     # the pixel would carry on
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
                    if _shortcut32(px, py):
                        values[row, col] = mi_value
                        counts[row, col] = 0
                    else:
                        live = True
                        n = i32(0)
                        x = y = x2 = y2 = _ZERO
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


def warp_kernel(formula: str, number_type: str = "float64", counting: bool = False):
    """The warp launch's kernel of `formula` (formulas.py's names) in `number_type`, counting the
    lane-efficiency overlay where `counting` (overlays and float32 draw the Mandelbrot set only)."""
    key = (formulas.check(formula), number_type, bool(counting))
    kernels = {(formulas.MANDELBROT, "float64", False): escape_warp_kernel,
               (formulas.MANDELBROT, "float64", True): escape_warp_overlay_kernel,
               (formulas.BURNING_SHIP, "float64", False): escape_warp_kernel_ship,
               (formulas.MANDELBROT, "float32", False): escape_warp_kernel32}
    if key not in kernels:
        raise ValueError(f"no {number_type} warp kernel of the {formula} formula"
                         + (" with the overlay's counting" if counting else ""))
    return kernels[key]
