"""One reference orbit per zoom movie: the deepest frame's, computed first and pinned, serves every
deep frame (the movie computes one reference where each depth computed its own), and the frames
rendered around it equal independent renders within ±1 count on at least 99.5 % of the pixels."""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager

import numpy as np
import pytest

import main
from kernels.backend import resolve
from kernels.mandelbrot.reference import reference as reference_module
from kernels.mandelbrot.reference.reference_store import shared_store
from kernels.mandelbrot.deep.renderer import DeepRenderer
from kernels.mandelbrot.requests.request import DeepFrameRequest
from services import movie_reference
from services.movie import MovieSpec, prepare

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

CENTRE = "-0.743643887037158704752191506114774,0.131825904205311970493132056385139"


@pytest.fixture
def computed(monkeypatch):
    """The orbits whose extend() iterated (computed references; a pinned orbit's copies never do).
    The engines' once-a-process warm-up orbit (a few steps elsewhere) is made first: it is no
    frame's reference, and whether an earlier test already made it must not matter."""
    reference_module.warm_engine(mpfr=True)
    seen = set()
    plain = reference_module.ReferenceOrbit.extend

    def extend(self, *a, **k):
        before = self.version
        out = plain(self, *a, **k)
        if self.version != before:
            seen.add(id(self))
        return out
    monkeypatch.setattr(reference_module.ReferenceOrbit, "extend", extend)
    return seen


def make_movie(tmp_path, name):
    pattern = tmp_path / name / "f%02d.png"
    pattern.parent.mkdir()
    return main.main(["--movie", str(pattern), "--backend", "cpu", "--size", "16x10", "--fps",
                      "6", "--seconds", "2", "--center", CENTRE, "--width", "1e-40",
                      "--iters", "4000"])


def test_a_movie_computes_one_reference(tmp_path, computed, monkeypatch):
    assert make_movie(tmp_path, "one") == 0
    assert len(computed) == 1
    assert shared_store().pinned() == []          # unpinned when the movie ended

    @contextmanager
    def nothing(movie, cancel=None, progress=None):
        yield None
    monkeypatch.setattr(movie_reference, "movie_reference", nothing)
    computed.clear()
    assert make_movie(tmp_path, "each") == 0
    assert len(computed) > 3                      # without it each depth computes its own


def test_frames_around_the_pinned_reference_equal_independent_renders(tmp_path):
    spec = MovieSpec(out=str(tmp_path / "f%02d.png"), size=(40, 24), fps=6, seconds=2,
                     center=CENTRE, width="1e-40", iters="4000")
    movie = prepare(spec)
    deep = [k for k in range(movie.frames) if isinstance(movie.request(k), DeepFrameRequest)]
    assert len(deep) >= 6
    with movie_reference.movie_reference(movie) as pinned:
        assert pinned is not None and shared_store().pinned() == [pinned]
        r = DeepRenderer(resolve("cpu"))
        r.references = shared_store()
        for k in deep:
            req = dataclasses.replace(movie.request(k), want_values=True)
            got = r.render_values(req)
            assert got.reused and got.reference.precision == pinned.precision
            assert got.reference.centre_re == pinned.centre_re
            want = DeepRenderer(resolve("cpu")).render_values(req)
            assert want.reference.centre_re != pinned.centre_re or k == deep[-1]
            close = np.abs(got.values - want.values) <= 1.0
            assert close.mean() >= 0.995, f"frame {k}: {close.mean():.4f}"
    assert shared_store().pinned() == []
