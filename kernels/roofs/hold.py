"""Roofs that hold: whether a measured point beats its roof by more than the roof's spread.

A roof is the fastest run of its probe; a point is the median of its own runs, timed the same way
(JobTimer). A point may land above its roof by the probe's run-to-run spread; beyond that the roof
is stale (measured while the device was busy, by an older driver, or by a slower probe than a
kernel the app runs) and is measured again (the bench: kernels/roofs/add_roofs; the window:
explorer/models/roofline.py). Two kinds of points are no evidence against a roof:

- a memory-bound point that moved less than CACHE_FACTOR × the device's largest cache: its data can
  stay in the cache between runs, above the slope, which is the memory's (docs/notes/
  performance-history.md, "The roofline");
- a count that is a model's upper bound: the GPU Mandelbrot's executed lane-iterations (the warp
  launch refills idle lanes, so it executes at most that many).
"""
from __future__ import annotations

from dataclasses import dataclass

from .model import KIND_TITLES, Roofs

CACHE_FACTOR = 2
# the cache size assumed where the probes could not read it (roofs measured elsewhere)
FALLBACK_CACHE_BYTES = 128 * 2**20
UPPER_BOUND = "executed"        # in a Work's name: a model's upper bound of the work done


@dataclass(frozen=True)
class Beaten:
    """A point above its roof beyond the roof's spread."""
    roof: str           # "bandwidth" or the kind whose peak it beat
    over: float         # how far above the roof: 0.24 is 24 %
    spread: float       # the roof's spread (a fraction)

    def words(self, label: str = "") -> str:
        which = "bandwidth" if self.roof == "bandwidth" else f"{KIND_TITLES[self.roof]} peak"
        who = f"{label} is " if label else ""
        return (f"{who}{100 * self.over:.1f} % above the {which} roof (its spread "
                f"{100 * self.spread:.1f} %)")


def cache_resident(nbytes: float, roofs: Roofs) -> bool:
    """Whether work moving `nbytes` may have run from the cache rather than the memory."""
    cache = roofs.details.get("cache_bytes") if isinstance(roofs.details, dict) else None
    if not isinstance(cache, (int, float)) or cache <= 0:
        cache = FALLBACK_CACHE_BYTES
    return nbytes < CACHE_FACTOR * cache


def beats(placement, roofs: Roofs | None) -> Beaten | None:
    """How a placed point (kernels.roofs.work.Placement) beats its roof beyond the roof's spread,
    or None when it holds (or cannot be judged: no roof, no time, a cached or upper-bound count)."""
    p = placement
    if roofs is None or p.percent is None or not p.roof or p.bound not in ("memory", "compute"):
        return None
    if UPPER_BOUND in p.work.name:
        return None
    name = "bandwidth" if p.bound == "memory" else p.work.kind
    if name == "bandwidth" and cache_resident(p.work.bytes, roofs):
        return None
    over = p.percent / 100.0 - 1.0
    allowed = roofs.spread(name)
    return Beaten(name, over, allowed) if over > allowed else None
