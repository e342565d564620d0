"""Kernel time of each bench case in two sets of `--bench` JSON files (e.g. a refactor against the
commit before it, from tools/gpu_ab.sh): per case the medians' range in each set and the ratio of
the set medians, so "the same within noise" can be read off the spread.

    python3 tools/bench_diff.py NEW.json [NEW2.json …] -- BASE.json [BASE2.json …]
"""
from __future__ import annotations

import json
import statistics
import sys


def cases(paths: list[str]) -> dict[tuple, list[float]]:
    out: dict[tuple, list[float]] = {}
    for path in paths:
        with open(path) as fh:
            for r in json.load(fh)["results"]:
                ms = (r.get("phases_ms") or {}).get("kernel")
                if ms is not None:
                    key = (r["workload"], r.get("variant", ""), r.get("size", ""))
                    out.setdefault(key, []).append(float(ms))
    return out


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(__doc__.strip().splitlines()[-1].strip())
        return 2
    cut = argv.index("--")
    new, base = cases(argv[:cut]), cases(argv[cut + 1:])
    print(f"{'workload':28} {'variant':26} {'size':14} {'new ms':>17} {'base ms':>17} {'new/base':>8}")
    for key in sorted(set(new) | set(base)):
        a, b = new.get(key, []), base.get(key, [])
        span = lambda v: f"{min(v):.3f}-{max(v):.3f}" if v else "-"
        ratio = f"{statistics.median(a) / statistics.median(b):.3f}" if a and b and statistics.median(b) else "-"
        print(f"{key[0][:28]:28} {str(key[1])[:26]:26} {str(key[2])[:14]:14} {span(a):>17} {span(b):>17} {ratio:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
