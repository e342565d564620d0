"""What `--render` starts differently from the window, as soon as its options are parsed, so that
the whole command costs little more than its frame (issue 38; figures in docs/PERFORMANCE.md,
"Start-up"). None of it changes a pixel (tests/cli/test_render_pixels.py)."""
from __future__ import annotations

import os


def start_render(args) -> None:
    """GPU phases timed by plain CUDA events, and the GPU's context opened on a thread (for
    --backend cuda or auto) while numba imports on this one (kernels/context_ahead.py). Only in
    main.py run as a program: a test's main.main() leaves the process as it found it."""
    from .quick_exit import is_program
    if not is_program():
        return
    if "GPU_EXPLORER_TIMING" not in os.environ:
        # nothing shows a headless frame's GPU timings, and CUPTI takes 0.3 s to start
        from kernels import timing
        timing.set_method("events")
    open_context_ahead(args.backend)


def open_context_ahead(backend: str) -> None:
    """The GPU's context opened on a thread (for --backend cuda or auto) while this one imports
    numba and numba.cuda, for --render and the window alike (kernels/context_ahead.py). Only in
    main.py run as a program."""
    from .quick_exit import is_program
    if not is_program() or backend not in ("cuda", "auto"):
        return
    from kernels.backend import simulator_enabled
    if not simulator_enabled():
        from kernels import context_ahead
        context_ahead.start()
