"""Print the real nucleus of period p near -2 (z_p(c) = 0 for x -> x^2 + c, which is also the
Burning Ship's map on the real axis) and its size by the Mandelbrot's estimate: how
kernels/mandelbrot/deep/locations.py's SHIP_85 and SHIP_252 were found.

    python3 tools/ship_nucleus.py 85 --bits 800
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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("period", type=int)
    ap.add_argument("--bits", type=int, default=800)
    ap.add_argument("--digits", type=int, default=0, help="digits to print (0: all)")
    a = ap.parse_args(argv)
    c, size = nucleus(a.period, a.bits)
    text = format(c, f".{a.digits or int(a.bits * 0.30103)}f")
    print(f"period {a.period}: size ~{float(size):.2g}")
    print(text)


if __name__ == "__main__":
    main()
