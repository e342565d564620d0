"""Burning Ship nuclei, as kernels/mandelbrot/benches/locations.py's places were found.

    python3 tools/ship_nucleus.py 85 --bits 800          # SHIP_85, SHIP_252 (period 252, 1,300 bits)
    python3 tools/ship_nucleus.py --chain 1e-100         # SHIP_447
    python3 tools/ship_nucleus.py --chain 1e-301 --mini  # SHIP_662

A period: the real nucleus of that period near -2 (z_p(c) = 0 for x -> x^2 + c, which is also the
Burning Ship's map on the real axis) and its size by the Mandelbrot's estimate. --chain DEPTH: off
the axis, from the period-11 nucleus near -1.7619 - 0.0288i, each next nucleus by Newton's method
in two real dimensions (the ship's map is a polynomial in each quadrant: its Jacobian is
2[[x, -y], [s y, s x]], s the sign of xy) from a point a fraction of the last one's size away,
its period the first n where that point's small ball maps over 0; until the size 1/|dz_p/dc| is
below DEPTH. That is the scale of the nucleus's neighbourhood, not of its mini-ship: the cycle
stays attracting only while |z_p| < 1/(2 lambda), lambda = prod_{k<p} 2|z_k| (each step's
Jacobian is 2|z| times an orthogonal matrix), so the mini-ship is ~1/(lambda |dz_p/dc|) across,
about the square of the other (the Mandelbrot's 1/(beta lambda^2)); --mini: until that is below
DEPTH. Each link prints both.
"""
from __future__ import annotations

import argparse
import math


def nucleus(period: int, bits: int):
    """(c, size) as mpfr: Newton's method from -2 + pi^2 / 4^period."""
    import gmpy2
    from gmpy2 import mpfr
    with gmpy2.context(precision=bits):
        c = mpfr(-2) + mpfr(math.pi ** 2) / mpfr(4) ** period
        for _ in range(200):
            z = dz = mpfr(0)
            for _k in range(period):
                dz = 2 * z * dz + 1
                z = z * z + c
            step = z / dz
            c -= step
            if step == 0 or abs(step) < mpfr(2) ** (8 - bits):
                break
        zs, z = [], mpfr(0)
        for _k in range(period):
            z = z * z + c
            zs.append(z)
        if min(abs(v) for v in zs[:-1]) < abs(zs[-1]) * 2 ** 16:
            raise SystemExit(f"Newton's method found a nucleus of a smaller period than {period}")
        lam, beta = mpfr(1), mpfr(1)
        for v in zs[:-1]:
            lam *= 2 * v
            beta += 1 / lam
        return c, abs(1 / (beta * lam * lam))


def _step(x, y, cx, cy, d):
    """One ship step of z = x + iy and of D = dz/dc (a, b, c, d): (x, y, D)."""
    a, b, c, e = d
    s = 1 if x * y >= 0 else -1
    d = (2 * x * a - 2 * y * c + 1, 2 * x * b - 2 * y * e, 2 * s * (y * a + x * c),
         2 * s * (y * b + x * e) + 1)
    return x * x - y * y + cx, 2 * abs(x * y) + cy, d


def ball_period(cx, cy, r, max_period, bits):
    """The first n where the ball of radius r around c maps over 0 (linearly), or None."""
    import gmpy2
    from gmpy2 import mpfr
    with gmpy2.context(precision=bits):
        x = y = mpfr(0)
        d = (mpfr(0),) * 4
        for n in range(1, max_period + 1):
            x, y, d = _step(x, y, cx, cy, d)
            if x * x + y * y > 1e6:
                return None
            if max(abs(x), abs(y)) < r * max(abs(d[0]) + abs(d[1]), abs(d[2]) + abs(d[3])):
                return n
    return None


def newton2d(cx, cy, period: int, bits: int, steps: int = 100):
    """(cx, cy, Newton steps, |dz/dc|) of the ship's nucleus of `period` from c."""
    import gmpy2
    from gmpy2 import mpfr
    with gmpy2.context(precision=bits):
        cx, cy = mpfr(cx), mpfr(cy)
        for k in range(steps):
            x = y = mpfr(0)
            d = (mpfr(0),) * 4
            for _n in range(period):
                x, y, d = _step(x, y, cx, cy, d)
            a, b, c, e = d
            det = a * e - b * c
            dx, dy = (e * x - b * y) / det, (a * y - c * x) / det
            cx, cy = cx - dx, cy - dy
            if max(abs(dx), abs(dy)) < mpfr(2) ** (10 - bits):
                break
        return cx, cy, k, float(max(abs(a) + abs(b), abs(c) + abs(e)))


def mini_size(cx, cy, period: int, bits: int) -> float:
    """log10 of the mini-ship's size ~1/(lambda |dz_p/dc|) at the nucleus (see the docstring)."""
    import gmpy2
    from gmpy2 import mpfr
    with gmpy2.context(precision=bits):
        x = y = mpfr(0)
        d = (mpfr(0),) * 4
        lam = mpfr(1)
        for n in range(1, period + 1):
            x, y, d = _step(x, y, cx, cy, d)
            if n < period:
                lam *= 2 * gmpy2.sqrt(x * x + y * y)
        a, b, c, e = d
        return -float(gmpy2.log10(lam * max(abs(a) + abs(b), abs(c) + abs(e))))


def chain(depth: float, mini: bool = False):
    """The chain of nuclei (see the docstring); prints each, returns the last (period, cx, cy,
    bits)."""
    import gmpy2
    cx, cy, _, norm = newton2d("-1.7619367329130462", "-0.028799112075389724", 11, 300)
    size, period, bits = 1 / norm, 11, 300
    # the mini-ship's digits: twice the neighbourhood's, as it is about that size squared
    scale = 4.4 if mini else 2.2
    while (mini_size(cx, cy, period, bits) if mini else math.log10(size)) > math.log10(depth):
        bits = int(max(300, -math.log2(size) * scale + 200))
        for fx, fy in ((0.31, 0.23), (0.2, -0.3), (-0.35, 0.1), (0.05, 0.4)):
            with gmpy2.context(precision=bits):     # the offset at the chain's precision
                tx, ty = cx + gmpy2.mpfr(size * fx), cy + gmpy2.mpfr(size * fy)
            q = ball_period(tx, ty, size * 0.02, 20 * period + 5000, bits)
            if q is None:
                continue
            nx, ny, k, norm = newton2d(tx, ty, q, bits)
            if k < 99 and 1 / norm < size:
                break
        else:
            raise SystemExit(f"no smaller nucleus found after period {period}")
        cx, cy, size, period = nx, ny, 1 / norm, q
        print(f"period {q}: {k} Newton steps, size ~{size:.3g}, mini-ship ~1e{mini_size(cx, cy, q, bits):.1f}",
              flush=True)
    return period, cx, cy, bits


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("period", type=int, nargs="?")
    ap.add_argument("--bits", type=int, default=800)
    ap.add_argument("--digits", type=int, default=0, help="digits to print (0: all)")
    ap.add_argument("--chain", type=float, help="off the axis, down to this size")
    ap.add_argument("--mini", action="store_true",
                    help="--chain: down to this size of the mini-ship itself (see above)")
    a = ap.parse_args(argv)
    if a.chain:
        period, cx, cy, bits = chain(a.chain, a.mini)
        digits = a.digits or int(bits * 0.30103)
        print(f"period {period}\n{format(cx, f'.{digits}f')}\n{format(cy, f'.{digits}f')}")
        return
    if a.period is None:
        ap.error("give a period, or --chain DEPTH")
    c, size = nucleus(a.period, a.bits)
    text = format(c, f".{a.digits or int(a.bits * 0.30103)}f")
    print(f"period {a.period}: size ~{float(size):.2g}")
    print(text)


if __name__ == "__main__":
    main()
