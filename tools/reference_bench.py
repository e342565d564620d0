"""Time deep zoom's reference orbit against the loop anyone writes first, at Kalles Fraktaler's
benchmark locations, all in one run so that the ratios are fair (issue 21's table).

For each of KF's .kfr files (resources/kf-*.kfr; a 32×32 frame, KF's iteration count, the precision
the renderer asks for):
  plain      z = z*z + c in gmpy2 over the same orbit (as many iterations as the full orbit)
  main loop  the project's loop before the compiled engine (mpc square, complex() per iteration)
  gmpy2      the fallback engine (that loop with the orbit's chunk bookkeeping)
  fixed      the compiled fixed-point engine (GMP), the full orbit
  mpfr 1t    the compiled MPFR engine on one thread, the full orbit
  threads    the compiled engine with its squarings on 3 or 2 threads (--orbit-threads)
  period     the engine the renderer picks, stopped at the frame's period
  frame      DeepRenderer(cpu).render_values of the 32×32 frame on a warmed-up renderer, with no
             precision headroom as `--render` draws it (the
             start-up a shallow render also pays, i.e. compiling or loading the kernels, left out)
  after      the same frame with its BLA table built after the orbit, not beside it
             (DeepRenderer.table_ahead off: the comparison for table_ahead.py)
and the per-iteration cost of each engine at a few precisions.

  PYTHONPATH=. python tools/reference_bench.py [--only 5e227,4e533] [--skip plain,main] [--bits-only]
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KF_DIR = Path(os.environ.get("KF_BENCHMARKS", ROOT / "resources"))
LOCATIONS = ("1e1086", "4e533", "5e227")
BITS = (826, 1842, 3424, 3677)
SIZE = (32, 32)


def request_of(name: str):
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    from services.kfr import parse_kfr
    loc = parse_kfr((KF_DIR / f"kf-{name}.kfr").read_text(errors="replace"))
    return DeepRequest(loc.center_re, loc.center_im, str(loc.width(*SIZE)), SIZE,
                       loc.iterations).validate()


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def plain_loop(gmpy2, c, n: int, precision: int) -> None:
    with gmpy2.context(precision=precision):
        z = gmpy2.mpc(0)
        for _ in range(n):
            z = z * z + c


def main_loop(gmpy2, c, n: int, precision: int) -> None:
    """The hot loop of reference.py as it was before the compiled engine (its escape test and
    chunk bookkeeping left out, which only makes it faster)."""
    square = gmpy2.square
    out = []
    put = out.append
    with gmpy2.context(precision=precision):
        z = gmpy2.mpc(0)
        for _ in range(n):
            z = square(z) + c
            put(complex(z))


def orbit_time(req, bits, engine, radius=None):
    from kernels.mandelbrot.reference.reference import ReferenceOrbit
    orbit = ReferenceOrbit(req.center_re, req.center_im, bits, engine=engine)
    dt, _ = timed(lambda: orbit.extend(req.max_iter, radius_log2=radius))
    return dt, orbit


def frame_time(req, table_ahead=True):
    from kernels.backend import resolve
    from kernels.mandelbrot.deep.renderer import FORMATS, DeepRenderer
    r = DeepRenderer(resolve("cpu"))
    r.precision_headroom = 0        # as `main.py --render` draws one frame (services/render.py)
    r.table_ahead = table_ahead
    r.warmup(FORMATS)               # all a warm start has loaded: the table built ahead too
    dt, res = timed(lambda: r.render_values(req))
    return dt, res


def per_iteration(engines, rounds: int, iters: int = 10_000, bits_list=BITS) -> None:
    import gmpy2
    from kernels.mandelbrot.reference.reference import ReferenceOrbit
    print(f"\nper iteration (µs), {iters:,} iterations, best of {rounds} rounds of every column")
    print(f"{'bits':>6} {'plain':>8} " + " ".join(f"{e:>8}" for e in engines))
    for bits in bits_list:
        # a centre with digits down to the last bit: MPFR's work depends on the limbs in use
        tail = "".join(str((7 * k * k + 3 * k) % 10) for k in range(int(bits * 0.30103) + 8))
        cre, cim = "-1.7499999999999999" + tail, "0.0000000000000001" + tail[::-1]
        with gmpy2.context(precision=bits):
            c = gmpy2.mpc(gmpy2.mpfr(cre), gmpy2.mpfr(cim))
        best = [math.inf] * (1 + len(engines))
        for _ in range(rounds):
            best[0] = min(best[0], timed(lambda: plain_loop(gmpy2, c, iters, bits))[0])
            for i, e in enumerate(engines):
                o = ReferenceOrbit(cre, cim, bits, engine=e)
                best[i + 1] = min(best[i + 1], timed(lambda o=o: o.extend(iters))[0])
        print(f"{bits:>6} " + " ".join(f"{v / iters * 1e6:8.3f}" for v in best), flush=True)


def plain_only(name: str) -> int:
    """The plain loop alone over `name`'s whole orbit (its length from the compiled engine, not
    timed), for timing whole processes against the command line's render."""
    import gmpy2

    from kernels.mandelbrot.deep.renderer import PRECISION_HEADROOM
    from kernels.mandelbrot.reference.reference import ReferenceOrbit
    req = request_of(name)
    bits = req.precision_deeper(PRECISION_HEADROOM)
    n = ReferenceOrbit(req.center_re, req.center_im, bits).extend(req.max_iter).length - 1
    with gmpy2.context(precision=bits):
        c = gmpy2.mpc(gmpy2.mpfr(req.center_re), gmpy2.mpfr(req.center_im))
    dt, _ = timed(lambda: plain_loop(gmpy2, c, n, bits))
    print(f"{name}: plain loop {dt:.3f} s over {n:,} iterations at {bits:,} bits")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(LOCATIONS))
    ap.add_argument("--skip", default="",
                    help="columns to leave out: plain,main,gmpy2,fixed,mpfr,threads,threads2,after")
    ap.add_argument("--orbit-threads", action="store_true",
                    help="time the threaded engines over the whole orbits too (slow on a busy box)")
    ap.add_argument("--repeats", type=int, default=1, help="rounds of every column; the best kept")
    ap.add_argument("--bits-only", action="store_true", help="only the per-iteration table")
    ap.add_argument("--bits", default=",".join(map(str, BITS)),
                    help="precisions of the per-iteration table, comma-separated")
    ap.add_argument("--no-bits", action="store_true", help="leave the per-iteration table out")
    ap.add_argument("--plain-only", metavar="NAME", default=None,
                    help="only the plain loop over NAME's whole orbit (to time as a process)")
    args = ap.parse_args(argv)
    if args.plain_only:
        return plain_only(args.plain_only)
    skip = set(filter(None, args.skip.split(",")))
    flags = {"orbit-threads"} if args.orbit_threads else set()
    import gmpy2

    from kernels.mandelbrot.numbers import mpfr_lib
    from kernels.mandelbrot.reference.period_stop import radius_log2
    from kernels.mandelbrot.deep.renderer import PRECISION_HEADROOM, FrameGeometry
    from kernels.mandelbrot.reference.reference import ReferenceOrbit
    engines = ["fixed", "mpfr", "threads2", "threads"] if mpfr_lib.LIBRARY is not None else []
    engines = [e for e in engines if e not in skip]
    print(f"MPFR library: {mpfr_lib.LIBRARY._name if mpfr_lib.LIBRARY else mpfr_lib.WHY_NOT}; "
          f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    if not args.bits_only:
        frame_time(request_of(LOCATIONS[-1]))           # compile / load every kernel once
        for name in args.only.split(","):
            req = request_of(name)
            bits = req.precision_deeper(PRECISION_HEADROOM)     # as the renderer asks
            full_t, full = orbit_time(req, bits, "mpfr" if engines else "gmpy2")
            n = full.length - 1
            with gmpy2.context(precision=bits):
                c = gmpy2.mpc(gmpy2.mpfr(req.center_re), gmpy2.mpfr(req.center_im))
            probe = ReferenceOrbit(req.center_re, req.center_im, bits)
            radius = radius_log2(FrameGeometry.of(req, probe))
            jobs = {}
            if "plain" not in skip:
                jobs["plain"] = lambda: (timed(lambda: plain_loop(gmpy2, c, n, bits))[0], None)
            if "main" not in skip:
                jobs["main loop"] = lambda: (timed(lambda: main_loop(gmpy2, c, n, bits))[0], None)
            if "gmpy2" not in skip:
                jobs["gmpy2"] = lambda: orbit_time(req, bits, "gmpy2")
            for e in engines:
                if not e.startswith("threads") or "orbit-threads" in flags:
                    jobs["mpfr 1t" if e == "mpfr" else e] = lambda e=e: orbit_time(req, bits, e)
            jobs["period"] = lambda: orbit_time(req, bits, None, radius)
            jobs["frame"] = lambda: frame_time(req)
            if "after" not in skip:
                jobs["after"] = lambda: frame_time(req, table_ahead=False)
            # rounds of every column in turn, the best of each: a busy machine slows them alike
            cols, last, best = {}, {}, {}
            for _ in range(args.repeats):
                for k, job in jobs.items():
                    t, out = job()
                    if t < cols.get(k, math.inf):
                        best[k] = out
                    cols[k] = min(cols.get(k, math.inf), t)
                    last[k] = out
            porbit, res = last["period"], last["frame"]
            print(f"\n{name}: {n:,} iterations ({'escaped' if full.escaped else 'bounded'}) at "
                  f"{bits:,} bits; period stop at {porbit.period} ({porbit.length - 1:,} iterations,"
                  f" radius 2^{radius:.1f}); frame's reference {res.reference.length - 1:,} "
                  f"iterations, engine {res.reference.engine_name}")
            for k, v in cols.items():
                ratio = f"  {v / cols['plain']:.3f} of plain" if "plain" in cols else ""
                print(f"  {k:>10}: {v:8.3f} s{ratio}")
            for k in ("frame", "after"):
                if k in best:
                    t = best[k].timings
                    print(f"  {k} (best round): {t.phases_ms['total']:.0f} ms = reference "
                          f"{t.detail['reference']:.0f} + table {t.detail['table']:.0f} + kernel "
                          f"{t.phases_ms['kernel']:.0f} ms + the rest")
            print(f"  load average {os.getloadavg()[0]:.1f}")
    if not args.no_bits:
        per_iteration([e for e in ["gmpy2"] + engines if e not in skip], max(3, args.repeats),
                      bits_list=[int(b) for b in args.bits.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
