"""The bench-only launches' settings (escape_variants.py's, which imports numba.cuda: these do not):
the float64 variants' defaults, and the float32 step grouping a sweep starts from.
"""
from __future__ import annotations

import os
import sys

# Persistent launch: pixels a thread takes at a time (fewer atomics on the shared counter against
# a finer share-out at the frame's end); iterations between a thread's checks for a finished pixel
# (a pixel that escapes early in a chunk idles its lane for the rest of it; a short chunk pays the
# warp's bookkeeping more often). Chosen by `--bench --only mandelbrot-divergence`: see
# docs/notes/performance-history.md.
GRAB = 1
CHUNK = 32
# its threads per block, its resident blocks per SM where the kernel's registers cannot be asked,
# and its (blocks, threads) under the simulator
THREADS = 128
BLOCKS_PER_SM = 8
SIM_PERSISTENT = (2, 4)
# the sorted launch's sample stride, probe length and reach (Renderer's defaults), chosen by
# `--bench --only mandelbrot-divergence`: see docs/notes/performance-history.md
SAMPLE = 4
PROBE = 256
REACH = 2

# float32: GPU_EXPLORER_F32_BLOCK="steps,blocks" sets the grouping a sweep runs by default
# (tools/f32_block_sweep.py, gpu_f32_check.sh); the app's float32 frames never read it
F32_BLOCK_ENV = "GPU_EXPLORER_F32_BLOCK"


def parse(text: str | None) -> tuple[int, int] | None:
    """(steps, blocks) from "steps,blocks", or None where the text is absent or not that (steps
    from 1 to 64, blocks from 1 to 16)."""
    try:
        steps, blocks = (int(v) for v in text.split(","))
    except (AttributeError, ValueError):
        return None
    return (steps, blocks) if 1 <= steps <= 64 and 1 <= blocks <= 16 else None


def _setting(name: str, read, default, want: str):
    """The environment's `name` as `read` makes it, else `default` (said on stderr when set)."""
    text = os.environ.get(name)
    got = read(text) if text else None
    if text and got is None:
        print(f"{name}={text!r} ignored: want {want}", file=sys.stderr)
    return default if got is None else got


F32_BLOCK = _setting(F32_BLOCK_ENV, parse, None, '"steps,blocks", steps 1 to 64, blocks 1 to 16')
