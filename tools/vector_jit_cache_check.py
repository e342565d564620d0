"""Check on a real GPU that the factory-built @cuda.jit vector kernels compile once and then come
from numba's disk cache: two fresh processes share an empty cache directory; each times the first
launch (compile or cache load) of every family × op kernel (and of dot's two kernels) and checks
its result.

    python tools/vector_jit_cache_check.py [--out DIR]

Prints one line per process and writes DIR/vector_jit_cache.json. Expect the second process's
first launches to take a few milliseconds each where the first took a few hundred.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = r"""
import json, os, time
import numpy as np
from numba import cuda
from kernels.vector import cuda_jit
from kernels.vector.ops import ELEMENTWISE_OPS, SCALAR, get_op, reference

n = int(os.environ["VECTOR_CHECK_N"])
rng = np.random.default_rng(1)
host = [rng.random(n, dtype=np.float32) + np.float32(0.5) for _ in range(2)]
kernels = [(f, name) for f in ("per-thread", "stride", "ilp4") for name in ELEMENTWISE_OPS]
out = {}
for family, name in kernels + [("stride", "dot")]:
    op = get_op(name)
    ins = tuple(cuda.to_device(h) for h in host[:len(op.inputs)])
    dst = ins[1] if op.inplace else cuda.device_array(op.out_shape(n), op.out_dtype)
    cuda.synchronize()
    t0 = time.perf_counter()
    cuda_jit.run_jit(family, name, ins, dst, SCALAR)
    cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3
    want = reference(name, host[:len(op.inputs)])
    ok = bool(np.allclose(dst.copy_to_host(), want, rtol=1e-9 if op.reduction else 1e-6))
    out[f"{family}/{name}"] = {"first_launch_ms": ms, "correct": ok}
print(json.dumps(out))
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--n", type=int, default=1 << 20, help="elements per vector")
    args = p.parse_args(argv)
    sys.path.insert(0, ROOT)
    from kernels import backend
    try:
        be = backend.resolve("cuda")
    except backend.BackendUnavailable as exc:
        # a GPU-only check: on a machine without one, one line instead of two children's tracebacks
        raise SystemExit(f"vector_jit_cache_check.py needs a usable NVIDIA GPU: {exc}") from None
    if be.simulated:
        raise SystemExit("vector_jit_cache_check.py times real compiles; unset NUMBA_ENABLE_CUDASIM")
    runs = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, VECTOR_CHECK_N=str(args.n),
                   PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
        for i in range(2):
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env, check=False,
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                print(r.stderr, file=sys.stderr)
                return 1
            kernels = json.loads(r.stdout.strip().splitlines()[-1])
            files = [f for _, _, fs in os.walk(cache) for f in fs]
            runs.append({"process": i + 1, "wall_s": time.perf_counter() - t0, "kernels": kernels,
                         "cache_files": len(files)})
            first = [k["first_launch_ms"] for k in kernels.values()]
            bad = [name for name, k in kernels.items() if not k["correct"]]
            print(f"process {i + 1}: first launches {sum(first):.0f} ms in all "
                  f"(max {max(first):.0f} ms per kernel), {len(files)} cache files, "
                  f"wrong results: {bad or 'none'}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "vector_jit_cache.json"), "w") as fh:
        json.dump(runs, fh, indent=1)
    return 0 if all(k["correct"] for r in runs for k in r["kernels"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
