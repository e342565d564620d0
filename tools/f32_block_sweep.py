"""float32 warp-kernel variants side by side in one process: the bench's float32 frames (whole set,
seahorse) at each size, timed in float64 and with each variant in alternating rounds (the order
turns every round), so that every ratio compares runs minutes apart at most. Prints per frame the
median escape-kernel ms of float64 and of each variant, float32's speed-up on the same frame
(median of the rounds' ratios), and per variant a digest of its iteration counts over all frames,
which must be the same for every variant.

A variant is STEPS,BLOCKS[/THRESH][@WARPS]: the app's kernel (escape_variants.warp_kernel32) at
that step grouping (GPU_EXPLORER_F32_BLOCK's by default); THRESH the idle lanes that make a warp
refill, targets_f32.THRESH by default; WARPS the resident warps per SM, gpu_target.WARPS_PER_SM by
default; the float64 frames keep the app's gpu_target.THRESH and WARPS_PER_SM. Without
--variants: the grouping the process starts with.

    python tools/f32_block_sweep.py --variants 16,4 16,4/8 16,2 \\
        --sizes 1920x1080 3840x2160 --rounds 3 --repeats 5 [--json FILE]
(tools/gpu_f32_speed.sh runs it on the GPU)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import warnings
from dataclasses import replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _escape_ms(renderer, req, repeats: int) -> float | None:
    """Median escape-kernel ms (None where nothing was timed: the CUDA simulator)."""
    from kernels import bench
    from kernels.mandelbrot.bench import _escape_ms as escape_ms
    runs, _ = bench.time_runs(lambda: renderer.render(req).timings, repeats, warmup=1)
    got = [v for v in (escape_ms(t) for t in runs) if v is not None]
    return statistics.median(got) if got else None


def _alone_ms(renderer, req, launches: int) -> tuple[float, float] | None:
    """(GPU ms, host ms) per escape launch alone: the counter zeroed and the escape kernel,
    `launches` times back to back between two events, on the buffers and arguments of one frame
    of `renderer` (None on the simulator). The frame's escape ms also holds the finish kernel and
    the gaps where the GPU waits for the host's next launch; this leaves them out, as long as the
    GPU ms is above the host ms (the host queues launches faster than the GPU runs them)."""
    import time

    from numba import cuda

    from kernels.mandelbrot.loops import escape_gpu as mk
    target, seen = renderer.target, {}
    launch = target.launch
    real = launch.escape

    def spy(*a):
        seen.setdefault("args", a)
        return real(*a)
    launch.escape = spy
    try:
        renderer.render(req)
    finally:
        del launch.escape
    if "args" not in seen or target.simulated:
        return None
    gpu, counter = seen["args"][0], seen["args"][3]
    zero = gpu.kernel(mk.zero_kernel, 1, 32)
    start, end = cuda.event(), cuda.event()
    start.record(gpu.stream)
    t = time.perf_counter()
    for _ in range(launches):
        zero(counter)
        real(*seen["args"])
    host = (time.perf_counter() - t) * 1e3 / launches
    end.record(gpu.stream)
    end.synchronize()
    return cuda.event_elapsed_time(start, end) / launches, host


def _ms(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def parse_variant(text: str) -> tuple[int, int, int, int]:
    """(steps, blocks, thresh, warps) from "[steps,blocks][/thresh][@warps]" (by default
    escape_variants' grouping, targets_f32.THRESH, gpu_target.WARPS_PER_SM)."""
    from kernels.mandelbrot.benches import escape_variants as ev
    from kernels.mandelbrot.frames.gpu_target import WARPS_PER_SM
    from kernels.mandelbrot.benches.launch_settings import parse
    from kernels.mandelbrot.frames.targets_f32 import THRESH
    spec = text
    text, _, warps = text.partition("@")
    w = int(warps) if warps.isdigit() else (WARPS_PER_SM if not warps else 0)
    grouping, _, thresh = text.partition("/")
    got = parse(grouping) if grouping else (ev.BLOCK_STEPS, ev.BLOCKS_PER_LOOK)
    t = int(thresh) if thresh.isdigit() else (THRESH if not thresh else 0)
    if got is None or not 1 <= t <= 32 or not 1 <= w <= 64:
        raise ValueError(f"bad variant {spec!r}: want STEPS,BLOCKS[/THRESH][@WARPS] with THRESH "
                         "1 to 32, WARPS 1 to 64")
    return *got, t, w


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.partition("x")
    return int(w), int(h)


def main(argv=None) -> int:
    from kernels.mandelbrot.benches import escape_variants as ev
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", nargs="+",
                    default=[f"{ev.BLOCK_STEPS},{ev.BLOCKS_PER_LOOK}"])
    ap.add_argument("--sizes", nargs="+", default=["1920x1080"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5, help="timed frames per variant a round")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--alone", type=int, default=20, metavar="N",
                    help="also time N escape launches alone, back to back (0: not)")
    ap.add_argument("--json", help="append one JSON line per variant to FILE")
    args = ap.parse_args(argv)
    # numba's simulator runs the kernels in numpy, which warns where an escaped pixel overflows
    warnings.filterwarnings("ignore", "(overflow|invalid value) encountered", RuntimeWarning)
    from kernels import backend as backends
    from kernels.mandelbrot import renderer as m
    from kernels.mandelbrot.bench import FLOAT32_FRAMES, _request
    from kernels.mandelbrot.benches.escape_variants import warp_kernel32
    try:
        variants = [parse_variant(v) for v in args.variants]
        sizes = [_size(s) for s in args.sizes]
        be = backends.resolve(args.backend)
    except (ValueError, backends.BackendUnavailable) as exc:
        print(f"f32_block_sweep: {exc}", file=sys.stderr)
        return 1
    names = [f"{s},{b}/{t}@{w}" for s, b, t, w in variants]
    digests = {name: hashlib.sha1() for name in names}
    points = {name: {} for name in names}
    for size in sizes:
        for label, view, iters in FLOAT32_FRAMES:
            frame = label if size == (1920, 1080) else f"{label} {size[0]}x{size[1]}"
            req = _request(view, size, iters)
            r32 = replace(req, number_type="float32")
            runners = {"float64": (m.Renderer(be, reuse_values=False), req)}
            for name, (s, b, t, w) in zip(names, variants):
                r = m.Renderer(be, reuse_values=False, number_type="float32", thresh=t,
                               warps_per_sm=w)
                if be.is_gpu:
                    r.target.launch.kernel = warp_kernel32(s, b)  # before its first frame
                got = r.render(replace(r32, want_values=True))
                counts = m.iteration_counts(got.values, iters)
                digests[name].update(counts.tobytes())
                runners[name] = (r, r32)
                points[name][frame] = {"iterations": int(counts.sum())}
            rounds = {key: [] for key in runners}
            order = list(runners)
            for i in range(args.rounds):
                turn = order[i % len(order):] + order[:i % len(order)]
                for key in turn:
                    rounds[key].append(_escape_ms(*runners[key], args.repeats))
            f64 = rounds["float64"]
            line = [f"{frame}: f64 {_ms(_median(f64))} ms"]
            for name in names:
                ratios = [a / b for a, b in zip(f64, rounds[name]) if a and b]
                ms = _median(rounds[name])
                ratio = statistics.median(ratios) if ratios else None
                points[name][frame].update({"float64": _median(f64), "float32": ms,
                                            "float32/float64": ratio,
                                            "rounds": [round(r, 3) for r in ratios]})
                line.append(f"{name} {_ms(ms)} ms x{_ms(ratio)}"
                            + (f" ({' '.join(f'{r:.2f}' for r in ratios)})" if ratios else ""))
            print("; ".join(line), flush=True)
            if args.alone > 0 and be.is_gpu:
                alone = {key: _alone_ms(*runners[key], args.alone) or (None, None)
                         for key in runners}
                a64 = alone["float64"]
                line = [f"{frame}, escape kernel alone (GPU ms; host ms a launch): f64 "
                        f"{_ms(a64[0])} ({_ms(a64[1])})"]
                for name in names:
                    a32 = alone[name]
                    ratio = a64[0] / a32[0] if a64[0] and a32[0] else None
                    points[name][frame]["alone"] = {"float64": a64, "float32": a32,
                                                    "float32/float64": ratio}
                    line.append(f"{name} {_ms(a32[0])} ({_ms(a32[1])}) x{_ms(ratio)}")
                print("; ".join(line), flush=True)
    first = digests[names[0]].hexdigest()[:12]
    frames = [f for f in points[names[0]]]
    print("== summary: float32/float64 on the same frame (escape-kernel ms); counts digest")
    f64 = points[names[0]]
    print(f"{'float64':<28} " + " | ".join(f"{f} {_ms(f64[f].get('float64'))} ms" for f in frames))
    for name in names:
        d = digests[name].hexdigest()[:12]
        row = " | ".join(f"x{_ms(points[name][f].get('float32/float64'))} "
                         f"{_ms(points[name][f].get('float32'))}" for f in frames)
        print(f"{name:<28} {row} | {d} {'same' if d == first else 'DIFFERENT'}")
    if any("alone" in f64[f] for f in frames):
        print("== the escape kernel alone (launched back to back; GPU ms a launch): "
              "float32/float64")
        print(f"{'float64':<28} " + " | ".join(
            f"{f} {_ms(f64[f].get('alone', {}).get('float64', (None,))[0])} ms" for f in frames))
        for name in names:
            cells = (points[name][f].get("alone", {}) for f in frames)
            row = " | ".join(f"x{_ms(a.get('float32/float64'))} "
                             f"{_ms(a.get('float32', (None,))[0])}" for a in cells)
            print(f"{name:<28} {row}")
    if args.json:
        with open(args.json, "a", encoding="utf-8") as fh:
            for name, (s, b, t, w) in zip(names, variants):
                fh.write(json.dumps({"steps": s, "blocks": b, "thresh": t,
                                     "warps per SM": w,
                                     "frames": points[name],
                                     "counts sha1": digests[name].hexdigest()[:12]}) + "\n")
    return 0


def _median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


if __name__ == "__main__":
    sys.exit(main())
