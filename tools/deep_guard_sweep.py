#!/usr/bin/env python3
"""The deep accuracy guard's cost on the GPU, per setting: the 1e-100 (and 1e-1000) bench frames'
re-render with the guard's last pass at ε·2^-LAST and the doubt threshold e^2 > TOL2·|z|^2.
The settings are compile-time constants, so each runs in a process of its own with a fresh numba
cache; prints the deep bench's rows for each.

    python tools/deep_guard_sweep.py [--settings 32:1,24:1,24:16] [--only deep-1e100]
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD = """
import sys
sys.path.insert(0, {root!r})
# the loop modules import the guard's constants: set them there, before the loops compile
from kernels.mandelbrot.loops import extended_loop, perturbation_loop
for mod in (extended_loop, perturbation_loop):
    mod.REDO_SHIFT, mod.LAST_SHIFT, mod.ERR_TOL2 = {redo}, {last}, {tol}
from kernels.mandelbrot.benches import bench
sys.exit(bench.main(["--backend", "cuda", "--only", {only!r}, "--repeats", "{repeats}"]))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--settings", default="32:1,24:1,24:16",
                    help="LAST:TOL2 pairs, or REDO:LAST:TOL2 (REDO_SHIFT of the first pass done again)")
    ap.add_argument("--only", default="deep-1e100")
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args()
    for spec in a.settings.split(","):
        parts = spec.split(":")
        redo, last, tol = parts if len(parts) == 3 else (16, *parts)
        env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="guard-"))
        code = CHILD.format(root=ROOT, redo=int(redo), last=int(last), tol=float(tol), only=a.only,
                            repeats=a.repeats)
        print(f"== passes again at eps*2^-{redo}, last eps*2^-{last}, doubt at e^2 > {float(tol)}*|z|^2", flush=True)
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        print("\n".join(line for line in done.stdout.splitlines() if "re-render" in line
                        or line.startswith("workload")), flush=True)
        if done.returncode:
            print(done.stderr[-1500:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
