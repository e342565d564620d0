"""One point of the float32 step-grouping sweep: the bench's float32 frames (whole set, seahorse;
1920x1080) in float64 and float32 in this process, with the float32 warp kernel built for
GPU_EXPLORER_F32_BLOCK="steps,blocks" (kernels/mandelbrot/unroll_f32.py; unset: the default).
Prints the median escape-kernel ms of each type, their ratio (same frame, so the speed-up), and a
digest of the float32 frames' iteration counts, which must be the same for every grouping.

    GPU_EXPLORER_F32_BLOCK=16,2 python tools/f32_block_sweep.py --repeats 10 [--json FILE]
(tools/gpu_f32_check.sh runs it for each grouping)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
from dataclasses import replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _escape_ms(renderer, req, repeats: int) -> float | None:
    """Median escape-kernel ms (None where nothing was timed: the CUDA simulator)."""
    from kernels import bench
    from kernels.mandelbrot.bench import _escape_ms as escape_ms
    runs, _ = bench.time_runs(lambda: renderer.render(req).timings, repeats, warmup=2)
    got = [v for v in (escape_ms(t) for t in runs) if v is not None]
    return statistics.median(got) if got else None


def _ms(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--json", help="append this point as one JSON line to FILE")
    args = ap.parse_args(argv)
    from kernels import backend as backends
    from kernels.mandelbrot import renderer as m
    from kernels.mandelbrot.bench import FLOAT32_FRAMES, FULL_HD, _request
    from kernels.mandelbrot.unroll_f32 import BLOCK_STEPS, BLOCKS_PER_LOOK
    try:
        be = backends.resolve(args.backend)
    except backends.BackendUnavailable as exc:
        print(f"f32_block_sweep: {exc}", file=sys.stderr)
        return 1
    point = {"steps": BLOCK_STEPS, "blocks": BLOCKS_PER_LOOK, "frames": {}}
    digest = hashlib.sha1()
    for label, view, iters in FLOAT32_FRAMES:
        req = _request(view, FULL_HD, iters)
        ms = {}
        for nt in ("float64", "float32"):
            r = m.Renderer(be, reuse_values=False, number_type=nt)
            ms[nt] = _escape_ms(r, replace(req, number_type=nt), args.repeats)
            if nt == "float32":
                got = r.render(replace(req, number_type=nt, want_values=True))
                digest.update(m.iteration_counts(got.values, iters).tobytes())
        ratio = ms["float64"] / ms["float32"] if ms["float64"] and ms["float32"] else None
        point["frames"][label] = {**ms, "float32/float64": ratio}
    point["counts sha1"] = digest.hexdigest()[:12]
    frames = "; ".join(f"{k}: f64 {_ms(v['float64'])} ms, f32 {_ms(v['float32'])} ms, "
                       f"x{_ms(v['float32/float64'])}" for k, v in point["frames"].items())
    print(f"f32 block {BLOCK_STEPS},{BLOCKS_PER_LOOK}: {frames}; counts {point['counts sha1']}")
    if args.json:
        with open(args.json, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(point) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
