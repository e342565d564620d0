"""The command line keeps the heap made before a pool's work out of garbage collections while it
renders (cli/heap.py), and gives it back afterwards: a process that goes on collects as before."""
import gc

import pytest

import main
from cli.heap import heap_frozen
from services import movie as movie_mod


def test_heap_frozen_freezes_inside_and_gives_back_after():
    assert gc.get_freeze_count() == 0
    with heap_frozen():
        assert gc.get_freeze_count() > 1000
        junk = []
        junk.append(junk)                   # a cycle made inside is still collectable
        del junk
        assert gc.collect() >= 1
    assert gc.get_freeze_count() == 0
    with pytest.raises(ZeroDivisionError):
        with heap_frozen():
            1 / 0
    assert gc.get_freeze_count() == 0


def test_a_movie_renders_its_frames_with_the_heap_frozen(tmp_path, monkeypatch):
    pytest.importorskip("av", reason="the movie extra (PyAV) is not installed")
    seen = []
    real = movie_mod.MovieFrameJob.__call__

    def call(self, worker):
        seen.append(gc.get_freeze_count())
        return real(self, worker)
    monkeypatch.setattr(movie_mod.MovieFrameJob, "__call__", call)
    assert main.main(["--movie", str(tmp_path / "m.mp4"), "--backend", "cpu", "--size", "32x18",
                      "--fps", "4", "--seconds", "1", "--center", "-0.7436438870,0.1318259043",
                      "--width", "1e-4"]) == 0
    assert len(seen) == 4 and min(seen) > 1000
    assert gc.get_freeze_count() == 0
