"""The keyframes folder of a keyframe movie (services/movie_keyframes.py): whole files or none, a
manifest that says the layout, another zoom's keyframes never read, the movie's own written by a
thread that skips what the disk cannot keep up with, the user's --keyframes-out folder written
whole."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from kernels.mandelbrot.expmap import expmap_of
from kernels.mandelbrot.zoom_path import zoom_in
from services import movie_keyframes as mk


@pytest.fixture
def em():
    return expmap_of(zoom_in("-0.75", "0.1", "1e-6", None, 20), (32, 18))


def test_saved_keyframes_come_back_whole_with_their_manifest(tmp_path, em):
    files = mk.KeyframeFiles(tmp_path / "k", em)
    v = np.random.default_rng(1).random((em.rows, em.cols))
    files.save(3, v)
    files.close()
    assert np.array_equal(files.load(3), v) and files.load(4) is None
    manifest = json.loads((tmp_path / "k" / mk.MANIFEST).read_text())
    assert (manifest["rows"], manifest["cols"], manifest["count"]) == (em.rows, em.cols, em.count)
    assert len(manifest["limits"]) == em.count
    # a half-written file (no rename) or one of another shape is not a keyframe
    np.save(files.path(5), np.zeros((2, 2)))
    assert files.load(5) is None
    files.discard(3)
    files.close()
    assert not os.path.exists(files.path(3))


def test_another_zooms_keyframes_are_never_read(tmp_path, em):
    files = mk.KeyframeFiles(tmp_path / "k", em)
    files.save(0, np.ones((em.rows, em.cols)))
    files.close()
    other = expmap_of(zoom_in("-0.75", "0.1", "1e-7", None, 20), (32, 18))
    again = mk.KeyframeFiles(tmp_path / "k", other)
    assert again.load(0) is None
    again.save(2, np.ones((other.rows, other.cols)))
    again.close()
    with pytest.raises(ValueError):            # the user's folder is refused, never emptied
        mk.KeyframeFiles(tmp_path / "k", em, keep=True)
    assert again.load(2) is not None


def test_the_movies_own_folder_skips_what_the_disk_cannot_keep_up_with(tmp_path, em,
                                                                       monkeypatch):
    monkeypatch.setattr(mk, "MAX_PENDING", 0)
    files = mk.KeyframeFiles(tmp_path / "k", em)
    files.save(1, np.ones((em.rows, em.cols)))
    files.close()
    assert files.skipped == 1 and files.load(1) is None
    kept = mk.KeyframeFiles(tmp_path / "u", em, keep=True)
    kept.save(1, np.ones((em.rows, em.cols)))     # every one, written before save returns
    assert kept.skipped == 0 and kept.load(1) is not None
    kept.discard(1)
    assert kept.load(1) is not None
