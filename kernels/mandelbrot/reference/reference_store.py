"""Where a DeepRenderer looks for a reference orbit before computing one: orbits pinned in memory
(a zoom movie's deepest frame's, computed first so that every frame reuses it), then the on-disk
cache (reference_cache.py: reopening a location is instant). A renderer given a store
(`DeepRenderer.references`) asks `find()` when its own orbit does not serve a frame and hands
each orbit it computed to `keep()`.

An orbit found here is the renderer's own copy (ReferenceOrbit.from_snapshot): renderers on
several threads may extend their copies without touching one another. Pixels rebase onto the
reference, so any reference that is precise enough gives the frame's counts; a pinned orbit is
offered to frames it serves by ReferenceOrbit.serves (precise enough, and near enough for the
frame's pixels to stay on it).

`shared_store()` is the process's store (the window's and the command line's deep frames): its
disk cache lives in reference_cache.cache_folder(); only orbits that took at least SAVE_MS to
compute are written (a quick one is quicker to compute again than to read).
"""
from __future__ import annotations

import math
import os
import threading
import time

from .reference import ReferenceOrbit
from ...user_cache import ENV_FOLDER, OFF
from .reference_cache import ReferenceCache

# orbits that took less than this to compute are not written to disk
SAVE_MS = 250.0
# pinned orbits kept at once (a movie pins one; a second movie may start before the first ends)
MAX_PINNED = 4


class ReferenceStore:
    def __init__(self, cache: ReferenceCache | None = None, save_ms: float | None = None):
        self.cache = cache
        self.save_ms = float(SAVE_MS if save_ms is None else save_ms)
        self._pinned: list[tuple[ReferenceOrbit, object]] = []   # (orbit, its snapshot)
        self._lock = threading.Lock()
        self.loaded = 0          # orbits handed out from the disk cache
        self.copied = 0          # copies of pinned orbits handed out

    @property
    def notes(self) -> list[str]:
        """Files the disk cache ignored, and why."""
        return self.cache.notes if self.cache is not None else []

    # ---- pinned orbits ------------------------------------------------------------------------
    def pin(self, orbit: ReferenceOrbit) -> None:
        """Offer `orbit` (complete for what it will serve; never extended after this) to every
        renderer using this store, until unpin()."""
        snap = orbit.snapshot()
        with self._lock:
            self._pinned = [p for p in self._pinned if p[0] is not orbit][-(MAX_PINNED - 1):]
            self._pinned.append((orbit, snap))

    def unpin(self, orbit: ReferenceOrbit) -> None:
        with self._lock:
            self._pinned = [p for p in self._pinned if p[0] is not orbit]

    def pinned(self) -> list[ReferenceOrbit]:
        with self._lock:
            return [o for o, _ in self._pinned]

    # ---- what a renderer asks -----------------------------------------------------------------
    def find(self, request, precision: int):
        """(orbit, source) for a frame `request` (a DeepRequest) whose reference needs
        `precision` bits: a copy of a pinned orbit that serves it ("pinned"), or the disk cache's
        orbit of this very centre ("disk"); None when neither has one."""
        width_log2 = request.width_log10 * math.log2(10.0)
        with self._lock:
            pinned = list(self._pinned)
        for orbit, snap in reversed(pinned):
            if orbit.serves(request.center_re, request.center_im, width_log2, precision):
                self.copied += 1
                return ReferenceOrbit.from_snapshot(snap), "pinned"
        if self.cache is None:
            return None
        snap = self.cache.find(request.center_re, request.center_im, precision,
                               int(request.max_iter))
        if snap is None:
            return None
        try:
            orbit = ReferenceOrbit.from_snapshot(snap)
        except (ValueError, ArithmeticError) as exc:     # a file that passed its checksum
            self.cache.notes.append(f"a cached reference was ignored: {exc}")
            return None
        self.loaded += 1
        return orbit, "disk"

    def keep(self, orbit: ReferenceOrbit, computed_ms: float) -> None:
        """An orbit a renderer computed (or extended) for `computed_ms`: written to the disk
        cache when that took long enough to be worth it."""
        if self.cache is not None and computed_ms >= self.save_ms:
            self.cache.save(orbit.snapshot())


_shared: ReferenceStore | None = None
_shared_lock = threading.Lock()


def shared_store() -> ReferenceStore:
    """The process's store, with the disk cache in the user's cache folder ($GPU_EXPLORER_CACHE_DIR
    = "off": none; the tests run so)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            folder = os.environ.get(ENV_FOLDER, "")
            off = folder.strip().lower() == OFF
            _shared = ReferenceStore(None if off else ReferenceCache())
        return _shared


def compute_pinned(request, headroom: int, cancel=None, progress=None,
                   store: ReferenceStore | None = None) -> ReferenceOrbit:
    """The reference of `request` (a movie's deepest frame) with `headroom` doublings of
    precision, from the disk cache when it is there, else computed (and kept); pinned in the
    store for every renderer that uses it."""
    store = store or shared_store()
    need = request.precision_deeper(headroom)
    found = store.find(request, need) if store.cache is not None else None
    orbit = found[0] if found is not None and found[1] == "disk" else None
    if orbit is None:
        orbit = ReferenceOrbit(request.center_re, request.center_im, need)
    t0 = time.perf_counter()
    before = orbit.version
    orbit.extend(request.max_iter, cancel=cancel, progress=progress)
    if orbit.version != before:
        store.keep(orbit, (time.perf_counter() - t0) * 1e3)
    store.pin(orbit)
    return orbit
