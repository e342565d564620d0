"""The BLA table's build and the perturbation loop's layout of it, on one CPU thread against all
of them (kernels/mandelbrot/tables/bla.py, flat_build.py), for reference orbits of 100,000 and
1,000,000 points: median and best of a few runs each, with a check that both give the same
arrays bit for bit. The layout is also timed as NumPy made it before (column by column).
Run from the repository root:
    PYTHONPATH=. python tools/bla_build_bench.py [--points 100000,1000000] [--repeats 7]
The orbit is the period-139 minibrot's nucleus (bounded for ever), computed once with gmpy2.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numba
import numpy as np

from kernels.mandelbrot.tables import bla
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.loops import perturbation_loop as pl
from kernels.mandelbrot.tables.flat_build import loop_layout
from kernels.mandelbrot.tables.layout import E_B, T_AD, T_ADI, T_ADR, T_BI, T_BR, T_RD
from kernels.mandelbrot.reference.reference import ReferenceOrbit


def layout_numpy(orbit, tab, tabe, levels):
    """perturbation_loop.loop_tables as NumPy wrote it, column by column."""
    zo = np.zeros((orbit.shape[0], pl.ZW))
    zo[:, pl.Z_RE], zo[:, pl.Z_IM] = orbit[:, 0], orbit[:, 1]
    off, count = int(levels[0, 0]), int(levels[0, 1])
    zo[1:1 + count, pl.Z_R0] = tab[off:off + count, T_RD]
    bt = np.zeros((tab.shape[0], pl.BW))
    bt[:, pl.B_AR], bt[:, pl.B_AI] = tab[:, T_ADR], tab[:, T_ADI]
    e = np.clip(tabe[:, E_B], -pl._CLAMP, pl._CLAMP)
    with np.errstate(over="ignore"):
        bt[:, pl.B_BR], bt[:, pl.B_BI] = np.ldexp(tab[:, T_BR], e), np.ldexp(tab[:, T_BI], e)
    bt[:, pl.B_R], bt[:, pl.B_AA] = tab[:, T_RD], tab[:, T_AD]
    return zo, bt


def layout(parallel):
    def run(orbit, tab, tabe, levels):
        return loop_layout(orbit, tab, tabe, levels, (pl.Z_RE, pl.Z_IM, pl.Z_R0),
                           (pl.B_AR, pl.B_AI, pl.B_BR, pl.B_BI, pl.B_R, pl.B_AA), pl.ZW, pl.BW,
                           pl._CLAMP, parallel=parallel)
    return run


def timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), min(times), out


def same(a, b) -> bool:
    return all(x.tobytes() == y.tobytes() for x, y in zip(a, b))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--points", default="100000,1000000")
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args()
    sizes = [int(s) for s in args.points.split(",")]
    t = time.perf_counter()
    m = loc.MINIBROT_139
    orbit = ReferenceOrbit(m.center_re, m.center_im, 600).extend(max(sizes) + 1)
    arr, exp = orbit.arrays()
    print(f"orbit of {arr.shape[0]:,} points in {time.perf_counter() - t:.1f} s")
    for par in (False, True):       # compile (or load from numba's cache) before timing
        small = bla.build_table(arr[:64], exp[:64], (0.5, -300), parallel=par)
        layout(par)(arr[:64], *small)
    print(f"numba {numba.__version__}, threading layer {numba.threading_layer()}, "
          f"{numba.config.NUMBA_NUM_THREADS} threads, {os.cpu_count()} CPUs; "
          f"parallel used: {bla.threadsafe_layer()}")
    r = args.repeats
    for n in sizes:
        a, e = arr[:n], exp[:n]
        one, one_best, t1 = timed(lambda: bla.build_table(a, e, (0.5, -300), parallel=False), r)
        all_, all_best, tn = timed(lambda: bla.build_table(a, e, (0.5, -300)), r)
        print(f"{n:>9,} points, table of {tn[0].shape[0]:,} entries: build on one thread "
              f"{one:.1f} ms (best {one_best:.1f}), on all {all_:.1f} ms (best {all_best:.1f}); "
              f"identical: {same(t1, tn)}")
        npy, npy_best, l0 = timed(lambda: layout_numpy(a, *tn), r)
        one, one_best, l1 = timed(lambda: layout(False)(a, *tn), r)
        all_, all_best, ln = timed(lambda: layout(True)(a, *tn), r)
        print(f"{'':>9}  loop layout: NumPy {npy:.1f} ms (best {npy_best:.1f}), one thread "
              f"{one:.1f} ms (best {one_best:.1f}), all {all_:.1f} ms (best {all_best:.1f}); "
              f"identical: {same(l0, l1) and same(l0, ln)}")


if __name__ == "__main__":
    main()
