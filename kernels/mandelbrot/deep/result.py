"""What a deep frame hands back: DeepResult (values, timings, counts, the reference used), and
PendingValues, a frame queued on the GPU whose result() waits for it."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...timing import Timings


@dataclass
class DeepResult:
    """values: (H, W) float64 smooth counts on the host (a ring buffer of 3: copy to keep longer);
    timings: the job's Timings; format: "perturbation" | "extended"; stats: counts the kernels
    made (perturbation steps, BLA steps, iterations the BLA skipped, rebases, all passes counted;
    pixels done again because their count was doubtful, see guard.py; dd_, exact_ and
    marked_pixels, exact_redo.py); reference: the ReferenceOrbit used; reused: whether it came
    from an earlier frame."""
    values: np.ndarray
    timings: Timings
    format: str
    stats: dict = field(default_factory=dict)
    reference: object = None
    reused: bool = False
    table_reused: bool = False
    number_type: str = "float64"        # the deltas' type the loop ran


class PendingValues:
    """A frame queued by DeepRenderer.start_values: `values` where its values will be (as
    DeepResult.values), result() waits for it (once) -> DeepResult."""

    def __init__(self, values, settle):
        self.values = values
        self._settle, self._result = settle, None

    def result(self) -> DeepResult:
        if self._result is None:
            self._result, self._settle = self._settle(), None
        return self._result
