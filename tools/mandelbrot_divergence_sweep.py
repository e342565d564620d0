"""Sweep the Mandelbrot escape launch's knobs on the GPU with the `mandelbrot-divergence` bench's
own measurement (kernels/mandelbrot/bench.py `_divergence`: each variant's seahorse rate against
its own ceiling, both in this run), to choose the defaults; prints one line per variant.

    python tools/mandelbrot_divergence_sweep.py [--repeats 5] [--json out.json]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--thresh", default="1,2,4,8,16")
    ap.add_argument("--warps", default="4,6,8,12,16,24,32")
    ap.add_argument("--launch", choices=("warp", "sorted"), default="warp",
                    help="sorted: also sweep --sample x --probe at each warps/thresh")
    ap.add_argument("--sample", default="4")
    ap.add_argument("--probe", default="256")
    ap.add_argument("--reach", default="2")
    args = ap.parse_args()
    from kernels import backend as kb
    from kernels.mandelbrot import bench as mb
    from kernels.mandelbrot.benches.escape_variants import variant
    variants = [("persistent", {"launch": "persistent"}), ("warp", {"launch": "warp"})]
    ints = lambda text: [int(v) for v in text.split(",")]  # noqa: E731
    for w in ints(args.warps):
        for t in ints(args.thresh):
            kw = {"launch": args.launch, "thresh": t, "warps_per_sm": w}
            if args.launch == "warp":
                variants.append((f"warp thresh {t} warps/SM {w}", kw))
                continue
            for sample in ints(args.sample):
                for probe in ints(args.probe):
                    for reach in ints(args.reach):
                        launch = variant(args.launch, thresh=t, warps_per_sm=w, sample=sample,
                                         probe=probe, reach=reach)
                        variants.append((f"sorted {sample}/{probe}/{reach} thresh {t} warps/SM {w}",
                                         {"launch": launch}))
    mb.DIVERGENCE_VARIANTS = tuple(variants)
    rows = mb._divergence(kb.resolve("cuda"), args.repeats)
    for top, row in zip(rows[::2], rows[1::2]):
        v = row["variant"].rsplit(":", 1)[0]
        t, r = top["metrics"], row["metrics"]
        print(f"{v:44s} ceiling {t['G iter/s']:8.1f} G iter/s {t['escape ms']:.3f} ms | seahorse "
              f"{r['G iter/s']:7.1f} G iter/s {r['escape ms']:.3f} ms | {r['% of ceiling']:.1f} %",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
