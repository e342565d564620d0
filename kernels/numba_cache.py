"""Where numba keeps the compiled kernels, and what happens where it can keep them nowhere.

The kernels are compiled with `cache=True`, and numba refuses even to define such a function when
none of the folders it knows is writable (NUMBA_CACHE_DIR, the package's __pycache__, the user's
cache folder): the import fails with "cannot cache function ...: no locator available". A
read-only install run by a user without a writable home is that case. `compile_in_memory` lets
such a function be defined without a disk cache, as if `cache=True` were not there: each process
compiles it afresh and keeps it in memory.

The choice is made once, by the program's entry point before any kernel module is imported, and
travels to the processes it starts (a Dask worker) through ENV, which `kernels/__init__` reads.
"""
from __future__ import annotations

import importlib.util
import os
import types

ENV = "GPU_EXPLORER_NUMBA_CACHE"
MEMORY = "memory"       # ENV's value: cached kernels with no folder to go to compile in memory

# a module with numba-cached kernels: its folder is where numba would put the cache in-tree
PROBE_MODULE = "kernels.mandelbrot.loops.escape"


def _probe():  # stands in for a kernel of PROBE_MODULE when numba is asked where to cache it
    return None


def cache_writable(module: str = PROBE_MODULE) -> bool:
    """True when numba finds a writable cache folder for `module`'s kernels: it is asked exactly
    as when a cached kernel of that module is defined (its locators, overrides included). The
    module is not imported."""
    from numba.core import caching
    spec = importlib.util.find_spec(module)
    source = spec.origin if spec is not None else None
    if not source:
        return True          # nothing to cache for
    base = caching.CacheImpl if hasattr(caching, "CacheImpl") else caching._CacheImpl  # older numba

    class Probe(base):       # only its constructor is used: it finds the locator or raises
        def reduce(self, data):
            return data

        def rebuild(self, target_context, payload):
            return payload

        def check_cachable(self, data):
            return True

    stand_in = types.FunctionType(_probe.__code__.replace(co_filename=source), {}, "_probe")
    try:
        Probe(stand_in)
    except RuntimeError:     # "cannot cache function ...: no locator available"
        return False
    return True


def in_memory() -> bool:
    """True when this process (or the one that started it) found no folder for the cache."""
    return os.environ.get(ENV) == MEMORY


def compile_in_memory() -> None:
    """From now on a `cache=True` kernel whose cache has no folder to go to is defined without
    one (numba's NullCache, as without cache=True) instead of failing; one that finds a folder
    still uses it. Processes started from this one do the same. Safe to call twice."""
    os.environ[ENV] = MEMORY
    from numba.core.dispatcher import Dispatcher
    _tolerate_no_folder(Dispatcher)
    from .backend import simulator_enabled
    if simulator_enabled():
        return               # the simulator's jit ignores cache=True
    try:    # numba.cuda's kernels have their own dispatcher and cache (0.2 s to import)
        from numba.cuda.dispatcher import CUDADispatcher
    except Exception:        # numba-cuda missing or failing to load: no GPU kernel is compiled
        return
    _tolerate_no_folder(CUDADispatcher)


def _tolerate_no_folder(dispatcher_class) -> None:
    plain = dispatcher_class.enable_caching
    if getattr(plain, "in_memory_fallback", False):
        return

    def enable_caching(self):
        try:
            plain(self)
        except RuntimeError as exc:     # self._cache stays the NullCache it was made with
            if "no locator available" not in str(exc):
                raise
    enable_caching.in_memory_fallback = True
    dispatcher_class.enable_caching = enable_caching


def compile_when() -> str:
    """When the kernels compile, for the lines that say a compile is under way."""
    return "again at every start: no disk cache here" if in_memory() else "first time only"
