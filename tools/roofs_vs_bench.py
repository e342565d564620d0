"""Issue 33's roof checks on a bench report: the bandwidth roof against the best stream kernel the
bench measured (target: within 5 %), the roofs' probes, spreads and method, and every result above
its roof beyond the roof's spread (target: none).

    python main.py --bench --backend cuda --only vector --json bench.json
    PYTHONPATH=. python tools/roofs_vs_bench.py bench.json
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TARGET = 0.05


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    from kernels.roofs.report import roofs_summary
    with open(argv[0], encoding="utf-8") as fh:
        report = json.load(fh)
    if not report.get("roofs"):
        print("roofs_vs_bench: the report holds no roofs (no result counted work)")
        return 1
    print(roofs_summary(report))
    roof = report["roofs"].get("bandwidth_Bps")
    best, who = 0.0, None
    for r in report.get("results", []):
        if not r.get("variant", "").endswith("/kernel"):
            continue                    # end to end the bus sets the pace, not the memory
        for w in r.get("work", []):
            if (w.get("bytes_per_s") or 0) > best:
                best, who = w["bytes_per_s"], f"{r['workload']} {r['variant']} {r['size']}"
    ok = True
    if roof and best:
        ratio = roof / best
        ok = abs(ratio - 1) <= TARGET and not report.get("roofs_beaten")
        print(f"bandwidth roof {roof:.4g} B/s, best stream kernel {best:.4g} B/s ({who}): "
              f"roof / best = {ratio:.3f} (target within {TARGET:.0%})")
    else:
        print("no kernel-mode stream result with a time, or no bandwidth roof")
    beaten = report.get("roofs_beaten") or []
    print(f"results above their roof beyond its spread: {len(beaten)}")
    return 0 if ok and not beaten else 3


if __name__ == "__main__":
    sys.exit(main())
