"""The bench's deep float32 pair (kernels/mandelbrot/bench.py FLOAT32_DEEP: 1e-25, 10,000
iterations) with float64 and float32 deltas in alternating rounds in one process, and what each
loop does per step: kernel ms, the frame's perturbation and BLA steps, ns per step on the whole
GPU, the first-pass kernel's registers per thread (which bound the warps an SM keeps to hide
latency), and the share of pixels whose counts differ between the two.

    python tools/deep_f32_pair.py [--size 1920x1080] [--rounds 3] [--repeats 5]
    GPU_EXPLORER_F32_DEEP_INT=64 python tools/deep_f32_pair.py     # the float32 loop before
(tools/gpu_f32_speed.sh runs both.)
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _registers(kernel) -> int | None:
    """Registers per thread of the compiled kernel (None where numba cannot say)."""
    try:
        got = kernel.get_regs_per_thread()
        return int(max(got.values()) if isinstance(got, dict) else got)
    except Exception:
        return None


def _ms(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--backend", default="cuda")
    args = ap.parse_args(argv)
    import numpy as np

    from kernels import backend as backends
    from kernels import bench
    from kernels.mandelbrot.bench import FLOAT32_DEEP
    from kernels.mandelbrot.loops import perturbation_loop
    from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as loc
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    try:
        be = backends.resolve(args.backend)
        w, _, h = args.size.partition("x")
        size = (int(w), int(h))
    except (ValueError, backends.BackendUnavailable) as exc:
        print(f"deep_f32_pair: {exc}", file=sys.stderr)
        return 1
    width, iters, _ = FLOAT32_DEEP
    req = DeepRequest(loc.center_re, loc.center_im, width, size, iters)
    loop = "int64 (make_walk)" if perturbation_loop.WALK_INT64 else "int32, one load a step"
    print(f"deep pair {width}, {iters} iterations, {size[0]}x{size[1]}; float32 loop: {loop}")
    runs, firsts = {}, {}
    for number_type in ("float64", "float32"):
        r = DeepRenderer(be)
        r.number_type = number_type
        firsts[number_type] = r.render_values(req)       # reference, table, compile
        runs[number_type] = (r, [])
    order = list(runs)
    for i in range(args.rounds):
        for number_type in order[i % 2:] + order[:i % 2]:
            r, ms = runs[number_type]
            got, _ = bench.time_runs(lambda: r.render_values(req).timings, args.repeats, warmup=1)
            timed = [t.phases_ms.get("kernel") for t in got]
            ms.append(statistics.median(timed) if None not in timed else None)
    differ = float(np.mean(np.floor(firsts["float64"].values)
                           != np.floor(firsts["float32"].values)))
    kernels = {"float64": perturbation_loop.CODE.gpu_first,
               "float32": perturbation_loop.CODE32.gpu_first}
    med = {k: statistics.median(v[1]) if None not in v[1] else None for k, v in runs.items()}
    for number_type, (_, ms) in runs.items():
        st = firsts[number_type].stats
        steps = st["perturbation_steps"] + st["bla_steps"]
        ns = med[number_type] * 1e6 / steps if steps and med[number_type] else float("nan")
        print(f"  {number_type} deltas ({firsts[number_type].number_type}): kernel "
              f"{_ms(med[number_type])} ms (rounds {' '.join(_ms(v) for v in ms)}); "
              f"{st['perturbation_steps']:,} perturbation + {st['bla_steps']:,} BLA steps "
              f"({st['bla_iterations']:,} iterations skipped), {st['rebases']:,} rebases, "
              f"{st['redone_pixels']:,} pixels redone; {ns * 1e3:.2f} ps a step on the GPU; "
              f"{_registers(kernels[number_type])} registers a thread")
    ratios = [a / b for a, b in zip(runs["float64"][1], runs["float32"][1]) if a and b]
    print(f"  float32/float64 (kernel time): x{_ms(statistics.median(ratios) if ratios else None)} "
          f"(rounds {' '.join(f'{v:.2f}' for v in ratios)}); counts that differ between the "
          f"two: {differ:.2%} of the pixels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
