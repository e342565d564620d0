"""What numba compiled for the GPU, as a fingerprint that survives moving code between modules:
per kernel its registers and a count of each PTX instruction (names, paths and line records left
out). Two trees whose fingerprints match run the same device code, so a refactor's kernel times
can only differ by what the host does between launches.

    python3 tools/kernel_fingerprint.py [--json FILE] [--tree DIR] [--workloads A,B]
        (on a GPU machine)

Runs the bench's seahorse (float64), 1e-100 and 1e-1000 (deep) workloads once (or those named),
so that either tree compiles exactly what its bench times, then fingerprints every kernel
compiled in the process. `--tree` fingerprints another tree's kernels with this script (a copy of
an earlier commit's kernels/: git archive REV kernels | tar -x -C DIR); compare two fingerprints
with tools/fingerprint_diff.py. Kernels that numba loads from its disk cache come without their
device functions: to list those too, run with NUMBA_CACHE_DIR set to an empty folder.
"""
from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = ("mandelbrot-seahorse", "mandelbrot-deep-1e100", "mandelbrot-deep-1e1000")
OPCODE = re.compile(r"^\s*(?:@!?%p\d+\s+)?([a-z][a-z0-9_.]*)")


def ptx_histogram(ptx: str) -> dict:
    counts = collections.Counter()
    for line in ptx.splitlines():
        s = line.strip()
        if not s or s.startswith(("//", ".loc", ".file", ".section", "}", "{", "$")):
            continue
        m = OPCODE.match(s)
        if m and not s.startswith("."):
            counts[m.group(1)] += 1
    return dict(sorted(counts.items()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--tree", default=HERE, help="the tree whose kernels/ to fingerprint")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="the bench workloads to run, comma-separated")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.tree))
    from numba.cuda.dispatcher import CUDADispatcher
    import kernels.bench as kb
    if not os.path.abspath(kb.__file__).startswith(os.path.abspath(args.tree) + os.sep):
        sys.exit(f"kernels came from {kb.__file__}, not from {args.tree}")
    # the bench's own workloads compile exactly what the bench times, in either tree
    wanted = tuple(w.strip() for w in args.workloads.split(",") if w.strip())
    known = kb.all_workloads()
    missing = set(wanted) - {w.name for w in known}
    if missing:
        sys.exit(f"no workload named {', '.join(sorted(missing))} in {args.tree}")
    from kernels.backend import resolve
    be = resolve("cuda")
    for w in known:
        if w.name in wanted:
            w.run(be, 1)
    out = {}
    for obj in gc.get_objects():
        if isinstance(obj, CUDADispatcher):
            for sig in list(obj.overloads):
                try:
                    regs = obj.get_regs_per_thread(sig)
                except Exception:   # a device function, or a kernel not loaded on this device
                    regs = None
                out[f"{obj.py_func.__name__}{tuple(str(t) for t in sig)}"] = {
                    "registers": regs, "ptx": ptx_histogram(obj.inspect_asm(sig))}
    text = json.dumps(dict(sorted(out.items())), indent=1)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text)
    print(f"{len(out)} kernels fingerprinted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
