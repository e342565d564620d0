"""One point's escape by brute force in MPFR, compiled (MPFR's C API from numba, as mpfr_engine.py):
the truth for deep pixels that perturbation in doubles cannot place (guard.py) and the audit's
yardstick (audit.py). exact.py is the same iteration in gmpy2's Python, ~10x slower.

A pixel whose count hangs on its point to 2^-1000 of a pixel or finer (it lies that close to a
minibrot or a filament) needs the point and the iteration at that many bits: `settled_value`
grows the precision until two precisions give the same count. The loop holds no GIL, so
`settled_values` runs pixels on all the host's cores with threads. Up to FIXED_UP_TO_BITS the
iteration runs in the reference's fixed-point engine on GMP (fixed_engine.py), which is faster
there; its precision is as absolute as the pixel's offsets need.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from ..loops.escape import BAILOUT2
from ..numbers import mpfr_lib as M
from ..reference.fixed_engine import FIXED_UP_TO_BITS, FixedEngine
from .exact import smooth_value

# rows of the numbers: z, c, the squares and a scratch
X, Y, CX, CY, X2, Y2, T = range(7)
# a count is confirmed at CHECK_BITS more bits (a count still hanging on the last bits moves
# there: the iteration is that sensitive), then the precision grows GROWTH-fold at most
# MAX_GROWTHS times (1e227 frames: 864, 928, then 1,408 .. 4,800 bits)
CHECK_BITS = 64
GROWTH = 1.5
MAX_GROWTHS = 4


# iterations between two cancellation checks (~0.1 s at 3,000 bits)
CHUNK = 1 << 16


@njit(inline="always")
def mpfr_step(x, y, cx, cy, x2, y2, t, rn):
    """z ← z² + c in MPFR (z = x + iy, c = cx + i·cy), 2xy as (x + y)² − x² − y² from the
    squares x² and y² the real part needs anyway; x2, y2, t are scratch."""
    M.sqr(x2, x, rn)
    M.sqr(y2, y, rn)
    M.add(t, x, y, rn)
    M.sqr(t, t, rn)
    M.sub(t, t, x2, rn)
    M.sub(t, t, y2, rn)
    M.add(y, t, cy, rn)
    M.sub(x, x2, y2, rn)
    M.add(x, x, cx, rn)


@njit(nogil=True, cache=True)
def _escape(a, first, last):
    """(n, |z_n|^2) at the first n in first .. last with |z_n|^2 > BAILOUT2, or (last + 1, 0)
    while bounded; z (z_{first - 1}) and c at rows X, Y, CX, CY of the numbers at addresses `a`."""
    x, y, cx, cy, x2, y2, t = a[X], a[Y], a[CX], a[CY], a[X2], a[Y2], a[T]
    rn = M.RNDN
    for n in range(first, last + 1):
        mpfr_step(x, y, cx, cy, x2, y2, t, rn)
        zr = M.get_d(x, rn)
        zi = M.get_d(y, rn)
        r2 = zr * zr + zi * zi
        if r2 > BAILOUT2:
            return n, r2
    return last + 1, 0.0


def escape(cre_hex: str, cim_hex: str, bits: int, max_iter: int, cancel=None) -> tuple[int, float]:
    """(n, value) of c = cre + i*cim (MPFR hex strings) iterated at `bits`: n the escape
    iteration (max_iter + 1 while bounded), value the smooth count as the kernels give it.
    cancel.check() runs every CHUNK iterations. Up to FIXED_UP_TO_BITS in the reference's
    fixed-point engine (1.3-1.7x MPFR's speed at 5e227's 900-1,400 bits), above in MPFR."""
    if int(bits) <= FIXED_UP_TO_BITS:
        return _escape_fixed(cre_hex, cim_hex, bits, int(max_iter), cancel)
    nums = M.MpfrNumbers(7, int(bits))
    nums.set_hex(CX, cre_hex)
    nums.set_hex(CY, cim_hex)
    nums.set_hex(X, "0")
    nums.set_hex(Y, "0")
    first, max_iter = 1, int(max_iter)
    while first <= max_iter:
        last = min(max_iter, first + CHUNK - 1)
        n, r2 = _escape(nums.addr, first, last)
        if n <= last:
            return n, smooth_value(r2, n)
        first = last + 1
        if cancel is not None:
            cancel.check()
    return max_iter + 1, float(max_iter)


def _escape_fixed(cre_hex, cim_hex, bits, max_iter, cancel):
    """escape() by FixedEngine: its points as doubles, the escaping one last (its |z|^2 the
    smooth value's, as the MPFR loop's get_d pair gives it)."""
    engine = FixedEngine(cre_hex, cim_hex, int(bits))
    z = np.zeros(CHUNK, dtype=np.complex128)
    tk = np.zeros(CHUNK, dtype=np.int64)
    tm = np.zeros((CHUNK, 2), dtype=np.float64)
    te = np.zeros(CHUNK, dtype=np.int32)
    done = 0
    while done < max_iter:
        made, _, escaped = engine.step(min(CHUNK, max_iter - done), z, tk, tm, te)
        done += made
        if escaped:
            last = z[made - 1]
            return done, smooth_value(last.real * last.real + last.imag * last.imag, done)
        if cancel is not None:
            cancel.check()
    return max_iter + 1, float(max_iter)


def point_hex(request, row: int, col: int, bits: int) -> tuple[str, str]:
    """Pixel (row, col) of `request`'s picture (exact.pixel_point) at `bits`, as hex strings."""
    from .exact import pixel_point
    from ..reference.reference import gmpy2_module
    gmpy2 = gmpy2_module()
    with gmpy2.context(precision=int(bits)):
        cre, cim = pixel_point(request, row, col)
        return format(cre, "a"), format(cim, "a")


def precisions(bits: int):
    """The precisions settled_value tries from `bits` on."""
    yield bits
    bits += CHECK_BITS
    yield bits
    for _ in range(MAX_GROWTHS):
        bits = -(-int(bits * GROWTH) // 64) * 64
        yield bits


def settled_value(request, row: int, col: int, bits: int | None = None,
                  cancel=None) -> tuple[float, int, bool]:
    """(value, bits, settled) of pixel (row, col): brute force from `bits` (default the request's
    precision + 32, exact.py's) at each of `precisions` until two in a row agree on the escape
    iteration (settled; the last answer stands, not settled, when none do)."""
    prev = None
    for b in precisions(int(bits or request.precision + 32)):
        n, v = escape(*point_hex(request, row, col, b), b, request.max_iter, cancel)
        if prev is not None and prev == n:
            return v, b, True
        prev = n
    return v, b, False


def workers() -> int:
    """Threads for the host's MPFR pixels: one per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:     # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def settled_values(request, pixels, bits: int | None = None, threads: int | None = None,
                   cancel=None):
    """settled_value of each (row, col) in `pixels`, on `threads` threads (default every core):
    a list of (value, bits, settled) in the order given. A cancel raised in one thread stops the
    others at their next check and comes out here."""
    pixels = [(int(r), int(c)) for r, c in pixels]
    if not pixels:
        return []
    n = min(len(pixels), threads or workers())
    if n == 1:
        return [settled_value(request, r, c, bits, cancel) for r, c in pixels]
    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(lambda p: settled_value(request, p[0], p[1], bits, cancel), pixels))


def escapes_at(request, pixels, bits: int, threads: int | None = None):
    """(n, value) of each pixel at `bits` alone (no doubling), on all cores."""
    pixels = [(int(r), int(c)) for r, c in pixels]

    def one(p):
        return escape(*point_hex(request, p[0], p[1], bits), bits, request.max_iter)
    with ThreadPoolExecutor(min(max(1, len(pixels)), threads or workers())) as pool:
        return list(pool.map(one, pixels))



