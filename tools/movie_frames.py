#!/usr/bin/env python3
"""Decoded frames of movies compared without keeping them: `hash MOVIE` prints one digest per
decoded frame (RGB, as PyAV decodes it); `compare A.txt B.txt ...` says how many frames of each
list equal the first list's, frame for frame, and the indices of the first few that differ.

    python3 tools/movie_frames.py hash one.mp4 > one.txt
    python3 tools/movie_frames.py compare one.txt two.txt four.txt
"""
from __future__ import annotations

import hashlib
import sys

SHOWN = 8       # differing frames named in a comparison


def hashes(path: str):
    import av
    with av.open(path) as f:
        f.streams.video[0].thread_type = "AUTO"     # frame threads: the decode is not compared
        for frame in f.decode(video=0):
            yield hashlib.blake2b(frame.to_ndarray(format="rgb24").tobytes(), digest_size=12).hexdigest()


def compare(paths: list[str]) -> list[str]:
    lists = []
    for p in paths:
        with open(p) as fh:
            lists.append([line.strip() for line in fh if line.strip()])
    first = lists[0]
    out = [f"{paths[0]}: {len(first)} frames (the reference)"]
    for p, other in zip(paths[1:], lists[1:]):
        differ = [k for k, (a, b) in enumerate(zip(first, other)) if a != b]
        n = min(len(first), len(other))
        line = f"{p}: {len(other)} frames, identical to the reference: {n - len(differ)} of {n}"
        if differ:
            more = f" (+{len(differ) - SHOWN} more)" if len(differ) > SHOWN else ""
            line += f"; differing frames: {', '.join(map(str, differ[:SHOWN]))}{more}"
        out.append(line)
    return out


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "hash":
        for h in hashes(argv[1]):
            print(h)
        return 0
    if len(argv) >= 3 and argv[0] == "compare":
        print("\n".join(compare(argv[1:])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
