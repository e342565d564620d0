"""A kernel's twin for another formula: the same Python function compiled again with some of the
globals it calls (the formula's step, its shortcut) swapped for another formula's; and `named`,
a formula's own names for the functions a factory makes. No numba here.

Why a copy under a new name rather than a runtime choice or a factory: the Mandelbrot kernels keep
their code exactly as it was (their device code is checked by tools/ptx_fingerprint.py), and numba's
disk cache keys a compiled function by its file and qualified name, not by the globals it reads, so
each formula's kernel needs a name of its own (`name`, which the module binds it to).
"""
from __future__ import annotations

from ...twins import twin  # noqa: F401  (the formulas' twins are made with it)


def named(jit, suffix: str):
    """`jit` for functions renamed with `suffix` first (none: `jit` itself). numba names a
    compiled function's symbol by its module, qualified name, types and a per-process counter,
    and the CPU's JIT links same-named functions of two libraries loaded from its disk cache to
    one of them: a factory's functions for two formulas, which share all but the counter, must
    not share a name (a Burning Ship frame drawn first turned later Mandelbrot frames into ships,
    and the reverse)."""
    if not suffix:
        return jit

    def rename(fn):
        fn.__name__ += suffix
        fn.__qualname__ += suffix
        return jit(fn)
    return rename
