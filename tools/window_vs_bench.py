"""The throughput view's sweep, driven offscreen while the GUI thread keeps repainting and running
Python (as a window does while the user hovers), against the headless runner at the same N in the
same process: issue 33's check that the window measures as well as the bench.

    PYTHONPATH=. python tools/window_vs_bench.py --backend cuda --op add --max-exp 24 --out /tmp/w

Prints, per implementation and mode, the window's GB/s at N = 2^max-exp, the headless GB/s, their
ratio, and the worst fall between neighbouring sizes above N = 2^20 of each kernel curve; writes
the view's screenshot and a JSON of the rows.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _worst_fall(points) -> float | None:
    """The largest drop (ratio > 1) of GB/s from one size to the next above N = 2^20."""
    pts = sorted((p.N, p.gbs) for p in points if p.gbs and p.N > 2**20)
    falls = [a / b for (_, a), (_, b) in zip(pts, pts[1:]) if b]
    return max(falls, default=None)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cuda", choices=("cpu", "cuda"))
    ap.add_argument("--op", default="add")
    ap.add_argument("--max-exp", type=int, default=24)
    ap.add_argument("--busy-ms", type=float, default=8.0,
                    help="Python work the GUI thread does per repaint tick (every 16 ms)")
    ap.add_argument("--tick-ms", type=int, default=16,
                    help="how often the GUI thread repaints (0: only when the view asks, as a "
                         "window nobody touches)")
    ap.add_argument("--out", default="/tmp/window_vs_bench")
    ap.add_argument("--headless-runs", type=int, default=3,
                    help="headless measurements per row: the ratio is to their median, and their "
                         "spread (max/min) says how far the headless figure itself moves")
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PyQt6.QtCore import QEventLoop, QTimer
    from PyQt6.QtWidgets import QApplication

    from explorer.scheduler_qt import QtScheduler
    from explorer.views.throughput import ThroughputView
    from kernels import backend as backends
    from kernels.bench import device_name
    from kernels.timing import gpu_method_note
    from kernels.vector.registry import implementations
    from kernels.vector.cpu_process import point_runner

    be = backends.resolve(args.backend)
    app = QApplication.instance() or QApplication([])
    scheduler = QtScheduler()
    view = ThroughputView(scheduler, be)
    view.resize(1200, 700)
    view.show()
    view.op_combo.setCurrentText(args.op)
    view.set_max_exponent(args.max_exp)

    ticks = []

    def storm():                       # a repaint and a burst of Python, as hovering causes
        ticks.append(time.perf_counter())
        view.repaint()
        t = time.perf_counter()
        n = 0
        while time.perf_counter() - t < args.busy_ms * 1e-3:
            n += 1
    ticker = QTimer()
    ticker.timeout.connect(storm)
    if args.tick_ms > 0:
        ticker.start(args.tick_ms)
    loop = QEventLoop()
    view.busy.connect(lambda b: loop.quit() if not b else None)
    view.start_sweep()
    if view.in_flight:
        loop.exec()
    ticker.stop()
    gap = max((b - a for a, b in zip(ticks, ticks[1:])), default=0.0) * 1e3
    app.processEvents()
    view.grab().save(args.out + ".png")
    scheduler.shutdown(1.0)

    n = 1 << args.max_exp
    impls = {i.name: i for i in implementations(be) if i.available}
    runner = point_runner(be, repeats=7, budget_s=2.0)   # as the bench measures (cpu_process)
    rows = []
    note = gpu_method_note(be) if be.is_gpu else \
        "cpu-numba by its loop's own stamps, NumPy by its thread's CPU time"
    print(f"{device_name(be)}; {note}; op {args.op}; N = 2^{args.max_exp}")
    print(f"{'implementation/mode':28} {'window GB/s':>12} {'headless':>10} {'ratio':>7} "
          f"{'headless spread':>16} {'worst fall >2^20':>17}")
    for (impl, mode) in sorted({(p.impl, p.mode) for p in view.model.points}):
        curve = [p for p in view.model.points if p.impl == impl and p.mode == mode]
        at = next((p for p in curve if p.N == n and p.gbs), None)
        if at is None or impl not in impls:
            continue
        heads = sorted(g for g in (runner.measure(args.op, impls[impl], mode, n).gbs
                                   for _ in range(max(1, args.headless_runs))) if g)
        head = heads[len(heads) // 2] if heads else None
        spread = heads[-1] / heads[0] if heads else None
        ratio = at.gbs / head if head else None
        fall = _worst_fall(curve)
        rows.append({"impl": impl, "mode": mode, "window_gbs": at.gbs, "headless_gbs": head,
                     "headless_runs_gbs": heads, "ratio": ratio, "worst_fall": fall})
        print(f"{impl + '/' + mode:28} {at.gbs:12.1f} {head or 0:10.1f} "
              f"{ratio or 0:7.3f} {spread or 0:16.3f} {fall or 0:17.2f}")
    with open(args.out + ".json", "w", encoding="utf-8") as fh:
        json.dump({"device": device_name(be), "method": gpu_method_note(be), "op": args.op,
                   "log2n": args.max_exp, "rows": rows, "longest_tick_gap_ms": gap}, fh, indent=1)
    bad = [r for r in rows if r["ratio"] is None or abs(r["ratio"] - 1) > 0.10
           or (r["mode"] == "kernel" and (r["worst_fall"] or 0) > 2)]
    print(f"{len(rows) - len(bad)} of {len(rows)} within 10 % and without a 2x fall; "
          f"longest gap between repaint ticks during the sweep {gap:.1f} ms "
          f"(one due every {args.tick_ms} ms); wrote {args.out}.png, .json")
    return 0 if not bad else 3


if __name__ == "__main__":
    sys.exit(main())
