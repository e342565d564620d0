"""numba's parallel `add` as the vector view runs it (stamped inside its loop, cpu_chunks), alone
and beside a thread running Python: with all numba threads, with one core left to the busy thread,
and with short interpreter switch intervals (which would shrink a wait for the GIL).

    PYTHONPATH=. python tools/cpu_busy_check.py [--log2n 22]
    NUMBA_THREADING_LAYER=workqueue PYTHONPATH=. python tools/cpu_busy_check.py
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=22)
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args(argv)
    import numba
    import numpy as np

    from kernels.vector.cpu import numba_ops
    n = 1 << args.log2n
    a = np.random.default_rng(0).random(n).astype(np.float32)
    b, c = a.copy(), a.copy()
    add = numba_ops()["add"]
    add([a, b], c, 1.0)

    def med():
        return statistics.median(add([a, b], c, 1.0) for _ in range(args.repeats))
    threads = numba.get_num_threads()
    print(f"{numba.threading_layer()} layer, {threads} threads, add at N = 2^{args.log2n}: "
          "median ms stamped inside the loop")
    print(f"  alone: {med():.3f}")
    stop = threading.Event()

    def busy():
        k = 0
        while not stop.is_set():
            for i in range(2000):
                k += i
    worker = threading.Thread(target=busy, daemon=True)
    worker.start()
    try:
        print(f"  beside a busy thread: {med():.3f}")
        numba.set_num_threads(max(1, threads - 1))
        print(f"  beside it, one core left to it: {med():.3f}")
        numba.set_num_threads(threads)
        before = sys.getswitchinterval()
        for us in (200, 50):
            sys.setswitchinterval(us * 1e-6)
            print(f"  beside it, {us} us switch interval: {med():.3f}")
        sys.setswitchinterval(before)
    finally:
        stop.set()
        worker.join()
    print(f"  alone again: {med():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
