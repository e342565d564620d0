"""Pixels marked per KF file: each rendered once as the renderer draws it by default (handed-back
pixels marked), once with the double-double middle tier (exact_redo.PROVED), with the time of each
and of the tier alone (issue 34: at most 0.1 % marked).

    PYTHONPATH=. python tools/kf_marked.py [--backend cpu|cuda] [--size N] [--files 1e14,5e227]
        [--skip-proved]

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
    from kernels.mandelbrot.deep.request import DeepRequest
    from services.kfr import parse_kfr
    loc = parse_kfr((ROOT / "resources" / f"kf-{name}.kfr").read_text(errors="replace"))
    return DeepRequest(loc.center_re, loc.center_im, str(loc.width(n, n)), (n, n), loc.iterations)


def main(argv=None) -> int:
    from kernels import backend
    from kernels.mandelbrot.deep import exact_redo
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="cpu")
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--files", default=",".join(FILES))
    p.add_argument("--skip-proved", action="store_true", help="the default render only")
    a = p.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
