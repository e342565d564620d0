"""Time covered by possibly overlapping (start, end) spans, overlaps counted once: a worker's
bands that overlap (tools/spread_bench.py), a phase's kernel and copy records on the GPU
(cupti_records.py)."""
from __future__ import annotations


def covered(spans) -> float:
    """The length of the union of `spans` ((start, end) pairs, in any unit)."""
    total, reach = 0, None
    for a, b in sorted(spans):
        if reach is None or a > reach:
            total += b - a
            reach = b
        elif b > reach:
            total += b - reach
            reach = b
    return total
