"""A deep-zoom frame's work, for the roofline: the steps its pixel loop counts (deep/renderer.py's
stats), weighed by the operations each step costs.

A perturbation step δz ← (2Z + δz)·δz + δc in complex float64: 2Z + δz (2), the complex product
(6), + δc (2), then |Z + δz|² for the escape test (2 additions, 3 for the squares and their sum)
and the rebase test against |δz|² (3 more): 18 flops, with the extended formats' exponent
bookkeeping left out. A BLA step δz ← A·δz + B·δc: two complex products (12) and their sum (2),
and the validity test |δz|² < r² (3): 17 flops. Bytes: the float64 value each pixel writes and the
reference orbit and table the loop reads once from memory (then from the caches).
"""
from __future__ import annotations

from ...roofs.work import Work

PERTURBATION_FLOPS = 18
BLA_FLOPS = 17


def frame_work(stats: dict, pixels: int, read_bytes: int = 0) -> Work:
    """The pixel loop's Work from its step counts (stats: perturbation_steps, bla_steps)."""
    pert, bla = int(stats.get("perturbation_steps", 0)), int(stats.get("bla_steps", 0))
    return Work("deep pixels: perturbation + BLA steps", "f64",
                PERTURBATION_FLOPS * pert + BLA_FLOPS * bla, 8 * pixels + read_bytes,
                minus=("colourise",),
                how=f"{PERTURBATION_FLOPS} flops × {pert:,} perturbation steps + "
                    f"{BLA_FLOPS} × {bla:,} BLA steps")
