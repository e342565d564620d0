#!/usr/bin/env python3
"""What the overlays cost: the same frame without an overlay and with each overlay that has a
meaning for it, in one run, rounds interleaved (off, then each overlay, again and again) so that
clocks and temperature drift alike for all. Frames: the float64 seahorse (1920x1080, 2000
iterations, the bench's mandelbrot-seahorse) and the deep 1e-100 frame (the published very deep
coordinate, 50,000 iterations, the bench's mandelbrot-deep-frame; reference and table reused,
the pixels recomputed every frame).

    python3 tools/overlay_bench.py [--backend cuda] [--repeats 20] [--size 1920x1080]
        [--only float64|deep] [--json FILE]

Per row: median "gpu ms" (kernel + d2h phases, CUDA events; the CPU's kernel phase) and "wall ms"
(the frame's total, host work included), and each against the frame without an overlay. The
target (issue 22): no overlay = today's frame; any overlay at most 15 % over it. Then, per row,
where the GPU time goes (medians): the kernel phases by their detail (colourise, overlay, work
count), the rest of the kernel time ("escape": the escape pass), and the copies home.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SEAHORSE = (-0.743643887037151, 0.131825904205330, 0.01)


def _gpu_ms(t):
    k = t.phases_ms.get("kernel")
    return None if k is None else k + (t.phases_ms.get("d2h") or 0.0)


def _median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def _rounds(render, variants, repeats):
    """{variant: [Timings]}: `render(variant, i)` for every variant, round after round."""
    for v in variants:                  # compile and warm every path first
        render(v, 0)
        render(v, 1)
    runs = {v: [] for v in variants}
    for i in range(repeats):
        for v in variants:
            runs[v].append(render(v, i))
    return runs


def _split(t) -> dict:
    """A frame's GPU ms by part: each kernel detail, the kernel time without one, the copies."""
    parts = {k: v for k, v in t.detail.items() if isinstance(v, (int, float))}
    kernel = t.phases_ms.get("kernel")
    if kernel is not None:
        parts["escape"] = kernel - sum(parts.values())
    parts["d2h"] = t.phases_ms.get("d2h") or 0.0
    return parts


def _rows(frame, runs):
    base_gpu = _median([_gpu_ms(t) for t in runs[""]])
    base_wall = _median([t.phases_ms.get("total") for t in runs[""]])
    out = []
    for v, ts in runs.items():
        g = _median([_gpu_ms(t) for t in ts])
        wall = _median([t.phases_ms.get("total") for t in ts])
        out.append({"frame": frame, "overlay": v or "off", "gpu ms": g, "wall ms": wall,
                    "gpu vs off": (g / base_gpu - 1.0) if g and base_gpu else None,
                    "wall vs off": (wall / base_wall - 1.0) if wall and base_wall else None,
                    "label": ts[-1].label,
                    "parts": {k: _median([_split(t).get(k) for t in ts])
                              for k in sorted({k for t in ts for k in _split(t)})}})
    return out


def float64_rows(backend, size, repeats):
    from kernels.mandelbrot.colouring import overlays as ov
    from kernels.mandelbrot.renderer import MandelbrotRequest, Renderer
    cx, cy, width = SEAHORSE
    base = MandelbrotRequest(cx, cy, width, size, 2000)
    r = Renderer(backend, reuse_values=False)
    names = [""] + [n for n in ov.NAMES if ov.unavailable(n, False, backend.is_gpu) is None]
    runs = _rounds(lambda v, i: r.render(dataclasses.replace(base, overlay=v)).timings, names,
                   repeats)
    return _rows("float64 seahorse 2000", runs)


def deep_rows(backend, size, repeats):
    from kernels.mandelbrot.colouring import overlays as ov
    from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as loc
    from kernels.mandelbrot.deep_frames import DeepFrameRenderer
    from kernels.mandelbrot.requests.request import DeepFrameRequest
    iters = 50_000
    base = DeepFrameRequest(loc.center_re, loc.center_im, "1e-100", size, iters)
    r = DeepFrameRenderer(backend)
    r.render(base)                      # reference and table, kept for every frame below
    names = [""] + [n for n in ov.NAMES if ov.unavailable(n, True, backend.is_gpu) is None]

    def render(v, i):                   # another limit each time: the pixels are recomputed
        return r.render(dataclasses.replace(base, overlay=v, max_iter=iters + i % 2)).timings
    return _rows("deep 1e-100 50000", _rounds(render, names, repeats))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--only", choices=("float64", "deep"))
    ap.add_argument("--json")
    a = ap.parse_args()
    from kernels.backend import resolve
    backend = resolve(a.backend)
    size = tuple(int(x) for x in a.size.lower().split("x"))
    rows = []
    if a.only in (None, "float64"):
        rows += float64_rows(backend, size, a.repeats)
    if a.only in (None, "deep"):
        rows += deep_rows(backend, size, a.repeats)
    print(f"# {backend.label}, {size[0]}x{size[1]}, {a.repeats} rounds, medians")
    print(f"{'frame':<22} {'overlay':<19} {'gpu ms':>9} {'vs off':>8} {'wall ms':>9} {'vs off':>8}")
    for row in rows:
        def pct(x):
            return "" if x is None else f"{100 * x:+.1f} %"

        def ms(x):
            return "–" if x is None else f"{x:.3f}"
        print(f"{row['frame']:<22} {row['overlay']:<19} {ms(row['gpu ms']):>9} "
              f"{pct(row['gpu vs off']):>8} {ms(row['wall ms']):>9} {pct(row['wall vs off']):>8}")
    for row in rows:
        parts = ", ".join(f"{k} {v:.3f}" for k, v in row["parts"].items() if v is not None)
        print(f"# {row['frame']}, {row['overlay']}, gpu ms by part: {parts}")
    for row in rows:
        if row["overlay"] != "off" and "·" in row["label"]:
            print(f"# {row['frame']}, {row['overlay']}: {row['label'].split('·', 1)[1].strip()}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
