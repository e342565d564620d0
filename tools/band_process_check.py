"""Whether a band's extra GPU time on two GPUs comes from the one process they share (its GIL) or
from the machine: a poster's bands timed on GPU 0 alone, then split between two processes, one per
GPU, started together (no GIL shared), each band's wall time and timed GPU phases summed as
tools/band_compare.py sums them for two worker threads of one process.

    python3 tools/band_process_check.py [--poster deep-1e100] [--repeats 3]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _half(gpu, share, parts, poster, size, repeats, start, results):
    """Bands i with i % parts == share, on `gpu`, after every process has warmed up."""
    import numpy as np
    from band_compare import _Band
    from spread_bench import posters, warm
    from kernels.mandelbrot.tiles import bands, picture_rows
    from kernels.spread import open_pool
    request = posters(size)[poster]
    w, h = request.size
    cut = bands(h, picture_rows(request))
    picture = np.zeros((h, w, 4), np.uint8)
    pool = open_pool("cuda", gpus=str(gpu))
    warm(pool, request, w)
    best = None
    for _ in range(repeats):
        log: list = []
        jobs = [_Band(request, i, r0, n, picture, log) for i, (r0, n) in enumerate(cut)
                if i % parts == share]
        start.wait()
        t = time.perf_counter()
        for _ in pool.ordered(jobs):
            pass
        took = time.perf_counter() - t
        if best is None or took < best[0]:
            best = (took, sum(x[2] for x in log), sum(x[3] or 0.0 for x in log) / 1e3)
    pool.close()
    results.put((share, gpu, best))


def _run(gpus, poster, size, repeats):
    parts = len(gpus)
    ctx = mp.get_context("spawn")
    start, results = ctx.Barrier(parts), ctx.Queue()
    procs = [ctx.Process(target=_half, args=(g, k, parts, poster, size, repeats, start, results))
             for k, g in enumerate(gpus)]
    for p in procs:
        p.start()
    got = [results.get() for _ in procs]
    for p in procs:
        p.join()
    return sorted(got)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--poster", default="deep-1e100")
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gpus", default="0,1", help="the two processes' GPUs")
    a = ap.parse_args()
    gpus = [int(g) for g in a.gpus.split(",")]
    one = _run(gpus[:1], a.poster, a.size, a.repeats)
    two = _run(gpus, a.poster, a.size, a.repeats)
    for label, got in (("1 process, GPU 0, all bands", one), ("2 processes, one GPU each", two)):
        print(f"{a.poster} {label}: " + "; ".join(
            f"GPU {g}: {took:.3f} s (busy {busy:.3f} s, GPU phases {gpu:.3f} s)"
            for _, g, (took, busy, gpu) in got))
    t1 = one[0][2][0]
    t2 = max(b[0] for _, _, b in two)
    print(f"{a.poster}: two processes {t1 / t2:.2f}x one (slowest process; each timed from a "
          f"common start)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
