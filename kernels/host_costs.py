"""Host costs that fall inside a job's wall clock but in no timed phase, noted where they happen
(a buffer allocated, a kernel's first launch prepared, the timing machinery set up), so that the
timing panel can name them instead of calling them unaccounted. Per thread: a job's JobTimer
(kernels/timing.py) takes the difference of the sums from its start to its finish.
"""
from __future__ import annotations

import threading

HOST_COSTS = ("allocate", "launch setup", "timing setup")
_costs = threading.local()


def note_host_cost(name: str, ms: float) -> None:
    """Add `ms` of host work of kind `name` (one of HOST_COSTS) to this thread's running sums."""
    d = getattr(_costs, "sums", None)
    if d is None:
        d = _costs.sums = {}
    d[name] = d.get(name, 0.0) + ms


def cost_sums() -> dict:
    return dict(getattr(_costs, "sums", None) or {})
