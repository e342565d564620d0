"""The BLA table's build on one CPU thread against all of them (kernels/mandelbrot/deep/bla.py),
for reference orbits of 100,000 and 1,000,000 points: median and best of a few builds each, and
a check that both give the same table bit for bit. Run from the repository root:
    PYTHONPATH=. python tools/bla_build_bench.py [--points 100000,1000000] [--repeats 7]
The orbit is the period-139 minibrot's nucleus (bounded for ever), computed once with gmpy2.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numba

from kernels.mandelbrot.deep import bla
from kernels.mandelbrot.deep import locations as loc
from kernels.mandelbrot.deep.reference import ReferenceOrbit


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
        bla.build_table(arr[:64], exp[:64], (0.5, -300), parallel=par)
    print(f"numba {numba.__version__}, threading layer {numba.threading_layer()}, "
          f"{numba.config.NUMBA_NUM_THREADS} threads, {os.cpu_count()} CPUs; "
          f"parallel build used: {bla.threadsafe_layer()}")
    for n in sizes:
        times = {False: [], True: []}
        tables = {}
        for _ in range(args.repeats):
            for par in (False, True):   # interleaved: both see the same machine load
                t = time.perf_counter()
                tables[par] = bla.build_table(arr[:n], exp[:n], (0.5, -300), parallel=par)
                times[par].append((time.perf_counter() - t) * 1e3)
        same = all(a.tobytes() == b.tobytes() for a, b in zip(tables[False], tables[True]))
        one, all_ = (statistics.median(times[k]) for k in (False, True))
        print(f"{n:>9,} points ({tables[True][0].shape[0]:,} entries): one thread "
              f"{one:7.1f} ms (best {min(times[False]):.1f}), all threads {all_:7.1f} ms "
              f"(best {min(times[True]):.1f}), x{one / all_:.2f}; identical: {same}")


if __name__ == "__main__":
    main()
