"""The keyframes folder of a keyframe movie (services/movie_keyframes.py): whole files or none, a
manifest that says the layout, another zoom's keyframes never read, the movie's own written by a
thread that skips what the disk cannot keep up with, the user's --keyframes-out folder written
whole."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from kernels.mandelbrot.keyframes.expmap import expmap_of
from kernels.mandelbrot.keyframes.zoom_path import zoom_in
from services import movie_keyframes as mk


@pytest.fixture
def em():
    return expmap_of(zoom_in("-0.75", "0.1", "1e-6", None, 20), (32, 18))


def test_saved_keyframes_come_back_whole_with_their_manifest(tmp_path, em):
    files = mk.KeyframeFiles(tmp_path / "k", em)
    v = np.random.default_rng(1).random(em.samples)
    files.save(3, v)
    files.close()
    assert np.array_equal(files.load(3), v) and files.load(4) is None
    manifest = json.loads((tmp_path / "k" / mk.MANIFEST).read_text())
    assert manifest["sectors"] == [list(x) for x in em.sectors]
    assert manifest["count"] == em.count
    assert len(manifest["limits"]) == em.count
    # a half-written file (no rename) or one of another shape is not a keyframe
    np.save(files.path(5), np.zeros((2, 2)))
    assert files.load(5) is None
    files.discard(3)
    files.close()
    assert not os.path.exists(files.path(3))


def test_another_zooms_keyframes_are_never_read(tmp_path, em):
    files = mk.KeyframeFiles(tmp_path / "k", em)
    files.save(0, np.ones(em.samples))
    files.close()
    other = expmap_of(zoom_in("-0.75", "0.1", "1e-7", None, 20), (32, 18))
    again = mk.KeyframeFiles(tmp_path / "k", other)
    assert again.load(0) is None
    again.save(2, np.ones(other.samples))
    again.close()
    with pytest.raises(ValueError):            # the user's folder is refused, never emptied
        mk.KeyframeFiles(tmp_path / "k", em, keep=True)
    assert again.load(2) is not None


def test_the_movies_own_folder_skips_what_the_disk_cannot_keep_up_with(tmp_path, em,
                                                                       monkeypatch):
    monkeypatch.setattr(mk, "MAX_PENDING", 0)
    files = mk.KeyframeFiles(tmp_path / "k", em)
    files.save(1, np.ones(em.samples))
    files.close()
    assert files.skipped == 1 and files.load(1) is None
    kept = mk.KeyframeFiles(tmp_path / "u", em, keep=True)
    kept.save(1, np.ones(em.samples))     # every one, written before save returns
    assert kept.skipped == 0 and kept.load(1) is not None
    kept.discard(1)
    assert kept.load(1) is not None


def test_frames_octaves_apart_need_only_their_own_keyframes():
    """A short movie over a deep zoom: consecutive frames lie many octaves apart, and a chunk of
    them needs each frame's run of keyframes, not every keyframe between."""
    from types import SimpleNamespace
    path = zoom_in("-0.75", "0.1", "1e-60", None, 6)
    em = expmap_of(path, (32, 18))
    movie = SimpleNamespace(path=path, spec=SimpleNamespace(size=(32, 18)))
    batches, last_use = mk.schedule(movie, em, list(range(6)))
    per_frame = max(b - a + 1 for a, b in (em.needs(mk_width(path, k)) for k in range(6)))
    assert len(last_use) <= 6 * per_frame < em.count
    for chunks in batches:
        for c in chunks:
            assert len(mk.chunk_keyframes(c)) <= len(c) * per_frame


def mk_width(path, k):
    from kernels.mandelbrot.keyframes.expmap import width_log2
    return width_log2(path.frame(k).width)


def test_the_next_batchs_keyframes_are_spread_among_the_frames():
    groups = mk.interleave(["f0", "f1", "f2", "f3"], ["k0", "k1"])
    # every frame job once, in order; every keyframe once, in order
    assert [j for _, fjs in groups for j in fjs] == [0, 1, 2, 3]
    assert [k for k, _ in groups if k is not None] == [0, 1]
    order = [("k", k) if k is not None else None for k, _ in groups]
    flat = [x for (k, fjs) in groups for x in ([("k", k)] if k is not None else [])
            + [("f", j) for j in fjs]]
    assert flat.index(("k", 0)) < flat.index(("f", 3)) and flat.index(("k", 1)) > flat.index(("f", 1))
    assert None not in order[1:]            # only the first group may lack a keyframe
    assert mk.interleave([], ["k0"]) == [(0, [])] and mk.interleave(["f0"], []) == [(None, [0])]


class _Worker:
    """A pool worker's face for KeyframeGroup: jobs are called with it."""


def test_a_group_queues_its_keyframe_before_its_frames_and_waits_for_it_after():
    calls = []

    class Keyframe:
        def start(self, worker):
            calls.append("start")
            return lambda: (calls.append("finish"), ("values", 0.5))[1]

    class Chunk:
        def __init__(self, name, fail=False):
            self.name, self.fail = name, fail

        def __call__(self, worker):
            calls.append(self.name)
            if self.fail:
                raise RuntimeError("cancelled")
            return [self.name], 0.1

    got = mk.KeyframeGroup(Keyframe(), (Chunk("a"), Chunk("b")))(_Worker())
    assert calls == ["start", "a", "b", "finish"]
    assert got == (("values", 0.5), [(["a"], 0.1), (["b"], 0.1)])
    assert mk.KeyframeGroup(None, (Chunk("c"),))(_Worker()) == (None, [(["c"], 0.1)])
    calls.clear()
    with pytest.raises(RuntimeError):      # a frame's error still lets the keyframe settle
        mk.KeyframeGroup(Keyframe(), (Chunk("d", fail=True),))(_Worker())
    assert calls == ["start", "d", "finish"]