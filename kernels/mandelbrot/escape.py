"""The Mandelbrot escape-time kernels: a CUDA version and its CPU twin (colouring is colour.py's).

Both are built from ONE description of the per-pixel arithmetic (`_make_escape`), instantiated
with the multiply and add each target must use:

* CPU: plain IEEE `a * b` and `a + b`. numba's CPU backend never contracts them into FMAs
  (it emits no `contract` flag without fastmath).
* GPU: libdevice's `dmul_rn` / `dadd_rn`. NVVM contracts a plain `x * x - y * y + c` into fused
  multiply-adds by default (numba-cuda passes no `-fma=0`), which rounds differently from the CPU
  and changes escape counts near the boundary. PTX arithmetic with an explicit rounding mode is
  never fused, so the GPU performs exactly the CPU's operations, in the same order, and both give
  bit-identical iterates and therefore identical escape counts. Only `log`/`log2` in the smooth
  fraction may differ in the last bit (libdevice vs libm), which moves the smooth value by ~1e-16.
* CUDA simulator: plain Python operators, i.e. the CPU's arithmetic.

The GPU kernels keep the lanes of a warp busy. With one thread per pixel (`escape_kernel`) a warp
runs as long as its slowest pixel while the lanes whose pixels escaped early idle; in the seahorse
valley that left ~3/4 of the GPU's arithmetic unused. `escape_warp_kernel` (the default) runs a
fixed number of resident warps that take row segments of 32 pixels from an atomic counter (one
atomic per segment, asked for a segment ahead so that no lane waits on it) and iterate their
lanes' pixels 8 iterations at a time, refilling the lanes that finished, together, once enough of
them have. `escape_persistent_kernel` (the previous default) does the same per thread: each lane
takes its next pixel from the counter on its own, a chunk of iterations at a time. The escaped
pixel's |z|^2 and n are stored as they are and turned into the smooth value by a second, cheap pass
(`finish_kernel`), so the logarithms stay out of the divergent part of the loop.

The CPU twin iterates two neighbouring pixels in lockstep (`escape_pair`): one pixel's recurrence
is a chain of dependent operations that leaves a core waiting on latency, two independent chains
nearly double the throughput. Each pixel still sees exactly the operations `escape` performs.

Smooth count: with z_0 = 0, z_k = z_{k-1}^2 + c, n = the first k with |z_k|^2 > BAILOUT2, the value is
(n - 1) + f with f = 1 - log2(log|z_n|^2 / log BAILOUT2) in [0, 1). This is the usual renormalised
count n + 1 - log2(log|z_n|) shifted by a constant, so floor(value) + 1 == n exactly, escaped points
stay below max_iter, and points that never escape within max_iter iterations get max_iter exactly.
"""
from __future__ import annotations

import math
import operator

import numpy as np
from numba import njit, prange, types
from numba.core.extending import intrinsic

from ..backend import simulator_enabled

# |z|^2 escape radius (R = 256): a large radius makes the fractional part smooth across bands
BAILOUT2 = 65536.0
_INV_LOG_BAILOUT2 = 1.0 / math.log(BAILOUT2)
# keeps floor(value) == n even when |z_n| overshoots R^2 or the fraction rounds up to 1
_FRAC_MAX = 1.0 - 2.0 ** -20


def _make_escape(mul, add, jit):
    """Per-pixel escape value for c = cx + i*cy, written once for both targets; `jit` compiles
    the helpers for the target. Returns (escape, escape_pair, advance)."""

    @jit
    def shortcut(cx, cy):
        # main cardioid and period-2 bulb never escape: answer max_iter without iterating
        xq = add(cx, -0.25)
        cy2 = mul(cy, cy)
        q = add(mul(xq, xq), cy2)
        if mul(q, add(q, xq)) <= mul(0.25, cy2):
            return True
        xb = add(cx, 1.0)
        return add(mul(xb, xb), cy2) <= 0.0625

    @jit
    def smooth(r2, n):
        f = 1.0 - math.log2(math.log(r2) * _INV_LOG_BAILOUT2)
        if f < 0.0:
            f = 0.0
        elif f > _FRAC_MAX:
            f = _FRAC_MAX
        return float(n - 1) + f

    @jit
    def resume(cx, cy, x, y, x2, y2, n0, max_iter):
        """Iterate on from iterate n0 (z_n0 = x + iy, x2 = x*x, y2 = y*y)."""
        for n in range(n0 + 1, max_iter + 1):
            y = add(mul(add(x, x), y), cy)
            x = add(add(x2, -y2), cx)
            x2 = mul(x, x)
            y2 = mul(y, y)
            r2 = add(x2, y2)
            if r2 > BAILOUT2:
                return smooth(r2, n)
        return float(max_iter)

    @jit
    def escape(cx, cy, max_iter):
        if shortcut(cx, cy):
            return float(max_iter)
        return resume(cx, cy, 0.0, 0.0, 0.0, 0.0, 0, max_iter)

    @jit
    def escape_pair(ax, bx, cy, max_iter):
        """Two points of one row in lockstep: two independent dependency chains keep a CPU core
        busy where one chain waits on its own latency. Same operations per point as escape()."""
        inside = float(max_iter)
        a_in = shortcut(ax, cy)
        b_in = shortcut(bx, cy)
        if a_in or b_in:
            va = inside if a_in else resume(ax, cy, 0.0, 0.0, 0.0, 0.0, 0, max_iter)
            vb = inside if b_in else resume(bx, cy, 0.0, 0.0, 0.0, 0.0, 0, max_iter)
            return va, vb
        xa = ya = x2a = y2a = 0.0
        xb = yb = x2b = y2b = 0.0
        for n in range(1, max_iter + 1):
            ya = add(mul(add(xa, xa), ya), cy)
            xa = add(add(x2a, -y2a), ax)
            yb = add(mul(add(xb, xb), yb), cy)
            xb = add(add(x2b, -y2b), bx)
            x2a = mul(xa, xa)
            y2a = mul(ya, ya)
            x2b = mul(xb, xb)
            y2b = mul(yb, yb)
            ra = add(x2a, y2a)
            rb = add(x2b, y2b)
            if ra > BAILOUT2:
                if rb > BAILOUT2:
                    return smooth(ra, n), smooth(rb, n)
                return smooth(ra, n), resume(bx, cy, xb, yb, x2b, y2b, n, max_iter)
            if rb > BAILOUT2:
                return resume(ax, cy, xa, ya, x2a, y2a, n, max_iter), smooth(rb, n)
        return inside, inside

    @jit
    def advance(cx, cy, x, y, n0, n1, max_iter):
        """A slice of the iteration, for work too long to run in one go: from iterate n0
        (z_n0 = x + iy; n0 = 0 is the start, where the shortcut applies) up to iterate n1.
        Returns (value, x, y): the pixel's value once it is known, else -1.0 and z_n1. Each step
        is the one resume() takes (x2, y2 are recomputed from x, y exactly as the loop computes
        them), so a pixel sliced any way ends with the value escape() gives it."""
        if n0 == 0 and shortcut(cx, cy):
            return float(max_iter), x, y
        x2 = mul(x, x)
        y2 = mul(y, y)
        for n in range(n0 + 1, n1 + 1):
            y = add(mul(add(x, x), y), cy)
            x = add(add(x2, -y2), cx)
            x2 = mul(x, x)
            y2 = mul(y, y)
            r2 = add(x2, y2)
            if r2 > BAILOUT2:
                return smooth(r2, n), x, y
        if n1 >= max_iter:
            return float(max_iter), x, y
        return -1.0, x, y

    return escape, escape_pair, advance, shortcut, smooth


# ---------------------------------------------------------------- CPU twin (numba, parallel)

@njit(inline="always")
def _cpu_mul(a, b):
    return a * b


@njit(inline="always")
def _cpu_add(a, b):
    return a + b


_escape_cpu, _escape_pair_cpu, _, _, _ = _make_escape(_cpu_mul, _cpu_add, njit(inline="always"))


@njit(cache=True)
def escape_value(cx, cy, max_iter):
    """Smooth escape value of one point c = cx + i*cy (CPU)."""
    return _escape_cpu(cx, cy, max_iter)



@intrinsic
def _read_flag(typingctx, flags):
    """flags[0] of a 1-d int64 array, read afresh at every call: an atomic (monotonic) load, which
    the optimiser may not hoist out of a loop the way it would a plain read of memory that the
    loop never writes. Another thread sets the flag while the loop runs."""
    if not (isinstance(flags, types.Array) and flags.ndim == 1 and flags.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.load_atomic(ary.data, "monotonic", 8)

    return types.int64(flags), codegen


@njit(parallel=True, cache=True)
def escape_rows_cpu(values, band_row0, band_rows, stride, grid_row0, grid_col0,
                    cx, cy, step, half_w, half_h, max_iter, stop):
    """Fill values[band_row0 : band_row0 + band_rows] (a band of the buffer).

    Buffer row r is picture row grid_row0 + r. Rows are visited in the order (k * stride) % band_rows
    (stride coprime to band_rows) so that each thread's contiguous share of k mixes cheap and
    expensive parts of the picture instead of taking one half of it.

    `stop` is a one-element int64 array another thread may set to 1 while this runs (a cancel):
    every thread reads it before each pair of pixels and leaves its rows unfinished once it is
    set, so a cancel waits for at most one pair of pixels however many iterations a band holds.
    The values are then incomplete and the caller must discard them.
    """
    cols = values.shape[1]
    for k in prange(band_rows):
        br = band_row0 + (k * stride) % band_rows
        gy = float(grid_row0 + br) + 0.5 - half_h
        y = cy - gy * step
        if _read_flag(stop) != 0:
            continue
        for c in range(0, cols - 1, 2):
            if _read_flag(stop) != 0:
                break
            ax = cx + (float(grid_col0 + c) + 0.5 - half_w) * step
            bx = cx + (float(grid_col0 + c + 1) + 0.5 - half_w) * step
            va, vb = _escape_pair_cpu(ax, bx, y, max_iter)
            values[br, c] = va
            values[br, c + 1] = vb
        if cols % 2:
            c = cols - 1
            values[br, c] = _escape_cpu(cx + (float(grid_col0 + c) + 0.5 - half_w) * step, y, max_iter)


def row_stride(rows: int) -> int:
    """A step coprime to `rows` near rows/phi: spreads consecutive k over the whole band."""
    if rows <= 2:
        return 1
    s = max(1, int(rows * 0.6180339887))
    while math.gcd(s, rows) != 1:
        s += 1
    return s


# ---------------------------------------------------------------- GPU (numba-cuda)

def _sim_lane_values(value):
    """Every lane's `value`, by lane, for the CUDA simulator, which has no warp vote or shuffle:
    its thread block must be one warp of 32 threads that all call this together (the barrier is
    the block's)."""
    import threading
    t = threading.current_thread()
    store = t._manager.__dict__.setdefault("_lane_values", {})
    store[t.thread_id] = value
    t.syncthreads()
    got = [store[i] for i in range(32)]
    t.syncthreads()
    return got


def _sim_ballot(mask, pred):
    return sum(1 << i for i, v in enumerate(_sim_lane_values(bool(pred))) if v)


def _sim_shfl(mask, value, src):
    return _sim_lane_values(value)[src]


def _sim_lanemask_lt():
    import threading
    return (1 << (threading.current_thread().thread_id % 32)) - 1


GPU_IMPORT_ERROR = None
try:
    from numba import cuda
except Exception as exc:  # the CPU path must work even where numba-cuda does not import
    cuda = None
    GPU_IMPORT_ERROR = exc

if cuda is not None:
    if simulator_enabled():
        _gpu_mul, _gpu_add = operator.mul, operator.add
        # the simulator has no warp vote or shuffle: stand-ins with the same names
        import types as _pytypes
        _warp = _pytypes.SimpleNamespace(ballot_sync=_sim_ballot, shfl_sync=_sim_shfl,
                                         lanemask_lt=_sim_lanemask_lt)
    else:
        from numba.cuda import libdevice
        _gpu_mul, _gpu_add = libdevice.dmul_rn, libdevice.dadd_rn
        _warp = cuda

    _escape_gpu, _, _advance_gpu, _shortcut_gpu, _smooth_gpu = _make_escape(
        _gpu_mul, _gpu_add, cuda.jit(device=True))
    _FULL_MASK = 0xFFFFFFFF
    _STEPS = 8     # escape_warp_kernel's iterations between two looks at its warp
    _TAKE_MAX = np.uint32(0x7FFFFFFF)   # atomic.inc wraps to 0 past this: never, in practice

    @cuda.jit(cache=True)
    def escape_kernel(values, band_row0, band_rows, grid_row0, grid_col0,
                      cx, cy, step, half_w, half_h, max_iter):
        """One thread per pixel of rows band_row0 .. band_row0 + band_rows of `values`."""
        c, r = cuda.grid(2)
        if c < values.shape[1] and r < band_rows:
            br = band_row0 + r
            gx = float(grid_col0 + c) + 0.5 - half_w
            gy = float(grid_row0 + br) + 0.5 - half_h
            x = _gpu_add(cx, _gpu_mul(gx, step))
            y = _gpu_add(cy, -_gpu_mul(gy, step))
            values[br, c] = _escape_gpu(x, y, max_iter)

    @cuda.jit(cache=True)
    def escape_slice_kernel(values, zx, zy, alive, band_row0, band_rows, grid_row0, grid_col0,
                            cx, cy, step, half_w, half_h, n0, n1, max_iter):
        """escape_kernel's work cut into iteration slices, for frames whose iteration count is
        too large for one launch: iterates n0+1 .. n1 of every pixel of the band still running
        (values < 0 after the previous slice; every pixel when n0 == 0), keeping z in zx, zy.
        Adds to alive[0] the number of pixels still running after this slice (one atomic per
        block), so the host knows when to stop and how long the next slice may be."""
        c, r = cuda.grid(2)
        running = 0
        if c < values.shape[1] and r < band_rows:
            br = band_row0 + r
            if n0 == 0 or values[br, c] < 0.0:
                gx = float(grid_col0 + c) + 0.5 - half_w
                gy = float(grid_row0 + br) + 0.5 - half_h
                x = _gpu_add(cx, _gpu_mul(gx, step))
                y = _gpu_add(cy, -_gpu_mul(gy, step))
                zr = 0.0
                zi = 0.0
                if n0 > 0:
                    zr = zx[br, c]
                    zi = zy[br, c]
                v, zr, zi = _advance_gpu(x, y, zr, zi, n0, n1, max_iter)
                values[br, c] = v
                if v < 0.0:
                    zx[br, c] = zr
                    zy[br, c] = zi
                    running = 1
        count = cuda.syncthreads_count(running)
        if count > 0 and cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
            cuda.atomic.add(alive, 0, count)

    @cuda.jit(cache=True)
    def escape_persistent_kernel(values, counts, counter, grab, chunk, band_row0, band_rows,
                                 grid_row0, grid_col0, cx, cy, step, half_w, half_h,
                                 max_iter):
        """escape_kernel's pixels (rows band_row0 .. band_row0 + band_rows of `values`) by a fixed
        grid of threads that each take `grab` consecutive pixels at a time: first the run at
        grab x its thread index, then runs from the atomic counter (counter[0], zero at launch,
        counts pixels past the first runs). A pixel is iterated `chunk` iterations at a time;
        between chunks a thread whose pixel is done stores it and moves to its next one, so the
        lanes of a warp stay busy until the frame runs out of pixels.

        An escaped pixel gets values = |z_n|^2 and counts = n (finish_kernel makes the smooth
        value); one inside (max_iter reached, or the cardioid/bulb test) gets
        values = max_iter and counts = 0. Each step is the arithmetic of resume(), so the values
        equal escape_kernel's bit for bit."""
        cols = values.shape[1]
        total = band_rows * cols
        nthreads = cuda.gridsize(1)
        i = cuda.grid(1) * grab
        end = min(i + grab, total)
        fresh = True            # (r, c) must be found from i by a division
        busy = False
        r = 0
        c = 0
        px = 0.0
        py = 0.0
        x = 0.0
        y = 0.0
        x2 = 0.0
        y2 = 0.0
        r2 = 0.0
        n = 0
        while True:
            if not busy:
                while True:                         # the next pixel that needs iterating
                    if i >= end:
                        i = nthreads * grab + cuda.atomic.add(counter, 0, grab)
                        end = min(i + grab, total)
                        fresh = True
                    if i >= total:
                        break
                    if fresh:
                        r = i // cols
                        c = i - r * cols
                        fresh = False
                    gx = float(grid_col0 + c) + 0.5 - half_w
                    gy = float(grid_row0 + band_row0 + r) + 0.5 - half_h
                    px = _gpu_add(cx, _gpu_mul(gx, step))
                    py = _gpu_add(cy, -_gpu_mul(gy, step))
                    if _shortcut_gpu(px, py):
                        values[band_row0 + r, c] = float(max_iter)
                        counts[band_row0 + r, c] = 0
                        i += 1
                        c += 1
                        if c == cols:
                            c = 0
                            r += 1
                        continue
                    busy = True
                    n = 0
                    x = 0.0
                    y = 0.0
                    x2 = 0.0
                    y2 = 0.0
                    break
                if not busy:
                    break                           # no pixels left: this thread is done
            lim = min(n + chunk, max_iter)
            escaped = False
            while n < lim:
                n += 1
                y = _gpu_add(_gpu_mul(_gpu_add(x, x), y), py)
                x = _gpu_add(_gpu_add(x2, -y2), px)
                x2 = _gpu_mul(x, x)
                y2 = _gpu_mul(y, y)
                r2 = _gpu_add(x2, y2)
                if r2 > BAILOUT2:
                    escaped = True
                    break
            if escaped or n >= max_iter:
                if escaped:
                    values[band_row0 + r, c] = r2
                    counts[band_row0 + r, c] = n
                else:
                    values[band_row0 + r, c] = float(max_iter)
                    counts[band_row0 + r, c] = 0
                busy = False
                i += 1
                c += 1
                if c == cols:
                    c = 0
                    r += 1

    @cuda.jit(device=True)
    def _take(counter):
        """counter[0] += 1 (a uint32 counter), returning the old value. An atomic increment
        that wraps at _TAKE_MAX, not an atomic add: for an add (and for an increment wrapping at
        2^32, which is one) the compiler makes one lane do the warp's atomics and shuffles the
        answer to the others at once, so the warp would wait for the atomic right where it asks,
        while the answer is wanted only one segment later."""
        return cuda.atomic.inc(counter, 0, _TAKE_MAX)

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

    @cuda.jit(cache=True)
    def escape_warp_kernel(values, counts, counter, order, hist, thresh, band_row0, band_rows,
                           grid_row0, grid_col0, cx, cy, step, half_w, half_h, max_iter):
        """escape_persistent_kernel's work shared out by whole warps: the pixels of rows
        band_row0 .. band_row0 + band_rows of `values` come in row segments of up to 32 (segment s
        is row s // segs, columns 32 * (s % segs) ...), a warp's first segment is its warp number,
        later ones come from the atomic counter (counter[0], zero at launch). A warp iterates its
        lanes' pixels one iteration at a time until at least `thresh` lanes have finished (all 32
        once the segments have run out), then those lanes store their results and take the next
        pixels of the warp's segment, in lane order, together. One atomic per segment, asked for
        one segment ahead, so that no lane waits on it: its answer arrives while the warp iterates.

        With a non-empty `hist` (the sorted launch, escape_order.py) segments are runs of 32 of
        the list `order` instead (entry = band row * cols + column; sum(hist) entries), which holds
        the pixels still to do, those expected to take longest first.

        Stores what escape_persistent_kernel stores (finish_kernel makes the smooth value), with
        the same arithmetic, so the values equal escape_kernel's bit for bit."""
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
        pend = 0                # the next segment's number - nwarps, held by lane `asker`
        asker = 0
        if lane == 0:
            pend = _take(counter)
        more = seg < nseg
        sr, sc0, slen = _segment_span(seg, listed, segs, inv_segs, cols, total)
        used = 0
        live = False
        done = 0                # 2: escaped, store r2 and n; 3: inside, store max_iter
        r = 0
        c = 0
        n = 0
        px = 0.0
        py = 0.0
        x = 0.0
        y = 0.0
        x2 = 0.0
        y2 = 0.0
        r2 = 0.0
        while True:
            if done != 0:
                row = band_row0 + r
                if done == 2:
                    values[row, c] = r2
                    counts[row, c] = n
                else:
                    values[row, c] = float(max_iter)
                    counts[row, c] = 0
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
                    r, c = _segment_pixel(listed, order, sr, sc0 + used + rank, cols, inv_cols)
                    got = True
                if k < avail:
                    used += k
                else:                       # the segment runs out: on to the one asked for
                    seg = nwarps + _warp.shfl_sync(_FULL_MASK, pend, asker)
                    # the next one is asked for by an idle lane (any lane would do; a fixed one
                    # would let the compiler split the loop in two, one copy for that lane)
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
                    gx = float(grid_col0 + c) + 0.5 - half_w
                    gy = float(grid_row0 + band_row0 + r) + 0.5 - half_h
                    px = _gpu_add(cx, _gpu_mul(gx, step))
                    py = _gpu_add(cy, -_gpu_mul(gy, step))
                    if _shortcut_gpu(px, py):
                        values[band_row0 + r, c] = float(max_iter)
                        counts[band_row0 + r, c] = 0
                    else:
                        live = True
                        n = 0
                        x = 0.0
                        y = 0.0
                        x2 = 0.0
                        y2 = 0.0
            need = thresh if more else 32
            idle = int(cuda.popc(_warp.ballot_sync(_FULL_MASK, not live)))
            if idle == 32:
                if not more:
                    break
                continue
            while idle < need:
                if live:
                    if n + _STEPS <= max_iter:
                        # _STEPS iterations with no look at the warp between them
                        for _ in range(_STEPS):
                            n += 1
                            y = _gpu_add(_gpu_mul(_gpu_add(x, x), y), py)
                            x = _gpu_add(_gpu_add(x2, -y2), px)
                            x2 = _gpu_mul(x, x)
                            y2 = _gpu_mul(y, y)
                            r2 = _gpu_add(x2, y2)
                            if r2 > BAILOUT2:
                                break
                    else:
                        n += 1
                        y = _gpu_add(_gpu_mul(_gpu_add(x, x), y), py)
                        x = _gpu_add(_gpu_add(x2, -y2), px)
                        x2 = _gpu_mul(x, x)
                        y2 = _gpu_mul(y, y)
                        r2 = _gpu_add(x2, y2)
                    # r2 is the last iterate's: above the bailout only where the pixel escaped
                    if r2 > BAILOUT2:
                        live = False
                        done = 2
                    elif n >= max_iter:
                        live = False
                        done = 3
                idle = int(cuda.popc(_warp.ballot_sync(_FULL_MASK, not live)))

    @cuda.jit(cache=True)
    def finish_kernel(values, counts, band_row0, band_rows):
        """The smooth value of every escaped pixel of the band (counts > 0): from |z_n|^2 and n."""
        c, r = cuda.grid(2)
        if c < values.shape[1] and r < band_rows:
            n = counts[band_row0 + r, c]
            if n > 0:
                values[band_row0 + r, c] = _smooth_gpu(values[band_row0 + r, c], n)

    @cuda.jit(cache=True)
    def zero_kernel(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = 0
else:  # pragma: no cover - only where numba-cuda is broken
    escape_kernel = escape_slice_kernel = escape_persistent_kernel = finish_kernel = None
    escape_warp_kernel = None
    zero_kernel = None


def shortcut_mask(cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    """Where the cardioid/bulb test answers without iterating (NumPy, same formula, for counting)."""
    xq = cx - 0.25
    cy2 = cy * cy
    q = xq * xq + cy2
    card = q * (q + xq) <= 0.25 * cy2
    xb = cx + 1.0
    return card | (xb * xb + cy2 <= 0.0625)
