"""A CPU op's own time after a pause before each call, alone: how much of the slowdown beside a
busy Python thread (a wait for the GIL before each call) a pause of that length alone brings.

    python tools/cpu_pause_bench.py --log2n 20

Prints the median ms of NumPy's `add` (its thread's CPU time) and numba's (its loop's stamped
span) with no pause, after sleeping 1, 5 and 20 ms, and after spinning 5 ms in Python, before
each call (docs/PERFORMANCE.md, "Honest CPU times").
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=20)
    ap.add_argument("--calls", type=int, default=100)
    args = ap.parse_args(argv)
    import numpy as np

    from kernels.native_clock import thread_ms
    from kernels.vector import cpu
    numba_add = cpu.numba_ops()["add"]
    a = np.ones(1 << args.log2n, np.float32)
    b, c = a.copy(), a.copy()
    ops = {"numpy": lambda: thread_ms(np.add, a, b, c), "cpu-numba": lambda: numba_add([a, b], c, 1.0)}
    pauses = {"none": lambda: None, "sleep 1 ms": lambda: time.sleep(0.001),
              "sleep 5 ms": lambda: time.sleep(0.005), "spin 5 ms": lambda: _spin(0.005),
              "sleep 20 ms": lambda: time.sleep(0.02)}
    print(f"N = 2^{args.log2n}, median ms of {args.calls} calls, a pause before each")
    print(f"{'pause':12}" + "".join(f"{name:>12}" for name in ops))
    for label, pause in pauses.items():
        row = []
        for op in ops.values():
            op()
            times = []
            for _ in range(args.calls):
                pause()
                times.append(op())
            row.append(statistics.median(times))
        print(f"{label:12}" + "".join(f"{v:12.4f}" for v in row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
