"""Pixels marked per KF file: each rendered once as the renderer draws it by default (handed-back
pixels marked), once with the double-double middle tier (exact_redo.PROVED), with the time of each
and of the tier alone (issue 34: at most 0.1 % marked).

    PYTHONPATH=. python tools/kf_marked.py [--backend cpu|cuda] [--size N] [--files 1e14,5e227]
        [--skip-proved] [--tier-cost] [--audit]

--tier-cost: the tier's parts timed alone on one core for each file's handed-back pixels (its
orbit, its table, a pixel with the table, a pixel it leaves step by step).
--audit: every handed-back pixel also iterated in MPFR (mpfr_escape.settled_values, all cores):
how many the loop had wrong (off by more than one), how many the tier proved and had wrong
(must be 0) and how many it left that were wrong.

The KF files are resources/kf-NAME.kfr; a first frame at 8x8 per file warms the compiled code and
the reference orbit (kept by the renderer, so the timed frames time pixels and the tier).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # run from anywhere
FILES = ("1e14", "1e50", "5e113", "5e227", "4e533", "1e1086")


def request(name: str, n: int):
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    from services.kfr import parse_kfr
    loc = parse_kfr((ROOT / "resources" / f"kf-{name}.kfr").read_text(errors="replace"))
    return DeepRequest(loc.center_re, loc.center_im, str(loc.width(n, n)), (n, n), loc.iterations)


def main(argv=None) -> int:
    from kernels import backend
    from kernels.mandelbrot.redo import exact_redo
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="cpu")
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--files", default=",".join(FILES))
    p.add_argument("--skip-proved", action="store_true", help="the default render only")
    p.add_argument("--tier-cost", action="store_true", help="time the tier's parts alone")
    p.add_argument("--audit", action="store_true", help="check the handed-back pixels in MPFR")
    a = p.parse_args(argv)
    if a.tier_cost or a.audit:
        for name in a.files.split(","):
            (audit if a.audit else tier_cost)(name, a.size, backend.resolve(a.backend))
        return 0
    be = backend.resolve(a.backend)
    print(f"{'file':7} {'size':>9} {'mode':8} {'handed back':>11} {'proved':>7} {'marked':>7} "
          f"{'marked %':>9} {'frame s':>8} {'tier s':>7} {'tier ms/px':>10}  (tier: the handed-back pixels' host time, the double-double orbit included)")
    for name in a.files.split(","):
        r = DeepRenderer(be)
        r.precision_headroom = 0
        r.render_values(request(name, 8))
        req = request(name, a.size)
        r.render_values(req)        # the frame's orbit and table, so the rows below time pixels
        modes = [("default", False)] + ([] if a.skip_proved else [("proved", exact_redo.PROVED)])
        for label, mode in modes:
            r.exact_redo = mode
            r.exact = exact_redo.ExactCache()       # nothing kept from the row before
            t = time.perf_counter()
            res = r.render_values(req)
            frame = time.perf_counter() - t
            st = res.stats
            handed = st["dd_pixels"] + st["marked_pixels"] + st["exact_pixels"]
            marked = handed - st["dd_pixels"]       # in PROVED mode: all the tier left
            tier = res.timings.detail.get("exact pixels") or 0.0
            per = f"{tier / handed:.1f}" if handed and mode else "-"
            print(f"{name:7} {a.size:>4}x{a.size:<4} {label:8} {handed:>11,} {st['dd_pixels']:>7,} "
                  f"{marked:>7,} {100.0 * marked / a.size ** 2:>8.3f}% "
                  f"{frame:>8.2f} {tier / 1e3:>7.2f} {per:>10}", flush=True)
    return 0


def handed_back(name: str, n: int, be):
    """(request, the loop's values, the (row, col) it handed back: the redone overlay's 2)."""
    import numpy as np

    from kernels.mandelbrot.deep.renderer import DeepRenderer
    req = request(name, n)
    r = DeepRenderer(be)
    r.precision_headroom = 0
    layers = np.zeros((5, n, n), np.int32)
    where = layers
    if getattr(be, "is_gpu", False):     # the layers live where the loop runs
        from numba import cuda
        where = cuda.to_device(layers)
    values = r.render_values(req, layers=where).values.copy()
    if where is not layers:
        where.copy_to_host(layers)
    return req, values, [(int(a), int(b)) for a, b in np.argwhere(layers[4] == 2)]


def audit(name: str, n: int, be) -> None:
    """One line: the handed-back pixels of file `name` at n x n against MPFR."""
    import numpy as np

    from kernels.mandelbrot.redo import dd_pixels, mpfr_escape
    req, loop, places = handed_back(name, n, be)
    if not places:
        print(f"{name} {n}x{n}: nothing handed back")
        return
    t = time.perf_counter()
    truth = np.floor([v for v, _, _ in mpfr_escape.settled_values(req, places)])
    t = time.perf_counter() - t
    at = tuple(np.array(places).T)
    wrong = np.abs(np.floor(loop[at]) - truth) > 1
    line = f"{name} {n}x{n}: {len(places)} handed back, the loop wrong at {int(wrong.sum())}"
    if dd_pixels.reaches(req.picture()):
        v, ok = dd_pixels.dd_at(req.picture(), places, mpfr_escape.workers())
        bad = np.abs(np.floor(v) - truth) > 1
        line += (f"; the tier proved {int(ok.sum())}, of them wrong {int((bad & ok).sum())}, "
                 f"left {int((~ok).sum())}, of them wrong {int((bad & ~ok).sum())}")
    print(f"{line} (MPFR {t:.0f} s)", flush=True)


def tier_cost(name: str, n: int, be) -> None:
    """One line of the tier's costs for file `name` at n x n (one core; the loop's handed-back
    pixels found by the redone overlay's 2)."""
    import numpy as np

    from kernels.mandelbrot.tables import dd_bla
    from kernels.mandelbrot.redo import dd_pixels
    from kernels.mandelbrot.redo.dd_orbit import EXTRA_BITS, dd_orbit
    req, _, places = handed_back(name, n, be)
    whole = req.picture()
    if not places or not dd_pixels.reaches(whole):
        print(f"{name} {n}x{n}: {len(places)} handed back, nothing for the tier")
        return
    dd_pixels.dd_at(whole, places[:1])      # compiled before the clocks start
    bits = whole.precision + EXTRA_BITS
    t = time.perf_counter()
    orbit = dd_orbit(*dd_pixels.centre_hex(whole, bits), bits, whole.max_iter)
    t_orbit = time.perf_counter() - t
    t = time.perf_counter()
    tab, levels = dd_bla.build(orbit, dd_pixels.dc_max(whole))
    t_table = time.perf_counter() - t
    dcs, noise = dd_pixels.deltas(whole, places, bits), 2.0 ** -(bits - 5)
    t = time.perf_counter()
    _, ok = dd_pixels.dd_values(orbit, (tab, levels), dcs, whole.max_iter, noise)
    t_bla = (time.perf_counter() - t) / len(places)
    left = np.flatnonzero(~ok)[:8]
    t = time.perf_counter()
    _, ok2 = dd_pixels.dd_values(orbit, (tab, levels[:0]), dcs[left], whole.max_iter, noise)
    t_plain = (time.perf_counter() - t) / max(1, len(left))
    print(f"{name} {n}x{n}: orbit {orbit.shape[0]:,} points at {bits} bits {t_orbit:.2f} s, "
          f"table {t_table:.2f} s ({tab.nbytes / 1e6:.0f} MB); {len(places)} handed back, "
          f"{1e3 * t_bla:.2f} ms a pixel with the table ({int(ok.sum())} proved); "
          f"step by step {1e3 * t_plain:.1f} ms a pixel ({int(ok2.sum())} of {len(left)} of the "
          f"rest proved)")


if __name__ == "__main__":
    sys.exit(main())
