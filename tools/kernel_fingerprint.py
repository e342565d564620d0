"""What numba compiled for the GPU, as a fingerprint that survives moving code between modules:
per kernel its registers and a count of each PTX instruction (names, paths and line records left
out). Two trees whose fingerprints match run the same device code, so a refactor's kernel times
can only differ by what the host does between launches.

    python3 tools/kernel_fingerprint.py [--json FILE]     (from the tree's root, on a GPU machine)

Runs the bench's seahorse (float64), 1e-100 and 1e-1000 (deep) workloads once, so that either
tree compiles exactly what its bench times, then fingerprints every kernel compiled in the process.
Kernels that numba loads from its disk cache come without their device functions: to list those
too, run with NUMBA_CACHE_DIR set to an empty folder.
"""
from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

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
    args = ap.parse_args()
    from numba.cuda.dispatcher import CUDADispatcher
    import kernels.bench as kb
    # the bench's own workloads compile exactly what the bench times, in either tree
    wanted = ("mandelbrot-seahorse", "mandelbrot-deep-1e100", "mandelbrot-deep-1e1000")
    from kernels.backend import resolve
    be = resolve("cuda")
    for w in kb.all_workloads():
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
