"""Count the machine instructions in the loops of the rng package's GPU kernels, without a GPU:
where montecarlo.INT_ALU_OPS_PER_POINT (22) comes from, and how many instructions the
generator and the ceiling kernels spend per 16-byte store.

    python3 tools/rng_sass_census.py [--cc 9.0]

Needs numba-cuda's NVVM and NVRTC (the nvidia-cuda-nvcc-cu12 and nvidia-cuda-nvrtc-cu12 wheels do;
point LD_LIBRARY_PATH at their lib folders when numba cannot find them), and `ptxas` and
`nvdisasm` on PATH (nvidia-cuda-nvcc-cu12 has ptxas, nvidia-cuda-nvdisasm has nvdisasm). For each
kernel it prints the registers ptxas gives it and, for every loop (a backward branch), its
instruction count, its stores and loads, and the split between the integer ALU (logic, shifts,
adds, compares, selects) and the multiply-add unit (IMAD and VIADD forms).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types as pytypes
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

ALU = ("LOP3", "SHF", "IADD3", "ISETP", "SEL", "LEA", "PRMT", "FLO", "POPC", "IABS", "IMNMX")
FMA_UNIT = ("IMAD", "VIADD")


def _no_device(cc):
    """Compile device functions for `cc` with no GPU: numba asks the current device for it."""
    from numba.cuda import dispatcher
    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=cc)


def sass_of(pyfunc, sig, cc) -> tuple[str, str]:
    from numba import cuda
    ptx, _ = cuda.compile_ptx(pyfunc, sig, cc=cc)
    with tempfile.TemporaryDirectory() as d:
        src, cubin = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as fh:
            fh.write(ptx)
        arch = f"sm_{cc[0]}{cc[1]}"
        info = subprocess.run(["ptxas", f"-arch={arch}", "-O3", "-v", src, "-o", cubin],
                              capture_output=True, text=True, check=False)
        if info.returncode:
            # an older ptxas refuses a newer PTX version line; the code itself is plain
            with open(src, "w") as fh:
                fh.write(re.sub(r"^\.version \d+\.\d+", ".version 8.0", ptx, flags=re.MULTILINE))
            info = subprocess.run(["ptxas", f"-arch={arch}", "-O3", "-v", src, "-o", cubin],
                                  capture_output=True, text=True, check=True)
        dis = subprocess.run(["nvdisasm", "-c", cubin], capture_output=True, text=True, check=True)
    return info.stderr + info.stdout, dis.stdout


def instructions(sass: str) -> list[str]:
    out = []
    for line in sass.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4}\*/\s*(.*?);", line)
        if m:
            out.append(m.group(1))
        elif re.match(r"^\.L\w+:", line.strip()):
            out.append(line.strip())
    return out


def loops(code: list[str]):
    for j, line in enumerate(code):
        m = re.search(r"BRA `\((\.L\w+)\)", line)
        if m and m.group(1) + ":" in code[:j]:
            i = code.index(m.group(1) + ":")
            yield [x for x in code[i + 1:j + 1] if not x.startswith(".L")]


def opcode(line: str) -> str:
    parts = line.split()
    return parts[1] if parts[0].startswith("@") else parts[0]


def report(name: str, pyfunc, sig, cc) -> None:
    info, sass = sass_of(pyfunc, sig, cc)
    regs = re.findall(r"Used (\d+) registers", info)
    print(f"{name}: {regs[-1] if regs else '?'} registers")
    for body in loops(instructions(sass)):
        ops = Counter(opcode(x) for x in body)
        alu = sum(v for k, v in ops.items() if k.startswith(ALU))
        fma = sum(v for k, v in ops.items() if k.startswith(FMA_UNIT))
        st = sum(v for k, v in ops.items() if k.startswith("STG"))
        ld = sum(v for k, v in ops.items() if k.startswith("LDG"))
        print(f"  loop of {len(body):4d} instructions: {alu} integer ALU, {fma} multiply-add unit, "
              f"{st} stores, {ld} loads  ({', '.join(sorted({k for k in ops if k.startswith(('STG', 'LDG'))}))})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", default="9.0", help="compute capability to compile for (default 9.0)")
    args = ap.parse_args()
    for tool in ("ptxas", "nvdisasm"):
        if shutil.which(tool) is None:
            print(f"{tool} is not on PATH; see this script's docstring", file=sys.stderr)
            return 1
    cc = tuple(int(p) for p in args.cc.split("."))
    _no_device(cc)
    import numba
    from numba import float32, float64, int64, types

    from kernels.rng import ceilings as C
    from kernels.rng import montecarlo as M
    from kernels.rng import xoroshiro as X
    st = numba.from_dtype(X.state_dtype())
    report("monte carlo (four points per loop)", M.gpu_kernel().py_func,
           (types.int64, st[::1], st[::1], int64[::1]), cc)
    for dtype, nb in (("float32", float32), ("float64", float64)):
        for normal in (False, True):
            kernel = X.generate_kernel(dtype, normal)
            report(f"generate {'normal' if normal else 'uniform'} {dtype}", kernel.py_func,
                   (nb[::1], types.int64, types.int64, st[::1], st[::1]), cc)
        report(f"fill {dtype} (16-byte stores)", C.fill_kernel(dtype).py_func,
               (nb[::1], types.int64, nb), cc)
        report(f"read {dtype} (16-byte loads)", C.read_kernel(nb, dtype).py_func,
               (nb[::1], types.int64, nb[::1]), cc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
