"""numba's disk cache for a jitted closure over other kernels (native_clock.timed's wrapper),
keyed by what the kernels it closes over ARE rather than by their pickle.

numba keys a closure's cached code by a pickle of its cell contents, and a pickled dispatcher
carries a uuid made afresh in every process: the key never matched, so each start compiled the
wrapper again (~0.2-0.4 s on the 2-core machine, before a CPU frame's first pixel) and appended
another entry to the index and another .nbc file, a slower index to read at every start.

Here a dispatcher in a cell is keyed by its module, its name, its options and the size and
modification time of its source file (the kernel's code is linked into the wrapper, so an edit of
that file must miss); any other cell value by its pickle, as numba does. Callees of the kernel in
other files are not followed: numba's own caveat for cached kernels, unchanged.

A wrapper loaded from the disk never loads its kernels, and numba starts its thread pool for cached
code only where the compile noted it, which it does not when the parallel kernel came from the
disk itself (every start but the first): the wrapper's first call then crashed (SIGSEGV). Loading
starts the pool first when a kernel it closes over is parallel.
"""
from __future__ import annotations

import hashlib
import inspect
import os

from numba.core.caching import FunctionCache
from numba.core.serialize import dumps


def _source_stamp(func) -> tuple:
    try:
        st = os.stat(inspect.getfile(func))
        return (st.st_mtime, st.st_size)
    except (OSError, TypeError):
        return ()


def cell_key(value):
    """A value for the index key that is the same in every process for the same kernel."""
    py_func = getattr(value, "py_func", None)
    if py_func is not None and hasattr(value, "targetoptions"):     # a numba dispatcher
        return ("dispatcher", py_func.__module__, py_func.__qualname__,
                sorted((k, repr(v)) for k, v in value.targetoptions.items()),
                _source_stamp(py_func))
    return ("pickle", hashlib.sha256(dumps(value)).hexdigest())


def _parallel(value) -> bool:
    return bool(getattr(value, "targetoptions", {}).get("parallel"))


class ClosureCache(FunctionCache):
    """FunctionCache whose key hashes cell_key() of each closure cell instead of their pickle."""

    def load_overload(self, sig, target_context):
        if any(_parallel(c.cell_contents) for c in self._py_func.__closure__ or ()):
            from numba.np.ufunc.parallel import _launch_threads
            _launch_threads()       # what numba's _reload_parfors does for a parfor's own cache
        return super().load_overload(sig, target_context)

    def _index_key(self, sig, codegen):
        func = self._py_func
        cells = tuple(cell_key(c.cell_contents) for c in func.__closure__ or ())

        def digest(data: bytes) -> str:
            return hashlib.sha256(data).hexdigest()
        return (sig, codegen.magic_tuple(),
                (digest(func.__code__.co_code), digest(repr(cells).encode())))


def cache_closure(dispatcher):
    """Give a jitted closure (made without cache=True) ClosureCache; returns the dispatcher.
    Where numba finds no folder for a cache (numba_cache.compile_in_memory), it keeps none."""
    try:
        dispatcher._cache = ClosureCache(dispatcher.py_func)
    except RuntimeError as exc:
        if "no locator available" not in str(exc):
            raise
    return dispatcher
