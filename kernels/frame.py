"""What a render returns: a finished RGBA picture, its raw values on request, and its timings."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .timing import Timings


@dataclass
class Frame:
    rgba: np.ndarray                      # (H, W, 4) uint8, C-contiguous, row 0 = top of the picture
    timings: Timings
    request: Any = None                   # the frozen request that produced it
    values: np.ndarray | None = None      # raw values (float64, H×W) when the request asked for them
    fetch_value: Callable[[int, int], float] | None = None  # (row, col) -> one raw value, cheap
    meta: dict = field(default_factory=dict)

    @property
    def shape(self):
        return self.rgba.shape[:2]
