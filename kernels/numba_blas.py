"""numba's BLAS probes, skipped: when its CPU target first loads (the first CPU kernel, cached or
not), numba imports scipy.linalg to learn whether a BLAS is there, 0.3 s where scipy is installed;
numba-cuda's target does the same at its first kernel (0.4-0.66 s of the window's warm-up on the
H200 machine, whose image has scipy).
The answer only chooses how np.correlate and np.convolve sum inside compiled code, which no kernel
here calls; np.dot and np.linalg in compiled code still find the BLAS when they are compiled.

`skip_blas_probe()` (kernels/__init__ calls it) makes that one probe answer "no BLAS" without
importing scipy, by hiding scipy.linalg's BLAS module while numba.np.arraymath runs its import.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

# the modules whose import probes for a BLAS (_HAVE_BLAS): numba's CPU target's, numba-cuda's
TARGETS = ("numba.np.arraymath", "numba.cuda.np.arraymath")
HIDDEN = ("scipy.linalg.cython_blas",)


class _Loader(importlib.abc.Loader):
    """The real loader of one of TARGETS, with HIDDEN unimportable while its module runs."""

    def __init__(self, real):
        self.real = real

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        # None in sys.modules: `import scipy.linalg.cython_blas` fails at once, no parent loaded
        hidden = [name for name in HIDDEN if name not in sys.modules]
        for name in hidden:
            sys.modules[name] = None
        try:
            self.real.exec_module(module)
        finally:
            for name in hidden:
                if sys.modules.get(name, 0) is None:
                    del sys.modules[name]


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.seen: set = set()

    def find_spec(self, name, path=None, target=None):
        if name not in TARGETS:
            return None
        self.seen.add(name)
        if self.seen.issuperset(TARGETS):
            _remove()               # once each: later imports find them in sys.modules
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


_finder = _Finder()


def _remove() -> None:
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)


def skip_blas_probe() -> bool:
    """Install the skip for this process; False when numba's probe already ran (or is off)."""
    if all(t in sys.modules for t in TARGETS) or _finder in sys.meta_path:
        return False
    _finder.seen.update(t for t in TARGETS if t in sys.modules)
    sys.meta_path.insert(0, _finder)
    return True

