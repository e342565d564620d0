"""The Burning Ship's deep re-render against the Mandelbrot's at the same place, size and
iterations, on one card in one run (issue 36: "its deep re-render at 1080p on the GPU at most 2x
the Mandelbrot's at the same depth"): the first frame of each (reference, table, compile), then
`--repeats` re-renders, whose kernel times (the GPU's own, timing.py) are the figures.

    python3 tools/ship_vs_mandelbrot.py --backend cuda --size 1920x1080
    python3 tools/ship_vs_mandelbrot.py --backend cuda --size 1920x1080 --place p662

Off the axis the Mandelbrot at the ship's own coordinates is outside its set (every pixel escapes
after 15 iterations), so the p662 place is also set against the Mandelbrot's period-252 minibrot
at the same width and iterations (SHIP_252's nucleus is also the Mandelbrot's).
"""
from __future__ import annotations

import argparse
import statistics
from decimal import Decimal


def places():
    from kernels.mandelbrot.benches import locations as loc
    from kernels.mandelbrot.requests.deep_request import add_decimal

    def off(p, w):
        return (add_decimal(p.center_re, Decimal(w) * Decimal("0.1234567")),
                add_decimal(p.center_im, Decimal(w) * Decimal("-0.0765432")))
    p662 = (loc.SHIP_662.center_re, loc.SHIP_662.center_im)
    # (name, the ship's centre, width, iterations, the Mandelbrot's centre where not the ship's)
    return [("p85 nucleus 1e-100", (loc.SHIP_85.center_re, "0"), "1e-100", 3000, None),
            ("p85 off-centre 1e-100", off(loc.SHIP_85, "1e-100"), "1e-100", 3000, None),
            ("p252 off-centre 8e-302", off(loc.SHIP_252, "8e-302"), "8e-302", 6000, None),
            ("p447 off-axis 1e-100", (loc.SHIP_447.center_re, loc.SHIP_447.center_im), "1e-100",
             6000, None),
            ("p662 off-axis 1e-301", p662, "1e-301", 20000, None),
            ("p662 vs p252 minibrot", p662, "1e-301", 20000, off(loc.SHIP_252, "1e-301"))]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--place", default="", help="only the places whose name holds this (e.g. p662)")
    a = ap.parse_args(argv)
    from kernels.backend import resolve
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    w, h = (int(v) for v in a.size.lower().split("x"))
    be = resolve(a.backend)
    print(f"{be.name}: {w}x{h}, kernel ms (median of {a.repeats} re-renders)")
    for name, ship_at, width, it, mandel_at in places():
        if a.place not in name:
            continue
        row = {}
        for formula in ("mandelbrot", "burning-ship"):
            cre, cim = ship_at if formula == "burning-ship" or mandel_at is None else mandel_at
            r = DeepRenderer(be)
            req = DeepRequest(cre, cim, width, (w, h), it, formula=formula)
            first = r.render_values(req)
            ks = [r.render_values(req).timings.get("kernel") for _ in range(a.repeats)]
            st = first.stats
            row[formula] = statistics.median(ks)
            print(f"  {name:24s} {formula:13s} first {sum(v or 0 for v in first.timings.phases_ms.values()):8.1f} ms"
                  f"  kernel {row[formula]:8.2f} ms  steps/px {st['perturbation_steps'] / (w * h):7.1f}"
                  f"  bla/px {st['bla_steps'] / (w * h):6.1f}  format {first.format}")
        print(f"  {name:24s} ship / mandelbrot {row['burning-ship'] / row['mandelbrot']:.2f}x")


if __name__ == "__main__":
    main()
