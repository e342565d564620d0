"""How the float32 warp kernel (escape_warp.py's float32 one) groups its iterations: BLOCK_STEPS steps between
two escape tests, BLOCKS_PER_LOOK such blocks between two looks at the warp (where finished lanes
take new pixels), and THRESH idle lanes that make a warp refill. float32 operations issue at one
per cycle, so every compare, branch and counter update in the loop costs as much as an
iteration's multiply; fewer tests leave the arithmetic.

GPU_EXPLORER_F32_BLOCK="steps,blocks" overrides the grouping for a bench sweep; a kernel built
that way is not kept in numba's on-disk cache, which keys on the source and would hand the next
run a kernel with other constants.

GPU_EXPLORER_F32_KERNEL picks the warp kernel float32 frames run, for a bench beside the app's:
"branchless" (escape_warp.py's, the app's) or "blocks" (escape_warp_f32_blocks.py, the one it
replaced); both give the same counts.
"""
from __future__ import annotations

import os
import sys

ENV = "GPU_EXPLORER_F32_BLOCK"
DEFAULT = (16, 4)
# idle lanes that make a float32 warp refill (float64's warp kernel: gpu_target.THRESH): a float32
# look is short beside the refill's fixed cost, so the warp waits for more idle lanes
THRESH = 16


def parse(text: str | None) -> tuple[int, int] | None:
    """(steps, blocks) from "steps,blocks", or None where the text is absent or not that (steps
    from 1 to 64, blocks from 1 to 16)."""
    if not text:
        return None
    try:
        steps, blocks = (int(v) for v in text.split(","))
    except ValueError:
        return None
    if not (1 <= steps <= 64 and 1 <= blocks <= 16):
        return None
    return steps, blocks


def _chosen() -> tuple[tuple[int, int], bool]:
    text = os.environ.get(ENV)
    got = parse(text)
    if text and got is None:
        print(f"{ENV}={text!r} ignored: want \"steps,blocks\", steps 1 to 64, blocks 1 to 16",
              file=sys.stderr)
    return (got or DEFAULT), got is None


(BLOCK_STEPS, BLOCKS_PER_LOOK), CACHE_KERNEL = _chosen()


KERNEL_ENV = "GPU_EXPLORER_F32_KERNEL"
KERNELS = ("branchless", "blocks")


def _chosen_kernel() -> str:
    text = os.environ.get(KERNEL_ENV)
    if text and text not in KERNELS:
        print(f"{KERNEL_ENV}={text!r} ignored: want one of {', '.join(KERNELS)}", file=sys.stderr)
    return text if text in KERNELS else KERNELS[0]


KERNEL = _chosen_kernel()
