#!/usr/bin/env python3
"""How many pixels the bilinear approximation (BLA) gets wrong, per radius ε = 2^-EPS: a deep
frame's escape counts with BLA against the same frame by plain perturbation with rebasing (no
approximation; CPU twin), as "pixels off by more than one iteration".

The default course is the seahorse-valley zoom of the README's movie example, frames just past
float64's reach (widths 3e-14 .. 1e-17, 20,000 iterations, 64x36), where the approximation alone
left 47-78 of 2,304 pixels off at the default ε = 2^-32 (by hundreds of iterations at some; brute
force in MPFR sides with plain perturbation) and even 2^-48 left up to 13. The kernels' accuracy
guard (loops/guard.py) now redoes the doubtful pixels; per ε the tool prints the pixels off, the pixels
redone, and the cost as perturbation steps + BLA steps per pixel (all passes counted):

    .venv/bin/python tools/bla_accuracy.py [--frames 12,13,14,15] [--eps 24,32,40,48]
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

sys.path.insert(0, ".")

SEAHORSE = ("-0.743643887037158704752191506114774", "0.131825904205311970493132056385139")


def main() -> int:
    from services.requests import mandelbrot_request
    from kernels.backend import resolve
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.keyframes.zoom_path import zoom_in
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", default="12,13,14,15")
    ap.add_argument("--eps", default="24,32,40,48")
    ap.add_argument("--size", default="64x36")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    be = resolve("cpu")
    course = zoom_in(*SEAHORSE, "1e-17", 20000, 16)
    for k in (int(v) for v in a.frames.split(",")):
        r = mandelbrot_request(course.frame(k).options(), w, h, True)
        plain = np.floor(DeepRenderer(be).render_values(dataclasses.replace(r, bla=False)).values)
        row = [f"frame {k} width {float(r.width_decimal):.2e}"]
        for eps in (int(v) for v in a.eps.split(",")):
            res = DeepRenderer(be, eps_bits=eps).render_values(r)
            v = np.floor(res.values)
            st = res.stats
            row.append(f"2^-{eps}: {int((np.abs(v - plain) > 1).sum())} of {v.size} off, "
                       f"{st['redone_pixels']} redone, steps/px {st['perturbation_steps'] / v.size:.0f}"
                       f" + BLA {st['bla_steps'] / v.size:.0f}")
        print(", ".join(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
