"""services/movie_writer.py: the order frames are rendered in feeds every encoder lane, and
finished segments are joined into the output while later ones still encode."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from services import movie, movie_parts, movie_writer

CENTRE = ("-0.7436438870", "0.1318259043")


def test_frames_are_rendered_a_few_for_each_lane_in_turn(tmp_path, monkeypatch):
    monkeypatch.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    spec = movie.MovieSpec(out=str(tmp_path / "z.mp4"), size=(64, 36), fps=10, seconds=2,
                           center=",".join(CENTRE), width="1e-4")
    writer = movie_writer.MovieWriter(movie.prepare(spec, open_encoder=False), lanes=2)
    # 20 frames in segments of 5, segments 0 and 2 on lane 0, 1 and 3 on lane 1
    assert writer.parts.segments == [(0, 5), (5, 5), (10, 5), (15, 5)]
    order = writer.render_order()
    assert sorted(order) == list(range(20))
    assert order[:8] == [0, 1, 2, 3, 5, 6, 7, 8]
    assert [writer.lane_of[k].segments for k in (0, 5, 10, 15)] == [[0, 2], [1, 3], [0, 2], [1, 3]]


def test_finished_segments_are_joined_while_later_ones_encode(tmp_path, monkeypatch):
    pytest.importorskip("av")
    from services import video
    monkeypatch.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    out = tmp_path / "z.mp4"
    spec = movie.MovieSpec(out=str(out), size=(64, 36), fps=10, seconds=2,
                           center=",".join(CENTRE), width="1e-4")
    writer = movie_writer.MovieWriter(movie.prepare(spec), lanes=2)
    order = writer.render_order()

    def frame(k):
        rgba = np.full((36, 64, 4), 255, np.uint8)
        rgba[..., :3] = 10 + 10 * k
        return rgba
    # segments 0 and 1 (frames 0-9, one on each lane) first, then wait: they are joined while
    # segments 2 and 3 have not even begun
    for k in [k for k in order if k < 10]:
        writer.put(k, frame(k))
    deadline = time.monotonic() + 30
    while writer.joiner.joined < 2:
        assert time.monotonic() < deadline, "the first segments were not joined ahead"
        time.sleep(0.01)
    assert not out.exists()
    for k in [k for k in order if k >= 10]:
        writer.put(k, frame(k))
    assert writer.finish() == 20
    assert writer.joined_ahead >= 2 and writer.joined_ahead_s > 0
    assert video.probe_frames(str(out)) == (20, 10)
    assert not os.path.exists(movie_parts.parts_dir(str(out)))
