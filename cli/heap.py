"""`heap_frozen()`: while a command renders over a pool of GPUs, what the imports and the pool's
start made stays out of every garbage collection (gc.freeze). A full collection walks every
tracked object holding the GIL, and after numba's imports those are millions: each automatic one
during a movie, and the pool's own at its close, kept the GPUs' workers from launching. Unfrozen
on leaving, so a process that goes on (a test session) collects them as before."""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def heap_frozen():
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
