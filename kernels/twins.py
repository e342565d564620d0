"""A kernel's twin: the same Python function compiled again under a name of its own, some of the
globals it reads swapped for other values. No numba here.

Why a copy under a new name rather than a factory's closure: numba's disk cache keys a compiled
function by its file and qualified name, and keys a closure by its cells too, which pickle
differently in each process, so a factory's kernels compile again at every start; a twin reads
module globals (frozen as constants at compile time) and is served by the cache. Used for the
Mandelbrot's formulas (kernels/mandelbrot/loops/formula_twins.py) and the random numbers' kernels.
"""
from __future__ import annotations

import types


def twin(fn, name: str, *, home: str | None = None, **swap):
    """A copy of the plain function `fn` (a kernel's py_func) named `name`, reading the globals
    named in `swap` with those values instead; LookupError when `fn` reads none by one of those
    names (a rename left behind would otherwise compile the old formula silently). `home`: the
    source file numba's disk cache keys the copy by (default fn's own), for a copy of shared code
    around another file's loop: an edit of the loop there then recompiles it."""
    code = fn.__code__
    unread = [k for k in swap if k not in code.co_names]
    if unread:
        raise LookupError(f"{fn.__name__} reads no global {', '.join(unread)}: nothing to swap")
    code = code.replace(co_filename=home) if home else code
    copy = types.FunctionType(code.replace(co_name=name, co_qualname=name),
                              dict(fn.__globals__, **swap), name, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = name
    copy.__doc__ = fn.__doc__
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy
