"""What each thread of numba's `add` loop did, alone and beside a busy Python thread: when it
started (us after the first), its wall and CPU time in the loop (us) and how many pieces it took.

The loop is the vector ops' own (claimed pieces, kernels/vector/cpu.py), with each thread's clocks
written out instead of folded into one span, so that a thread set aside (wall > CPU), a thread
that started late and a thread that ran slowly can be told apart (docs/PERFORMANCE.md, "Honest
CPU times").

    python tools/loop_threads.py --log2n 20 --calls 12
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from numba import njit, prange

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kernels.cpu_chunks import WORKERS, claim, control, piece, reset  # noqa: E402
from kernels.native_clock import _now_ns, _thread_cpu_ns  # noqa: E402
from kernels.vector.cpu import ADD, PIECE, _piece_op  # noqa: E402
from tools.busy_thread_bench import Busy  # noqa: E402


@njit(parallel=True)
def _add_traced(a, b, out, pieces, ctl, rec):
    n = a.size
    reset(ctl)
    for w in prange(ctl[WORKERS]):
        c0 = _thread_cpu_ns()
        w0 = _now_ns()
        took = 0
        c = claim(ctl)
        while c < pieces:
            lo, hi = piece(c, n, pieces)
            _piece_op(ADD, a[lo:hi], b[lo:hi], out[lo:hi], np.float32(1))
            took += 1
            c = claim(ctl)
        w1 = _now_ns()
        rec[w, 0], rec[w, 1], rec[w, 2], rec[w, 3] = w0, w1 - w0, _thread_cpu_ns() - c0, took


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=20)
    ap.add_argument("--calls", type=int, default=12)
    args = ap.parse_args(argv)
    n = 1 << args.log2n
    a = np.ones(n, np.float32)
    b, out = a.copy(), np.empty_like(a)
    ctl = control()
    workers = int(ctl[WORKERS])
    pieces = max(1, min(n // PIECE, 4 * workers))
    rec = np.zeros((workers, 4), np.int64)
    _add_traced(a, b, out, pieces, ctl, rec)
    print(f"N = 2^{args.log2n}, {workers} threads, {pieces} pieces; "
          "per thread: start us, wall us, CPU us, pieces")

    def calls(label):
        for _ in range(args.calls):
            _add_traced(a, b, out, pieces, ctl, rec)
            t0 = rec[:, 0].min()
            print(label, "  ".join(f"{(r[0] - t0) / 1e3:7.1f} {r[1] / 1e3:6.1f} {r[2] / 1e3:6.1f} "
                                   f"{r[3]}" for r in rec))
    calls("alone")
    with Busy():
        calls("busy ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
