"""One reference orbit per zoom movie: the deepest frame's, computed first (or read from the disk
cache) and pinned in the process's reference store, so every deep frame's renderer takes a copy
of it instead of computing its own at each depth (KF, Fraktaler-3 and FractalShark render movies
so). Pixels rebase onto the reference, so the frames keep their counts; frames the pinned orbit
does not serve (ReferenceOrbit.serves) compute their own as before.

Renderers in other processes (a Dask cluster's workers) find the orbit in the disk cache when
they share this machine's, else compute their own.
"""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager

from kernels.mandelbrot.requests.request import DeepFrameRequest


def deepest_request(movie):
    """The movie's deepest frame's request, asking for the most iterations any deep frame asks
    for (a zoom's limit need not grow with depth: see zoom_path), or None for a movie without
    deep frames. The deep frames are the run of frames from the deepest one outwards."""
    order = range(movie.frames - 1, -1, -1) if movie.spec.zoom == "in" else range(movie.frames)
    deepest, most = None, 0
    for k in order:
        request = movie.request(k)
        if not isinstance(request, DeepFrameRequest):
            break
        deepest = deepest or request
        most = max(most, int(request.max_iter))
    return None if deepest is None else dataclasses.replace(deepest, max_iter=most)


@contextmanager
def movie_reference(movie, cancel=None, progress=None):
    """While inside: the deepest frame's reference pinned for every renderer of this process
    (yields it, or None for a movie without deep frames); unpinned however the movie ends."""
    request = deepest_request(movie)
    if request is None:
        yield None
        return
    from kernels.mandelbrot.reference.reference_store import compute_pinned, shared_store
    from kernels.mandelbrot.deep.renderer import PRECISION_HEADROOM
    orbit = compute_pinned(request.validate(), PRECISION_HEADROOM, cancel=cancel,
                           progress=progress)
    try:
        yield orbit
    finally:
        shared_store().unpin(orbit)


class ReferenceAhead:
    """movie_reference on a thread of its own, started before the GPUs' pool opens: the orbit
    (compiled code that holds no GIL) is computed while the GPUs' contexts are made and their
    kernels warmed, instead of after. `wait(cancel)` returns the pinned orbit (or None) and raises
    the computation's error; a cancel of `cancel` stops the computation. `close()` (however the
    movie ends) stops it if still running and unpins the orbit."""

    def __init__(self, movie):
        import threading

        from kernels.scheduler import CancelToken
        self.token = CancelToken()
        self._context = movie_reference(movie, cancel=self.token)
        self._done = threading.Event()
        self._box: dict = {}
        self._thread = threading.Thread(target=self._run, name="movie-reference", daemon=True)

    def start(self) -> ReferenceAhead:
        self._thread.start()
        return self

    def _run(self):
        try:
            self._box["orbit"] = self._context.__enter__()
        except BaseException as exc:        # raised by wait(), on the movie's thread
            self._box["error"] = exc
        finally:
            self._done.set()

    def wait(self, cancel=None):
        forget = cancel.on_cancel(self.token.cancel) if cancel is not None else (lambda: None)
        try:
            self._done.wait()
        finally:
            forget()
        if "error" in self._box:
            raise self._box["error"]
        return self._box.get("orbit")

    def close(self) -> None:
        self.token.cancel()
        self._done.wait()
        if "orbit" in self._box:
            self._box.pop("orbit")
            self._context.__exit__(None, None, None)
