#!/usr/bin/env python3
"""What joining a movie's segments costs after its last frame (issue 23), on segments encoded here:
SEGMENTS segment files of FRAMES frames at WxH (libx264 as the movie encodes them; busy pictures,
so that keyframes are as heavy as a deep zoom's), then, best of REPEATS:

- `whole, probing every open`: the join as it was, every segment opened with FFmpeg's stream
  probe (which decodes its first frame), twice (its delay, then its packets);
- `whole`: services.video.join_segments as it is (only the template segment probed);
- `after the last segment`: what a progressive join (services/movie_join.py) leaves for after the
  last lane: every segment but the last appended beforehand, then the last appended and the file
  closed, synced and renamed.

    PYTHONPATH=. python3 tools/movie_join_bench.py [--size 1920x1080] [--segments 60] [--frames 60]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from services import video


def encode(folder: str, segments: int, frames: int, w: int, h: int, fps: int) -> list:
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:h, 0:w]
    out = []
    for i in range(segments):
        path = os.path.join(folder, f"segment-{i:05d}.mp4")
        with video.SegmentEncoder(path, "libx264", w, h, fps, threads=os.cpu_count() or 1) as enc:
            for k in range(frames):
                t = i * frames + k
                rgba = np.empty((h, w, 4), np.uint8)
                rgba[..., 0] = ((x * y + 7 * t) % 251).astype(np.uint8)
                rgba[..., 1] = ((x ^ y) + 3 * t).astype(np.uint8)
                rgba[..., 2] = rng.integers(0, 64, (h, w), dtype=np.uint8)
                rgba[..., 3] = 255
                enc.add(rgba)
        out.append((path, i * frames))
    return out


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--segments", type=int, default=20)
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--fps", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.lower().split("x"))
    with tempfile.TemporaryDirectory(prefix="join-bench-") as folder:
        t0 = time.perf_counter()
        segs = encode(folder, a.segments, a.frames, w, h, a.fps)
        size = sum(os.path.getsize(p) for p, _ in segs)
        print(f"{a.segments} segments of {a.frames} frames at {w}x{h}, {size / 1e6:.1f} MB, "
              f"encoded in {time.perf_counter() - t0:.1f} s")
        out = os.path.join(folder, "out.mp4")
        plain = video._open_segment

        def probing():
            video._open_segment = lambda path, template=False: plain(path, True)
            try:
                video.join_segments(segs, out, a.fps)
            finally:
                video._open_segment = plain
        print(f"whole, probing every open: {best(probing, a.repeats):.3f} s")
        print(f"whole: {best(lambda: video.join_segments(segs, out, a.fps), a.repeats):.3f} s")
        tails = []
        for _ in range(a.repeats):
            joined = video.JoinedVideo(out, a.fps, video.decoding_delay(segs[0][0]), folder)
            t0 = time.perf_counter()
            for path, first in segs[:-1]:
                joined.append(path, first)
                joined.sync()
            ahead = time.perf_counter() - t0
            t0 = time.perf_counter()
            joined.append(*segs[-1])
            joined.close()
            tails.append((time.perf_counter() - t0, ahead))
        tail, ahead = min(tails)
        print(f"after the last segment: {tail:.3f} s (the others appended ahead in {ahead:.3f} s)")
        print(f"frames in the output: {video.probe_frames(out)[0]} of {a.segments * a.frames}")


if __name__ == "__main__":
    main()
