"""The GPU kernels' device code without a GPU: which kernels a set of renders launches, with which
argument types, and the PTX numba compiles for them, as a fingerprint per kernel (a count of each
PTX instruction, as tools/kernel_fingerprint.py counts them on a GPU machine). Two trees whose
fingerprints match run the same device code: a refactor of the loops can be checked here, before
any device time is spent on it.

    LD_LIBRARY_PATH=DIR_OF_LIBNVRTC python tools/ptx_fingerprint.py --json a.json [--tree DIR]
    python tools/fingerprint_diff.py a.json b.json

Two steps, each in a process of its own. First the renders run under numba's CUDA simulator at a
few pixels and a few thousand iterations (the same kernels as at full size: a kernel's code
depends on its arguments' types, not their values), and each launch's kernel (its module global)
and argument types are recorded. Then, outside the simulator (so the loops take libdevice's
operations, as on a GPU), each recorded kernel is compiled to PTX for `--cc` (default 9.0) with
its dispatcher's options. Needs NVVM and NVRTC (the CUDA toolkit, or the nvidia-cuda-nvrtc wheel
on LD_LIBRARY_PATH); no driver, no GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KF = os.path.join(HERE, "..", "shared", "data", "kf-benchmarks")

DEEP_OVERLAYS = "iterations,bla-steps,perturbation-steps,rebases,redone"
DEEP_CENTRE = "-1.99999911758766165543764649311537154663"
# (the command line's arguments after --render mandelbrot) the renders whose kernels are counted
RENDERS = (
    ["--size", "16x12"],                                              # float64, histogram
    ["--size", "16x12", "--mapping", "log"],
    ["--size", "16x12", "--mapping", "sqrt"],
    ["--size", "16x12", "--number-type", "float32"],
    ["--size", "16x12", "--overlay", "iterations,lane-efficiency"],
    ["--size", "12x8", "--center", "-1.99999911758766165543764649311537154663,0",
     "--width", "1e-100", "--iters", "3000"],                         # perturbation
    ["--size", "12x8", "--center", "-1.99999911758766165543764649311537154663,0",
     "--width", "1e-20", "--iters", "3000", "--number-type", "float32"],   # float32 deltas
    ["--size", "12x8", "--center", "-1.99999911758766165543764649311537154663,0",
     "--width", "1e-100", "--iters", "3000", "--overlay", DEEP_OVERLAYS],
    ["--size", "12x8", "--location", "KF:1e1086.kfr", "--iters", "3000"],   # extended
    ["--size", "12x8", "--location", "KF:1e1086.kfr", "--iters", "3000", "--overlay",
     DEEP_OVERLAYS],
)


def _record(out_path: str, tree: str) -> None:
    """Step one, under the simulator: every kernel launch's (module, global name, function name,
    argument types) while the renders run."""
    import numba
    from numba.cuda.simulator import kernel as sim
    seen: dict = {}
    real_call = sim.FakeCUDAKernel.__call__

    def where(obj):
        for name, mod in list(sys.modules.items()):
            for key, val in list(getattr(mod, "__dict__", {}).items()):
                if val is obj:
                    return name, key
        return None, None

    def typed(arg):
        ary = getattr(arg, "_ary", None)            # a simulator device array
        return str(numba.typeof(ary if ary is not None else arg))

    def call(self, *args):
        if not (self._device or sim._kernel_context):
            mod, glob = where(self)
            sig = tuple(typed(a) for a in args)
            seen[(mod, glob, self.fn.__name__, sig)] = dict(
                fastmath=bool(self._fastmath), debug=bool(self._debug))
        return real_call(self, *args)

    sim.FakeCUDAKernel.__call__ = call
    sys.path.insert(0, tree)
    import main as entry
    for extra in RENDERS:
        args = [a.replace("KF:", KF + os.sep) for a in extra]
        with tempfile.TemporaryDirectory() as tmp:
            code = entry.main(["--render", "mandelbrot", "--backend", "cuda",
                               "--out", os.path.join(tmp, "x.npy"), *args])
        if code:
            sys.exit(f"render {' '.join(extra)} exited {code}")
    # a table without single steps (kmin > 0) takes perturbation_loop.KMIN_CODE: no option asks
    from kernels.backend import resolve
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    DeepRenderer(resolve("cuda"), kmin=2).render_values(
        DeepRequest(DEEP_CENTRE, "0", "1e-100", (12, 8), 3000))
    rows = [{"module": m, "global": g, "name": n, "sig": list(s), **opts}
            for (m, g, n, s), opts in seen.items()]
    with open(out_path, "w") as fh:
        json.dump(rows, fh)


def _registers(ptx: str, cc: tuple[int, int], cap: int | None) -> int | None:
    """Registers per thread ptxas gives the kernel (with the dispatcher's cap), or None."""
    import re
    import shutil
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w") as fh:
            fh.write(ptx)
        cmd = [ptxas, f"-arch=sm_{cc[0]}{cc[1]}", "-v", src, "-o", os.path.join(tmp, "k.o")]
        if cap:
            cmd += ["--maxrregcount", str(cap)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired):
            return None
    found = re.findall(r"Used (\d+) registers", done.stderr)
    return int(found[-1]) if found else None


def _locate(row):
    """The recorded kernel in this tree: the module global it was, or else (the code moved
    between modules: the point of a refactor) the one kernel of that name in kernels/."""
    import importlib
    import pkgutil
    try:
        return getattr(importlib.import_module(row["module"]), row["global"])
    except (ImportError, AttributeError):
        pass
    import kernels
    found = {}
    for info in pkgutil.walk_packages(kernels.__path__, "kernels."):
        try:
            mod = importlib.import_module(info.name)
        except Exception:       # a module that needs what this machine lacks
            continue
        for val in vars(mod).values():
            fn = getattr(val, "py_func", None)
            if fn is not None and fn.__name__ == row["name"] and hasattr(val, "targetoptions"):
                found[id(val)] = val
    if len(found) != 1:
        raise LookupError(f"{row['name']}: {len(found)} kernels of that name in this tree")
    return next(iter(found.values()))


def _compile(rows_path: str, tree: str, cc: tuple[int, int], registers: bool) -> dict:
    """Step two, outside the simulator: each recorded kernel compiled to PTX, counted."""
    from types import SimpleNamespace

    from numba import cuda
    from numba.cuda import dispatcher
    # a kernel's device functions are compiled for the current device's capability: with no
    # device there, say which (nothing else of the device is asked for)
    dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)
    sys.path.insert(0, tree)
    sys.path.insert(0, os.path.join(HERE, "tools"))
    from kernel_fingerprint import ptx_histogram
    out = {}
    with open(rows_path) as fh:
        rows = json.load(fh)
    for row in rows:
        key = f"{row['name']}({', '.join(row['sig'])})"
        if row["module"] is None:
            out[key] = {"module": None, "error": "not a module global: not located"}
            continue
        kernel = _locate(row)
        sig = tuple(_parse_type(t) for t in row["sig"])
        opts = kernel.targetoptions            # the real dispatcher's, as the app compiles it
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc, fastmath=opts.get("fastmath"),
                                  debug=opts.get("debug") or None,
                                  lineinfo=opts.get("lineinfo", False), opt=opts.get("opt"),
                                  launch_bounds=opts.get("launch_bounds"))
        while key in out and out[key]["module"] != row["module"]:
            key += "'"         # the same name and types in another module (zero_kernel)
        regs = _registers(ptx, cc, opts.get("max_registers")) if registers else None
        out[key] = {"module": row["module"], "registers": regs, "ptx": ptx_histogram(ptx)}
    return dict(sorted(out.items()))


def _parse_type(text: str):
    """A numba type from its str(): [readonly ]array(float64, 2d, C), float64, int64, bool..."""
    from numba.core import types
    readonly = text.startswith("readonly ")
    text = text.removeprefix("readonly ")
    if text.startswith("array("):
        dtype, ndim, layout = (p.strip() for p in text[6:text.index(")")].split(","))
        return types.Array(getattr(types, dtype), int(ndim.rstrip("d")), layout,
                           readonly=readonly)
    if text == "bool":
        return types.boolean
    return getattr(types, text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--tree", default=HERE, help="the tree whose kernels to fingerprint")
    ap.add_argument("--cc", default="9.0", help="compute capability, e.g. 9.0 or 8.6")
    ap.add_argument("--registers", action="store_true",
                    help="also the registers per thread, from the toolkit's ptxas")
    ap.add_argument("--step", choices=("record", "compile"), help=argparse.SUPPRESS)
    ap.add_argument("--rows", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    tree = os.path.abspath(args.tree)
    if args.step == "record":
        _record(args.rows, tree)
        return 0
    if args.step == "compile":
        cc = tuple(int(x) for x in args.cc.split("."))
        got = _compile(args.rows, tree, cc, args.registers)
        with open(args.json, "w") as fh:
            json.dump(got, fh, indent=1)
        failed = sum(1 for v in got.values() if "error" in v)
        print(f"{len(got)} kernels fingerprinted for sm_{args.cc.replace('.', '')}"
              + (f", {failed} not located" if failed else ""))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        rows = os.path.join(tmp, "launches.json")
        me = [sys.executable, os.path.abspath(__file__), "--json", args.json, "--tree", tree,
              "--rows", rows, "--cc", args.cc] + (["--registers"] if args.registers else [])
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", QT_QPA_PLATFORM="offscreen")
        subprocess.run(me + ["--step", "record"], env=env, check=True, cwd=tree)
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
        subprocess.run(me + ["--step", "compile"], env=env, check=True, cwd=tree)
    return 0


if __name__ == "__main__":
    sys.exit(main())
