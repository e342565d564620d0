"""services/movie_writer.py: the order frames are rendered in feeds every encoder lane."""
from __future__ import annotations

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
