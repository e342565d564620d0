"""Exponential-map keyframes drawn by the deep renderer: keyframe k of an ExpMap (expmap.py) is a
DeepRequest whose pixels are a log-polar grid around p (DeepRequest.polar), drawn by perturbation
with the BLA table like any deep frame, shallow or deep alike (float64 places are drawn the same
way: rebasing keeps the counts right at any depth), around one reference orbit for the whole
zoom: the deepest keyframe's, pinned in the process's reference store (`pinned_orbit`) so every
renderer of the movie, on every GPU, takes a copy of it.
"""
from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from .deep.request import DeepRequest


def keyframe_request(em, k: int) -> DeepRequest:
    """Keyframe k of `em` as the deep renderer takes it."""
    return DeepRequest(em.centre_re, em.centre_im, em.radius(k), (em.cols, em.rows),
                       int(em.limits[k]), polar=em.cols)


@contextmanager
def pinned_orbit(em, cancel=None, progress=None):
    """While inside: the reference of the deepest keyframe (with its limit, the largest)
    pinned for every renderer of this process, yielded; unpinned however the movie ends."""
    from .deep.reference_store import compute_pinned, shared_store
    deepest = keyframe_request(em, em.count - 1)
    deepest = DeepRequest(deepest.center_re, deepest.center_im, deepest.width, deepest.size,
                          max(em.limits), polar=em.cols).validate()
    orbit = compute_pinned(deepest, 0, cancel=cancel, progress=progress)
    try:
        yield orbit
    finally:
        shared_store().unpin(orbit)


class KeyframeRenderer:
    """Draws keyframes on one backend (one thread: the GPU's worker), keeping the orbit and the
    table between them as a movie's renderer does."""

    def __init__(self, backend):
        from .deep.reference_store import shared_store
        from .deep.renderer import DeepRenderer
        self.backend = backend
        self.deep = DeepRenderer(backend)
        self.deep.references = shared_store()
        self.deep.precision_headroom = 0    # the pinned orbit is the deepest keyframe's
        self.seconds = 0.0
        self.pixels = 0

    def render(self, em, k: int, cancel=None) -> np.ndarray:
        """Keyframe k's smooth counts (rows, cols) float64, a host array the caller keeps."""
        request = keyframe_request(em, k).validate()
        t0 = time.perf_counter()
        res = self.deep.render_values(request, cancel=cancel)
        values = np.array(res.values, copy=True)     # the renderer's ring is reused
        self.seconds += time.perf_counter() - t0
        self.pixels += values.size
        return values


class KeyframeJob:
    """A pool job (kernels.spread): keyframe k drawn by the worker's own KeyframeRenderer (kept on
    the worker between jobs, with its orbit and table). Picklable for a Dask cluster. Returns
    (values, seconds)."""

    def __init__(self, em, k: int):
        self.em, self.k = em, int(k)

    def __call__(self, worker):
        renderer = worker.renderer(("mandelbrot", "keyframes"),
                                   lambda: KeyframeRenderer(worker.backend))
        t0 = time.perf_counter()
        values = renderer.render(self.em, self.k, cancel=worker.cancel)
        return values, time.perf_counter() - t0
