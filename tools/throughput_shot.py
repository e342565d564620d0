"""Run one sweep in the real throughput view, offscreen, and keep what it showed: a screenshot, the
table as CSV, the points as JSON, and a short summary on stdout.

    python tools/throughput_shot.py --backend cuda --op add --max-exp 24 --out /tmp/tp

Used to check the view on a machine nobody is looking at (the GPU runner).
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    from kernels.vector.ops import IMPL_NAMES, OP_NAMES
    from kernels.vector.sweep import MODES
    p = argparse.ArgumentParser(prog="throughput_shot", description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--op", default="add", choices=OP_NAMES)
    p.add_argument("--max-exp", type=int, default=None, help="largest N as a power of two")
    p.add_argument("--impls", default=None, help=f"comma-separated, from: {', '.join(IMPL_NAMES)}")
    p.add_argument("--modes", default=None, help=f"comma-separated, from: {', '.join(MODES)}")
    p.add_argument("--out", default="/tmp/throughput", help="prefix of the .png/.csv/.json files")
    p.add_argument("--limit-s", type=float, default=300, help="cancel the sweep after this long")
    args = p.parse_args(argv)

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PyQt6.QtCore import QEventLoop, QTimer
    from PyQt6.QtWidgets import QApplication

    from explorer.views.throughput import ThroughputView
    from explorer.scheduler_qt import QtScheduler
    from kernels import backend as backends

    try:
        be = backends.resolve(args.backend)
    except backends.BackendUnavailable as exc:
        print(f"backend {args.backend} cannot run: {exc}", file=sys.stderr)
        return 1
    app = QApplication.instance() or QApplication([])
    scheduler = QtScheduler()
    view = ThroughputView(scheduler, be)
    view.resize(1100, 650)
    view.show()
    messages = []
    view.error_message.connect(lambda m: messages.append(("error", m)))
    view.status_message.connect(lambda m, _t: messages.append(("status", m)))
    view.op_combo.setCurrentText(args.op)
    if args.max_exp:
        view.set_max_exponent(args.max_exp)
    view.set_checked(impls=args.impls.split(",") if args.impls else None,
                     modes=args.modes.split(",") if args.modes else None)

    loop = QEventLoop()
    view.busy.connect(lambda b: loop.quit() if not b else None)
    QTimer.singleShot(int(args.limit_s * 1000), view.cancel_sweep)
    view.start_sweep()
    if view.in_flight:
        loop.exec()
    app.processEvents()
    view.grab().save(args.out + ".png")
    view.export_csv(args.out + ".csv")
    view.export_json(args.out + ".json")
    scheduler.shutdown(1.0)

    model = view.model
    print(f"backend: {be.label} ({be.device}); op {args.op}; {len(model.points)} point(s)")
    print("references (GB/s): " + ", ".join(f"{k}={v:.1f}" for k, v in model.refs.items() if v))
    best: dict = {}
    for pt in model.points:
        if pt.gbs:
            key = f"{pt.impl}/{pt.mode}"
            if pt.gbs > best.get(key, (0, 0))[0]:
                best[key] = (pt.gbs, pt.N)
    for key, (gbs, n) in sorted(best.items()):
        print(f"  best {key:<26} {gbs:10.1f} GB/s at N = {n:,}")
    for name, reason in model.unavailable.items():
        print(f"  unavailable {name}: {reason}")
    n = model.crossover_n()
    print(f"GPU end to end beats the CPU from N = {n:,}" if n else "no crossover measured")
    for kind, m in messages:
        if kind == "error":
            print(f"error: {m}")
    print(f"wrote {args.out}.png, .csv, .json")
    return 1 if model.last_error else 0


if __name__ == "__main__":
    sys.exit(main())
