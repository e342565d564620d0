"""The loops of the escape warp kernels (float32 and float64) and of the roofs' chain kernels, from
their PTX compiled here (NVVM only, no GPU): per loop, its instructions and how many of them are
the arithmetic the kernel is about. float32 operations issue one a cycle, so every other
instruction in a float32 loop takes an arithmetic one's slot.

    CUDA_HOME=<toolkit with nvvm> LD_LIBRARY_PATH=<folder with libnvrtc> \\
        python tools/ptx_loops.py [--cc 9.0]
    GPU_EXPLORER_F32_BLOCK=16,2 python tools/ptx_loops.py      # another float32 step grouping
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_LABEL = re.compile(r"^(\$L__BB\d+_\d+):$")
_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);")
_GUARD = re.compile(r"^@!?%p\d+\s+")
ARITHMETIC = {
    "f32": re.compile(r"^(?:add|sub|mul|fma|neg)\.(?:rn\.)?f32$"),
    "f64": re.compile(r"^(?:add|sub|mul|fma|neg)\.(?:rn\.)?f64$"),
    "int32": re.compile(r"^mad\.lo\.s32$"),
}


def loops(ptx: str) -> list[tuple[str, collections.Counter]]:
    """(label, opcode counts) of every loop: the instructions from a label to a branch back to
    it (a nested loop's lines count in the outer one too)."""
    lines = [line.strip() for line in ptx.splitlines()]
    where = {m.group(1): i for i, line in enumerate(lines) if (m := _LABEL.match(line))}
    found = []
    for i, line in enumerate(lines):
        m = _BRANCH.search(line)
        if m and where.get(m.group(1), len(lines)) < i:
            body = [x for x in lines[where[m.group(1)] + 1:i + 1]
                    if x.endswith(";") and not x.startswith((".", "//"))]
            found.append((m.group(1), collections.Counter(_GUARD.sub("", x).split()[0]
                                                          for x in body)))
    return found


def arithmetic_share(ops: collections.Counter, kind: str) -> tuple[int, int]:
    """(arithmetic instructions of `kind`, all instructions) of one loop's opcode counts."""
    pat = ARITHMETIC[kind]
    return sum(v for k, v in ops.items() if pat.match(k)), sum(ops.values())


def _kernels():
    from numba import types as t

    from kernels.mandelbrot import escape_warp as ew
    from kernels.mandelbrot import escape_warp_f32 as ew32
    from kernels.roofs import chains
    f2, i2, u1, i1 = t.float64[:, ::1], t.int32[:, ::1], t.uint32[::1], t.int32[::1]
    i, d, s1 = t.int64, t.float64, t.float32[::1]
    yield "escape_warp_kernel32", "f32", ew32.escape_warp_kernel32.py_func, \
        (f2, i2, u1, i, i, i, s1, s1, i)
    from kernels.mandelbrot import escape_warp_f32_branchless as branchless
    from kernels.mandelbrot.unroll_f32 import BLOCK_STEPS, BLOCKS_PER_LOOK
    yield "escape_warp_kernel32_branchless", "f32", \
        branchless.build(BLOCK_STEPS, BLOCKS_PER_LOOK, cache=False).py_func, \
        (f2, i2, u1, i, i, i, s1, s1, i)
    yield "escape_warp_kernel", "f64", ew.escape_warp_kernel.py_func, \
        (f2, i2, u1, i1, i1, i, i, i, i, i, d, d, d, d, d, i)
    for kind in ("f32", "f64", "int32"):
        dt = getattr(t, {"f32": "float32", "f64": "float64", "int32": "int32"}[kind])
        yield f"chains {kind}", kind, chains._build_gpu(kind).py_func, (dt[::1], i, dt, dt)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", default="9.0", help="compute capability, e.g. 8.0 or 9.0")
    cc = tuple(int(v) for v in ap.parse_args().cc.split("."))
    from numba.cuda import dispatcher
    # device functions ask the current device for its capability: there is none here
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    from numba import cuda
    for name, kind, fn, sig in _kernels():
        try:
            ptx, _ = cuda.compile_ptx(fn, sig, cc=cc)
        except Exception as exc:
            print(f"{name}: cannot compile here ({type(exc).__name__}: "
                  f"{str(exc).splitlines()[0][:200]})")
            return 1
        for label, ops in loops(ptx):
            arith, total = arithmetic_share(ops, kind)
            top = ", ".join(f"{k} {v}" for k, v in ops.most_common(8))
            print(f"{name} loop {label}: {total} instructions, {arith} {kind} arithmetic, "
                  f"{total - arith} other ({top})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
