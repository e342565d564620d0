"""The roofline's target check: measure the roofs, and in the same run a plain copy kernel and
longer multiply-add chains, and print both with their ratio (target: within 10 %).

    PYTHONPATH=. python tools/roofs_check.py --backend cpu
    PYTHONPATH=. python tools/roofs_check.py --backend cuda --json roofs_check.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--mib", type=int, default=None,
                    help="the bandwidth probe's array in MiB (default 1024 on a GPU, 64 on the CPU)")
    ap.add_argument("--target-ms", type=float, default=20.0,
                    help="how long one arithmetic launch of the roofs lasts (the check: 10x)")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    from kernels import backend as backends
    from kernels.bench import device_name
    from kernels.roofs.check import check, format_rows
    try:
        be = backends.resolve(args.backend)
    except backends.BackendUnavailable as exc:
        print(f"roofs_check: {exc}", file=sys.stderr)
        return 1
    rows = check(be, nbytes=args.mib * 2**20 if args.mib else None, target_ms=args.target_ms)
    print(format_rows(rows, device_name(be)))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"device": device_name(be), "rows": rows}, fh, indent=1)
        print(f"wrote {args.json}")
    return 0 if all(r["within"] in (True, None) for r in rows) else 3


if __name__ == "__main__":
    sys.exit(main())
