"""The loops of the escape warp kernels (float32 and float64) and of the roofs' chain kernels, from
their PTX compiled here (NVVM only, no GPU): per loop, its instructions and how many of them are
the arithmetic the kernel is about. float32 operations issue one a cycle, so every other
instruction in a float32 loop takes an arithmetic one's slot.

    CUDA_HOME=<toolkit with nvvm> LD_LIBRARY_PATH=<folder with libnvrtc> \\
        python tools/ptx_loops.py [--cc 9.0]
    GPU_EXPLORER_F32_BLOCK=16,2 python tools/ptx_loops.py      # another float32 step grouping
    python tools/ptx_loops.py --sass      # the machine code's loops too (ptxas and nvdisasm)

--sass assembles the PTX with ptxas and lists the loops of nvdisasm's SASS the same way (what the
GPU issues: the PTX's negations fold into adds, its moves mostly vanish). ptxas and nvdisasm are
taken from PATH, CUDA_HOME/bin or the NVDISASM variable (nvdisasm also comes in the
nvidia-cuda-nvdisasm wheel).
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
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


_SASS_LABEL = re.compile(r"^(\.L_x_\d+):$")
_SASS_BRANCH = re.compile(r"\bBRA(?:\.[A-Z]+)*\s+(?:[A-Za-z0-9_.]+,\s*)?`\((\.L_x_\d+)\)")
_SASS_OP = re.compile(r"^/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)")
SASS_ARITHMETIC = {"f32": re.compile(r"^(?:FADD|FMUL|FFMA)(?:\.|$)"),
                   "f64": re.compile(r"^(?:DADD|DMUL|DFMA)(?:\.|$)"),
                   "int32": re.compile(r"^IMAD(?:\.|$)")}


def sass_loops(sass: str) -> list[tuple[str, collections.Counter]]:
    """loops() for nvdisasm's listing: (label, opcode counts) from a label to a branch back."""
    lines = [line.strip() for line in sass.splitlines()]
    where = {m.group(1): i for i, line in enumerate(lines) if (m := _SASS_LABEL.match(line))}
    found = []
    for i, line in enumerate(lines):
        m = _SASS_BRANCH.search(line)
        if m and where.get(m.group(1), len(lines)) < i:
            ops = collections.Counter(mo.group(1) for x in lines[where[m.group(1)] + 1:i + 1]
                                      if (mo := _SASS_OP.match(x)))
            found.append((m.group(1), ops))
    return found


def _tool(name: str, env: str | None = None) -> str | None:
    cuda_home = os.environ.get("CUDA_HOME")
    return ((os.environ.get(env) if env else None) or shutil.which(name)
            or (cuda_home and shutil.which(name, path=os.path.join(cuda_home, "bin"))))


def sass_of(ptx: str, cc: tuple[int, int]) -> str:
    """nvdisasm's listing of `ptx` assembled by ptxas for sm_<cc> (RuntimeError: no tools)."""
    ptxas, nvdisasm = _tool("ptxas"), _tool("nvdisasm", "NVDISASM")
    if not (ptxas and nvdisasm):
        raise RuntimeError("ptxas and nvdisasm are needed for --sass (PATH, CUDA_HOME/bin, "
                           "NVDISASM)")
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(ptx)
        subprocess.run([ptxas, f"-arch=sm_{cc[0]}{cc[1]}", src, "-o", obj], check=True,
                       capture_output=True)
        return subprocess.run([nvdisasm, "-c", obj], check=True, capture_output=True,
                              text=True).stdout


def arithmetic_share(ops: collections.Counter, kind: str) -> tuple[int, int]:
    """(arithmetic instructions of `kind`, all instructions) of one loop's opcode counts."""
    pat = ARITHMETIC[kind]
    return sum(v for k, v in ops.items() if pat.match(k)), sum(ops.values())


def _kernels():
    from numba import types as t

    from kernels.mandelbrot.loops import escape_warp as ew
    from kernels.roofs import chains
    f2, i2, u1, i1 = t.float64[:, ::1], t.int32[:, ::1], t.uint32[::1], t.int32[::1]
    i, d, s1 = t.int64, t.float64, t.float32[::1]
    from kernels.mandelbrot.benches import escape_variants as ev
    # at GPU_EXPLORER_F32_BLOCK's grouping where that is set (escape_variants.py)
    yield "escape_warp_kernel32", "f32", ev.warp_kernel32().py_func, \
        (f2, i2, u1, i, i, i, s1, s1, i)
    yield "escape_warp_kernel", "f64", ew.escape_warp_kernel.py_func, \
        (f2, i2, u1, i1, i1, i, i, i, i, i, d, d, d, d, d, i)
    yield from _deep_walks()
    for kind in ("f32", "f64", "int32"):
        dt = getattr(t, {"f32": "float32", "f64": "float64", "int32": "int32"}[kind])
        yield f"chains {kind}", kind, chains._build_gpu(kind).py_func, (dt[::1], i, dt, dt)


def _deep_walks():
    """The float32-delta perturbation pass in a one-pixel kernel: make_walk's compact walk (32-bit
    integers, packed and carried loads) and its 64-bit one, the same float32 operations; and
    make_walk's float64 pass, the loop float64 deltas run."""
    try:
        from kernels.mandelbrot.loops import perturbation_loop as pl
    except ImportError:         # gmpy2 missing: the deep package needs it
        return
    from kernels.mandelbrot.loops.perturbation_loop import make_walk
    from kernels.mandelbrot.loops.targets import GPU_ADD32, GPU_MUL32, GPU_SQRT32, gpu_jit
    old = make_walk(GPU_MUL32, GPU_ADD32, GPU_SQRT32, gpu_jit(), None, pl.LIMITS32)[0]
    sig = ("float64[::1], int64[::1], float32[::1], float32[::1], float32[::1], float32[::1], "
           "int64[:, ::1], int64, float64")
    for name, walk in (("deep float32 walk, int32", pl._walk_gpu32),
                       ("deep float32 walk, int64", old)):
        yield name, "f32", _one_pixel(walk), sig
    from kernels.mandelbrot.loops.perturbation_loop import _walk_gpu as walk64
    yield "deep float64 walk", "f64", _one_pixel(walk64), (
        "float64[::1], int64[::1], float64[::1], float64[::1], float64[::1], float64[::1], "
        "int64[:, ::1], int64, float64")


def _one_pixel(walk):
    def one_pixel(out, counts, cdr, cdi, zo, bt, levels, max_iter, inj):
        v, a, b, sk, rb, doubt = walk(cdr[0], cdi[0], zo, bt, levels, max_iter, 1.0, inj)
        out[0] = v
        counts[0] = a + b + sk + rb + doubt
    return one_pixel


_WIDE = re.compile(r"^(?:add|sub|mul|mad|setp|selp|shl|shr|and|or|xor|min|max|neg|cvt)\."
                   r"(?:[a-z]+\.)*[sub]64(?:\.|$)")


def wide_integer(ops: collections.Counter) -> int:
    """How many of a loop's instructions are 64-bit integer work (two instructions each on the
    GPU); conversions to or from 64 bits count."""
    return sum(v for k, v in ops.items() if _WIDE.match(k))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", default="9.0", help="compute capability, e.g. 8.0 or 9.0")
    ap.add_argument("--sass", action="store_true", help="the SASS loops too (ptxas, nvdisasm)")
    args = ap.parse_args()
    cc = tuple(int(v) for v in args.cc.split("."))
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
                  f"{total - arith} other, {wide_integer(ops)} 64-bit integer ({top})")
        if not args.sass:
            continue
        try:
            sass = sass_of(ptx, cc)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            print(f"{name}: no SASS ({exc})")
            return 1
        for label, ops in sass_loops(sass):
            arith = sum(v for k, v in ops.items() if SASS_ARITHMETIC[kind].match(k))
            total = sum(ops.values())
            top = ", ".join(f"{k} {v}" for k, v in ops.most_common(6))
            print(f"{name} SASS loop {label}: {total} instructions, {arith} {kind} arithmetic, "
                  f"{total - arith} other ({top})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
