"""numba's CUDA typing registries loaded on a thread of their own while a pool's GPU contexts open.

The first kernel a process loads (even from numba's disk cache) has numba refresh its CUDA typing
registries first: Python work of a second or more, holding the GIL (it imports modules, SciPy's
among them where SciPy is installed). Left to the movie's warm-up it ran after the contexts were
made; started before the pool opens it runs while the driver makes them (no GIL held there) and
the reference orbit computes. numba's compiler lock is held, as numba holds it when it refreshes,
so a kernel load that comes meanwhile waits for it rather than refreshing beside it.
"""
from __future__ import annotations

import threading


def refresh_typing() -> bool:
    """Refresh numba's CUDA typing and target registries now; False where this numba has no CUDA
    target to refresh (the simulator, another layout)."""
    try:
        from numba.core.compiler_lock import global_compiler_lock
        from numba.cuda.descriptor import cuda_target
    except ImportError:
        return False
    with global_compiler_lock:
        cuda_target.typing_context.refresh()
        cuda_target.target_context.refresh()
    return True


def start(backend) -> threading.Thread | None:
    """refresh_typing() on a daemon thread for a real GPU backend (None otherwise). Its errors are
    left to the first kernel load, which refreshes as it always did."""
    if not backend.is_gpu or backend.simulated:
        return None

    def run():
        try:
            refresh_typing()
        except Exception:
            pass
    t = threading.Thread(target=run, name="numba-typing", daemon=True)
    t.start()
    return t
