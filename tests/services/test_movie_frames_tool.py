"""tools/movie_frames.py's comparison names the frames that differ (a GPU run's only clue to which
frame of a movie over several GPUs is not the one-GPU movie's)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "movie_frames.py"


def _tool():
    spec = importlib.util.spec_from_file_location("movie_frames", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_compare_counts_and_names_the_differing_frames(tmp_path):
    tool = _tool()
    ref, other = tmp_path / "one.txt", tmp_path / "two.txt"
    ref.write_text("".join(f"h{k}\n" for k in range(20)))
    changed = {3, 7} | set(range(10, 10 + tool.SHOWN))
    other.write_text("".join(f"{'x' if k in changed else 'h'}{k}\n" for k in range(20)))
    lines = tool.compare([str(ref), str(other), str(ref)])
    assert f"identical to the reference: {20 - len(changed)} of 20" in lines[1]
    shown = sorted(changed)[:tool.SHOWN]
    assert f"differing frames: {', '.join(map(str, shown))} (+{len(changed) - tool.SHOWN} more)" in lines[1]
    assert lines[2].endswith("20 of 20")
