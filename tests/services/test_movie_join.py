"""services/movie_join.py: segments appended to the output as they finish, in order, make the same
file as the join of all of them at the end (short last segment, all segments short, segments with
and without B-frames), decoding times rising throughout; a segment that decodes further ahead than
the delay taken falls back to the whole join; other encoder settings are refused with the join's
message; a stopped join leaves no output and keeps the segments."""
from __future__ import annotations

import os
import random
import time

import numpy as np
import pytest

av = pytest.importorskip("av")

from services import movie_join, video  # noqa: E402

W, H, FPS = 64, 32, 10
OTHER_SETTINGS = ("was encoded with other settings than the first segment; remove the parts "
                  "folder and start again")


class SegmentsFolder:
    """The part of services.movie_parts.Parts a joiner reads: the cut, the files, the output."""

    def __init__(self, tmp_path, lengths, ext=".mp4"):
        self.folder = str(tmp_path / "out.parts")
        os.makedirs(self.folder)
        self.out = str(tmp_path / f"out{ext}")
        firsts = np.cumsum([0] + list(lengths[:-1]))
        self.segments = [(int(f), n) for f, n in zip(firsts, lengths)]

    def segment_file(self, i):
        return os.path.join(self.folder, f"segment-{i:05d}.mp4")

    def is_done(self, i):
        return os.path.exists(self.segment_file(i))

    def encode(self, i, width=W):
        first, n = self.segments[i]
        enc = video.SegmentEncoder(self.segment_file(i), video.encoder_name(video.DEFAULT_CODEC),
                                   width, H, FPS)
        with enc:
            for k in range(first, first + n):
                rgba = np.full((H, width, 4), 255, dtype=np.uint8)
                rgba[..., :3] = 10 + 8 * k          # each frame its own grey, rising
                enc.add(rgba)


def _packets(path):
    with av.open(path) as f:
        return [(p.pts, p.dts, bytes(p)) for p in f.demux(video=0) if p.size]


def _decoded(path):
    with av.open(path) as f:
        return [fr.to_ndarray(format="rgb24") for fr in f.decode(video=0)]


def _whole_join(parts, tmp_path):
    out = str(tmp_path / "whole.mp4")
    video.join_segments([(parts.segment_file(i), first)
                         for i, (first, _) in enumerate(parts.segments)], out, FPS)
    return out


def _wait_for(cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "the joiner did not get there"
        time.sleep(0.01)


@pytest.mark.parametrize("lengths", [[5, 5, 5, 2], [2, 2, 2], [2, 3, 2, 3], [1, 4, 4]],
                         ids=["last-short", "all-short", "with-and-without-b-frames", "first-one"])
def test_segments_joined_as_they_finish_make_the_whole_joins_file(tmp_path, lengths):
    parts = SegmentsFolder(tmp_path, lengths)
    parts.encode(0)                    # finished by an earlier run: joined first, unannounced
    joiner = movie_join.SegmentJoiner(parts, FPS)
    joiner.start()
    rest = list(range(1, len(lengths)))
    random.Random(len(lengths)).shuffle(rest)      # lanes finish in any order
    for i in rest:
        parts.encode(i)
        joiner.segment_done(i)
    # everything joined ahead of finish(), and no output yet: it is renamed into place at the end
    _wait_for(lambda: joiner.joined == len(lengths))
    assert not os.path.exists(parts.out)
    assert joiner.finish() == sum(lengths)
    assert joiner.fallback is None and joiner.error is None
    # the output's temporary file has left the parts folder; the segments are the writer's
    assert sorted(os.listdir(parts.folder)) == [f"segment-{i:05d}.mp4" for i in range(len(lengths))]

    got = _packets(parts.out)
    dts = [d for _, d, _ in got]
    assert len(got) == sum(lengths)
    assert all(b > a for a, b in zip(dts, dts[1:])), dts
    whole = _whole_join(parts, tmp_path)
    assert got == _packets(whole)
    frames, ref = _decoded(parts.out), _decoded(whole)
    assert len(frames) == len(ref) == sum(lengths)
    assert all(np.array_equal(a, b) for a, b in zip(frames, ref))
    grey = [f.mean() for f in frames]
    assert all(b > a for a, b in zip(grey, grey[1:])), grey


def test_a_segment_deeper_than_the_delay_taken_falls_back_to_the_whole_join(tmp_path):
    # 2 frames decode without delay, 3 reorder a B-frame: take a 2-frame one as the longest
    parts = SegmentsFolder(tmp_path, [2, 3, 2])
    for i in range(3):
        parts.encode(i)
    joiner = movie_join.SegmentJoiner(parts, FPS)
    joiner.longest = 2
    joiner.start()
    _wait_for(lambda: joiner.fallback is not None)
    assert "decodes" in joiner.fallback and joiner.joined == 0
    assert sorted(os.listdir(parts.folder)) == [f"segment-{i:05d}.mp4" for i in range(3)]
    assert joiner.finish() == 7
    got = _packets(parts.out)
    assert got == _packets(_whole_join(parts, tmp_path))
    dts = [d for _, d, _ in got]
    assert all(b > a for a, b in zip(dts, dts[1:])), dts


def test_a_segment_with_other_settings_is_refused_and_nothing_is_written(tmp_path):
    parts = SegmentsFolder(tmp_path, [3, 3])
    parts.encode(0)
    parts.encode(1, width=2 * W)
    joiner = movie_join.SegmentJoiner(parts, FPS)
    joiner.start()
    _wait_for(lambda: joiner.error is not None)
    assert isinstance(joiner.error, ValueError) and OTHER_SETTINGS in str(joiner.error)
    with pytest.raises(ValueError, match="other settings"):
        joiner.finish()
    with pytest.raises(ValueError, match="other settings"):
        _whole_join(parts, tmp_path)
    assert not os.path.exists(parts.out)
    assert sorted(os.listdir(parts.folder)) == ["segment-00000.mp4", "segment-00001.mp4"]
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] == []


def test_a_stopped_join_leaves_no_output_and_keeps_the_segments(tmp_path):
    parts = SegmentsFolder(tmp_path, [3, 3, 3])
    parts.encode(0)
    parts.encode(1)
    joiner = movie_join.SegmentJoiner(parts, FPS)
    joiner.start()
    _wait_for(lambda: joiner.joined == 2)
    held = [n for n in os.listdir(parts.folder) if n.endswith(".tmp")]
    assert len(held) == 1, "the output grows under a temporary name in the parts folder"
    joiner.abort()
    assert not os.path.exists(parts.out)
    assert sorted(os.listdir(parts.folder)) == ["segment-00000.mp4", "segment-00001.mp4"]
    with pytest.raises(RuntimeError, match="stopped"):
        joiner.finish()
