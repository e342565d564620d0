"""The distance heatmap's work per frame, for the roofline.

Flops per pixel by the formula (haversine.py), each sin, cos, sqrt and atan2 counted as one — a
lower bound, since libdevice spends tens of instructions on each: the pixel's latitude and longitude
from its index (8), sin²(Δlon/2) (4), cos(lat) (1), the haversine term (7), the central angle
2·atan2(√a, √(1−a)) (5), × radius (1), the palette index (2).

Bytes: what each strategy's kernels must read and write in device memory (float64 arrays, uint32
colours); the colouring kernel of the two-kernel strategies shares the frame's kernel phase.
"""
from __future__ import annotations

from ..roofs.work import Work

FLOPS_PER_PIXEL = 28
BYTES_PER_PIXEL = {
    "device-mesh": 4,               # the colour written
    "broadcast": 2 * 8 + 8 + 8 + 4,  # lat, lon read, distance written; colour: distance read, colour written
    "host-mesh": 4 * 8 + 8 + 8 + 4,  # lat, lon and the reference repeated, read
    "cpu-twin": 4,
}


def frame_work(strategy: str, pixels: int, want_values: bool) -> Work:
    """The frame's Work: strategy "cpu-twin" on the CPU."""
    per_pixel = BYTES_PER_PIXEL[strategy] + (8 if want_values and strategy in ("device-mesh",
                                                                             "cpu-twin") else 0)
    return Work(f"distance, {strategy}", "f64", FLOPS_PER_PIXEL * pixels, per_pixel * pixels,
                how=f"{FLOPS_PER_PIXEL} flops × {pixels:,} pixels (sin, cos, sqrt, atan2 as one)")
