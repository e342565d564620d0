"""Exponential-map keyframes drawn by the deep renderer: keyframe k of an ExpMap (expmap.py) is a
DeepRequest whose pixels are a log-polar grid around p (DeepRequest.polar), drawn by perturbation
with the BLA table like any deep frame, shallow or deep alike (float64 places are drawn the same
way: rebasing keeps the counts right at any depth), around one reference orbit for the whole
zoom: the deepest keyframe's, pinned in the process's reference store (`pinned_orbit`) so every
renderer of the movie, on every GPU, takes a copy of it.
"""
from __future__ import annotations

import functools
import os
import time
from contextlib import contextmanager

import numpy as np

from ...lent_arrays import LENT
from ..requests.deep_request import DeepRequest

# a keyframe's BLA table is built for its bound rounded up to a multiple of this many bits (a
# frame's: 4): one build serves 64 octaves of keyframes (docs/PERFORMANCE.md says what it costs)
TABLE_SLACK_BITS = 64
# launch "sectors": a GPU keyframe's sectors go round robin to this many deep renderers, each with
# its own stream: one stream ran each sector's launches after the last one's, so the GPU idled
# through every sector's last pixels and, above all, its redo kernel, which lasts as long as its
# longest redone pixel's later passes (one lane, ~7-9k dependent steps at 1e-984: about half of a
# deep keyframe's GPU time in the launch model of docs/notes/keyframe-pixel-cost.md); on two
# streams the next sector's first pass fills those tails. Each renderer holds its own copies of the
# orbit and table (the same values: the keyframe's values are the same bits on any number of
# streams)
STREAMS = 2
# how a GPU keyframe's sectors are launched: "one" = one first pass over all of them and one
# redo (deep/sectors.py: one redo kernel's tail a keyframe instead of a sector's each);
# "sectors" = each sector its own frame, round robin on STREAMS renderers. The same bits
LAUNCHES = ("one", "sectors")
LAUNCH = "one"


@functools.lru_cache(maxsize=1)
def pinned_keyframe_bytes() -> int:
    """How much page-locked memory keyframes' host copies may hold (the GPU copies straight into
    them): an eighth of the machine's memory, 4 GiB at most; beyond, through one pinned buffer."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        ram = 8 << 30
    return min(4 << 30, ram // 8)


def keyframe_request(em, k: int, sector: int = 0) -> DeepRequest:
    """Sector `sector` of keyframe k of `em` as the deep renderer takes it (a log-polar band)."""
    cols, row0, rows, _ = em.sectors[sector]
    return DeepRequest(em.centre_re, em.centre_im, em.radius(k), (cols, rows),
                       int(em.limits[k]), polar=cols, polar_row0=row0)


@contextmanager
def pinned_orbit(em, cancel=None, progress=None):
    """While inside: the reference of the deepest keyframe (with the largest limit), stopped at
    its period where the deepest keyframe's ball finds one (a periodic orbit serves every larger
    ball, so every keyframe), pinned for every renderer of this process and yielded; unpinned
    however the movie ends. From the disk cache when it is there."""
    from ..reference.period_stop import radius_log2
    from ..reference.reference import ReferenceOrbit
    from ..reference.reference_store import shared_store
    from ..deep.renderer import FrameGeometry
    store = shared_store()
    finest = max(range(len(em.sectors)), key=lambda s: em.sectors[s][0])
    deepest = keyframe_request(em, em.count - 1, finest)
    deepest = DeepRequest(deepest.center_re, deepest.center_im, deepest.width, deepest.size,
                          max(em.limits), polar=deepest.polar,
                          polar_row0=deepest.polar_row0).validate()
    need = deepest.precision
    found = store.find(deepest, need) if store.cache is not None else None
    orbit = found[0] if found is not None and found[1] == "disk" else None
    if orbit is None:
        orbit = ReferenceOrbit(deepest.center_re, deepest.center_im, need)
    t0, before = time.perf_counter(), orbit.version
    orbit.extend(deepest.max_iter, cancel=cancel, progress=progress,
                 radius_log2=radius_log2(FrameGeometry.of(deepest, orbit)))
    if orbit.version != before:
        store.keep(orbit, (time.perf_counter() - t0) * 1e3)
    store.pin(orbit)
    try:
        yield orbit
    finally:
        store.unpin(orbit)


class KeyframeRenderer:
    """Draws keyframes on one backend (one thread: the GPU's worker), keeping the orbit and the
    table between them as a movie's renderer does. `launch` (LAUNCH by default): "one" draws a
    keyframe's sectors as one frame (deep/sectors.py; sector by sector where they cannot share
    one); "sectors" sends them round robin to `streams` deep renderers on a GPU (STREAMS by
    default), each on its own stream, so that one sector's tail and redo kernel overlap the next
    sector's pixels. The CPU draws on one renderer."""

    def __init__(self, backend, streams: int | None = None, launch: str | None = None):
        n = STREAMS if streams is None else int(streams)
        if n < 1:
            raise ValueError(f"a keyframe is drawn on one stream or more, got {streams!r}")
        self.launch = LAUNCH if launch is None else launch
        if self.launch not in LAUNCHES:
            raise ValueError(f"unknown launch {launch!r}; choose one of: {', '.join(LAUNCHES)}")
        self.backend = backend
        gpu_streams = n if self.launch == "sectors" else 1
        self.deeps = [self._deep_renderer() for _ in range(gpu_streams if backend.is_gpu else 1)]
        self.deep = self.deeps[0]
        self.seconds = 0.0
        self.pixels = 0
        self.kernel_ms = 0.0    # the GPU's own time in the loops' kernels (timed phases, summed)
        # the GPU's span of each keyframe's work, first launch to last copy (events; None where
        # not timed): with overlapping streams kernel_ms counts the overlaps twice, this does not
        self.span_ms = 0.0
        self.last_span_ms = None
        self.last_stats = {}    # the last keyframe's counts (DeepResult.stats), summed

    def _deep_renderer(self):
        from ..reference.reference_store import shared_store
        from ..deep.renderer import DeepRenderer
        deep = DeepRenderer(self.backend)
        deep.references = shared_store()
        deep.table_slack_bits = TABLE_SLACK_BITS
        return deep

    def render(self, em, k: int, cancel=None, on_device=None) -> np.ndarray:
        """Keyframe k's smooth counts, its sectors packed (ExpMap.sectors) in one float64 host
        array the caller keeps. `on_device(values, stream)`: handed the keyframe where a GPU drew
        it in one launch (a device array valid until the stream's next work) before it is copied
        to the host."""
        return self.start(em, k, cancel, on_device)()

    def start(self, em, k: int, cancel=None, on_device=None):
        """render() in two halves: the keyframe's work queued on the GPU (all of it, where it is
        drawn in one launch), and the returned function waits for it and gives its values. The
        caller's thread may queue other work on other streams in between."""
        # where no orbit is pinned (a Dask worker's process), the first one made serves every
        # deeper keyframe too
        for deep in self.deeps:
            deep.precision_headroom = em.count - 1 - int(k)
        t0 = time.perf_counter()
        self.last_stats = {}
        finish = self._start_one(em, k, cancel, on_device) if self.launch == "one" else None
        if finish is None:
            values = self._render_sectors(em, k, cancel)
            finish = lambda: values     # noqa: E731
        self.seconds += time.perf_counter() - t0

        def done() -> np.ndarray:
            t1 = time.perf_counter()
            values = finish()
            self.seconds += time.perf_counter() - t1
            self.pixels += values.size
            return values
        return done

    def _start_one(self, em, k: int, cancel, on_device=None):
        """The keyframe as one frame (deep/sectors.py) queued, and the function that waits for
        its values; None where its sectors cannot be one frame."""
        from ..deep.sectors import start_sectors
        gpu = self.backend.is_gpu
        span = self._span_start() if gpu else None
        reqs = [keyframe_request(em, k, s) for s in range(len(em.sectors))]
        p = start_sectors(self.deep, reqs, cancel=cancel, to_host=not gpu)
        if p is None:
            return None
        values, via = p.values, None
        if gpu:     # into a pinned array the caller keeps, or through the pool's pinned buffer
            if on_device is not None:
                on_device(p.values, self.deep.stream)
            values = None if self.backend.simulated else LENT.take_pinned(
                (em.samples,), np.float64, pinned_keyframe_bytes())
            if values is None:
                values = via = self.deep.pool.host("keyframe-values", (em.samples,), np.float64)
            p.values.copy_to_host(values, stream=self.deep.stream)
            span = self._span_record(span)

        def finish() -> np.ndarray:
            self._done(p)
            if not gpu:
                return values
            self._span_end(span)
            self.deep.stream.synchronize()
            return values if via is None else LENT.copy_of(via)
        return finish

    def _render_sectors(self, em, k: int, cancel):
        """The keyframe sector by sector, round robin on self.deeps."""
        gpu = self.backend.is_gpu
        # on a GPU the sectors' values come into one pinned buffer, so their copies queue
        # behind the kernels instead of waiting for them (a copy into pageable memory returns only
        # once done, and the next sector's host part would wait with it), then into the array
        # the caller keeps
        values = self.deep.pool.host("keyframe-values", (em.samples,), np.float64) if gpu \
            else np.empty(em.samples)
        span = self._span_start() if gpu else None
        n = len(self.deeps)
        pending = [[] for _ in range(n)]
        # sector s on renderer s % n; on each a sector queued while the one before runs (two in
        # flight: the counts' host ring is 3), each one's values copied out as soon as queued on
        # its own stream: that renderer's next sector reuses the buffer (the pool's one
        # allocation, viewed at each sector's shape)
        for s, (cols, _, rows, off) in enumerate(em.sectors):
            deep = self.deeps[s % n]
            queue = pending[s % n]
            if len(queue) == 2:
                self._done(queue.pop(0))
            p = deep.start_values(keyframe_request(em, k, s).validate(), cancel=cancel,
                                  to_host=not gpu)
            out = values[off:off + cols * rows].reshape(rows, cols)
            if gpu:
                p.values.copy_to_host(out, stream=deep.stream)
            else:
                out[...] = p.values
            queue.append(p)
        for queue in pending:
            for p in queue:
                self._done(p)
        if gpu:
            self._span_end(self._span_record(span))
            for deep in self.deeps:
                deep.stream.synchronize()
            values = LENT.copy_of(values)
        return values

    def _span_start(self):
        """An event on the first renderer's stream before the keyframe's first launch (None
        under the simulator, which has no timed events)."""
        if getattr(self.backend, "simulated", False):
            return None
        from numba import cuda
        start = cuda.event(timing=True)
        start.record(self.deep.stream)
        return start

    def _span_record(self, start):
        """(start, end): the end event recorded once every stream's work for the keyframe is
        queued (the others joined into the first's with events), or None untimed."""
        if start is None:
            return None
        from numba import cuda
        first = self.deep.stream
        for deep in self.deeps[1:]:
            joined = cuda.event(timing=False)
            joined.record(deep.stream)
            joined.wait(first)
        end = cuda.event(timing=True)
        end.record(first)
        return start, end

    def _span_end(self, span) -> None:
        """The span between _span_record's events (waited for) added to span_ms."""
        self.last_span_ms = None
        if span is None:
            return
        from numba import cuda
        start, end = span
        end.synchronize()
        self.last_span_ms = cuda.event_elapsed_time(start, end)
        self.span_ms += self.last_span_ms

    def _done(self, pending) -> None:
        result = pending.result()
        self.kernel_ms += result.timings.get("kernel") or 0.0
        for key, v in result.stats.items():
            self.last_stats[key] = self.last_stats.get(key, 0) + v


class KeyframeJob:
    """A pool job (kernels.spread): keyframe k drawn by the worker's own KeyframeRenderer (kept on
    the worker between jobs, with its orbit and table). Picklable for a Dask cluster. Returns
    (values, seconds)."""

    def __init__(self, em, k: int):
        self.em, self.k = em, int(k)

    def __call__(self, worker):
        return self.start(worker)()

    def start(self, worker):
        """The keyframe queued on the worker's GPU; returns the function that waits for it and
        gives (values, seconds: the worker's time in both halves)."""
        # role "movie" at [2]: the window drops a movie's renderers when it ends (jobs.releasing)
        renderer = worker.renderer(("mandelbrot", "keyframes", "movie"),
                                   lambda: KeyframeRenderer(worker.backend))
        t0 = time.perf_counter()
        # a GPU keyframe takes a fraction of a second: drawn in one launch, not in bands that
        # each wait for a cancel check (gpu_pixels.band_pixels); a CPU one may take seconds
        cancel = None if worker.backend.is_gpu else worker.cancel
        # this worker's frames will need it: copied into its assembler on the device, not sent
        # to the host and back (expmap_assemble.worker_assembler; none before its first frames)
        from .expmap_assemble import worker_assembler
        asm = worker_assembler(worker, self.em) if worker.backend.is_gpu else None
        on_device = None if asm is None else (lambda v, s: asm.load_device(self.k, v, s))
        finish = renderer.start(self.em, self.k, cancel=cancel, on_device=on_device)
        queued_s = time.perf_counter() - t0

        def done():
            t1 = time.perf_counter()
            values = finish()
            return values, queued_s + time.perf_counter() - t1
        return done
