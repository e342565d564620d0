"""Zoom to minibrot from Kalles Fraktaler's benchmark views: for each .kfr file, the minibrot of
its view (its centre, its width on a 640×360 canvas, its iteration count as the highest period)
found by services.minibrot, with the time it took. Run from the repository root:
    PYTHONPATH=. python tools/minibrot_kf.py ../shared/data/kf-benchmarks/*.kfr
"""
from __future__ import annotations

import sys
import time

from services.kfr import parse_kfr
from services.minibrot import MinibrotNotFound, find_minibrot, view_search

SIZE = (640, 360)


def main(paths) -> None:
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as fh:
            k = parse_kfr(fh.read())
        t = time.perf_counter()
        try:
            f = find_minibrot(view_search(k.center_re, k.center_im, k.width(*SIZE), SIZE,
                                          k.iterations))
            what = f"{f.summary()}, view width {f.width:.3e}, {f.iterations:,} iterations"
        except MinibrotNotFound as exc:
            what = f"no minibrot: {exc}"
        print(f"{path}: {what} ({time.perf_counter() - t:.1f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
