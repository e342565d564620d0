"""Joining a movie's segments: segments too short to reorder frames beside ones that do."""
from __future__ import annotations

import numpy as np
import pytest

av = pytest.importorskip("av")

from services import video  # noqa: E402

W, H, FPS = 64, 32, 10


def _frame(level: int) -> np.ndarray:
    rgba = np.full((H, W, 4), 255, dtype=np.uint8)
    rgba[..., :3] = level
    return rgba


def _segment(path, levels):
    enc = video.SegmentEncoder(str(path), video.encoder_name(video.DEFAULT_CODEC), W, H, FPS)
    with enc:
        for level in levels:
            enc.add(_frame(level))
        enc.finish()


def _delay(path):
    with av.open(str(path)) as f:
        return next(p.dts for p in f.demux(video=0) if p.size)


def test_segments_with_and_without_b_frames_join_in_order(tmp_path):
    # 2 frames: nothing to reorder; 3 frames: x264 puts a B-frame in and decodes ahead
    lengths = [2, 3, 2, 3]
    levels = iter(range(20, 20 + 20 * sum(lengths), 20))
    segments, first = [], 0
    for i, n in enumerate(lengths):
        path = tmp_path / f"segment-{i}.mp4"
        _segment(path, [next(levels) for _ in range(n)])
        segments.append((str(path), first))
        first += n
    delays = {_delay(p) for p, _ in segments}
    assert len(delays) == 2, f"the case needs segments with and without a decoding delay: {delays}"
    out = tmp_path / "movie.mp4"
    assert video.join_segments(segments, str(out), FPS) == sum(lengths)
    with av.open(str(out)) as f:
        frames = [(fr.pts, fr.to_ndarray(format="gray").mean()) for fr in f.decode(video=0)]
    assert len(frames) == sum(lengths)
    pts = [p for p, _ in frames]
    assert pts == sorted(pts) and len(set(pts)) == len(pts)
    grey = [g for _, g in frames]
    assert all(b > a for a, b in zip(grey, grey[1:])), grey
