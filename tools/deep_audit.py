"""Audit deep renders (.npy values of `main.py --render mandelbrot --out X.npy`) against MPFR.

    PYTHONPATH=. python tools/deep_audit.py --location FILE --size WxH A.npy [B.npy]
        [--random 64] [--past auto|ITER] [--past-count 32] [--threads N] [--show 20]
        [--compare-only]

Draws pixels of A (at random, every pixel whose escape count B disagrees with, and pixels past the
reference's escape: `--past auto` computes the picture's reference orbit to find it), iterates each
in MPFR at the precision that settles its count (kernels/mandelbrot/redo/audit.py), on all cores,
and prints the agreement, the worst error and the pixels off by more than 1. With B, the same for
B, and how many counts and values the two renders differ in. Exit status 1 when any pixel is off.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # run from anywhere


def request_of(location: str, size):
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    from services.location_file import location_options
    opts = location_options(location, size)
    re_, im_ = opts["center"].split(",")
    return DeepRequest(re_, im_, opts["width"], tuple(size), int(opts["iters"])).validate()


def reference_escape(request) -> int | None:
    """The iteration at which the picture's reference orbit escapes (None: it does not)."""
    from kernels.mandelbrot.reference.reference import ReferenceOrbit
    orbit = ReferenceOrbit(request.center_re, request.center_im, request.precision)
    orbit.extend(request.max_iter)
    return orbit.length - 1 if orbit.escaped else None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("values", nargs="+", help="one or two .npy renders of the same picture")
    p.add_argument("--location", required=True)
    p.add_argument("--size", required=True, help="WxH of the renders")
    p.add_argument("--random", type=int, default=64)
    p.add_argument("--past", default=None, help="auto, or the iteration the reference escapes at")
    p.add_argument("--past-count", type=int, default=32)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--show", type=int, default=20)
    p.add_argument("--compare-only", action="store_true",
                   help="only count where the two renders differ (exit 1 when they do)")
    a = p.parse_args(argv)
    from kernels.mandelbrot.redo.audit import choose, compare, counts, truths
    w, h = (int(v) for v in a.size.lower().split("x"))
    req = request_of(a.location, (w, h))
    renders = [np.load(f) for f in a.values]
    other = renders[1] if len(renders) > 1 else None
    if other is not None:
        print(f"values differing: {int((renders[0] != other).sum()):,}; escape counts differing: "
              f"{int((counts(renders[0]) != counts(other)).sum()):,} of {w * h:,}")
    if a.compare_only:
        return 0 if other is None or np.array_equal(renders[0], other) else 1
    past = a.past
    if past == "auto":
        past = reference_escape(req)
        print(f"reference escapes at: {past}")
    past = None if past is None else int(past)
    pixels = choose(renders[0], a.random, other=other, past=past, past_count=a.past_count)
    t = time.perf_counter()
    truth = truths(req, pixels, threads=a.threads)
    kinds = {k: sum(1 for p in pixels if p[2] == k) for k in ("random", "disputed", "past")}
    print(f"{len(pixels):,} pixels {kinds} iterated in MPFR in {time.perf_counter() - t:.1f} s")
    bad = 0
    for name, vals in zip(a.values, renders):
        res = compare(vals, pixels, truth)
        print(f"{name}: {res.summary()}")
        off = [p for p in res.pixels if abs(p[3] - p[4]) > 1]
        bad += len(off)
        for r, c, why, mine, truth, bits in sorted(off, key=lambda p: -abs(p[3] - p[4]))[:a.show]:
            print(f"  ({r}, {c}) {why}: {mine:,} vs MPFR {truth:,} ({truth - mine:+,}) at {bits} bits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
