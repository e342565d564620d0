"""Pageable end-to-end `add` at N = 2^24 through the sweep's runner, measured several times in one
process, to see whether its figure moves between a few levels (where the host buffers' pages and
the measuring thread sit) rather than at random. Run under `taskset -c CPUS` to pin it.

    PYTHONPATH=. python tools/pageable_numa.py [--runs 8] [--log2n 24] [--impl nvrtc]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--log2n", type=int, default=24)
    ap.add_argument("--impl", default="cuda-jit-stride")
    ap.add_argument("--mode", default="pageable")
    args = ap.parse_args(argv)
    from kernels import backend as backends
    from kernels.vector.registry import implementations
    from kernels.vector.runner import PointRunner
    be = backends.resolve("cuda")
    impl = next(i for i in implementations(be) if i.name == args.impl)
    runner = PointRunner(be, repeats=7, budget_s=2.0)
    n = 1 << args.log2n
    got = []
    for _ in range(args.runs):
        got.append(runner.measure("add", impl, args.mode, n).gbs)
    cpus = sorted(os.sched_getaffinity(0))
    print(f"{args.impl}/{args.mode} N=2^{args.log2n} on CPUs {cpus[0]}-{cpus[-1]} ({len(cpus)}): "
          + " ".join(f"{g:.2f}" for g in got) + " GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
