"""Parts folders: where the finished parts of a long output (a poster's bands, a movie's segments
or frames) wait until it is whole, so that the same command after an interruption resumes from
them instead of starting over.

A folder beside the output holds a plan (what the parts belong to: place, size, options) and the
parts. A run resumes only from a folder whose plan is its own; a folder whose plan belongs to
another output is refused rather than mixed in. Every file is written whole or
not at all (services/files.py). Posters (services/poster.py) and movies (services/movie_parts.py)
are both a `PartsFolder` with their own parts.
"""
from __future__ import annotations

import json
import os
import shutil

from .files import write_json

# the layout of the plans written here; a plan of another version belongs to another output
PLAN_VERSION = 1
# what a file found inconsistent is renamed to (beside it), so that nothing is resumed from it
SET_ASIDE = ".set-aside"


def set_aside(path: str) -> str:
    """Rename `path` (a file or a folder) to PATH.set-aside, replacing an earlier one; returns the
    new name. Resume state that does not fit its request goes there instead of being trusted."""
    aside = os.fspath(path) + SET_ASIDE
    if os.path.isdir(aside) and not os.path.islink(aside):
        shutil.rmtree(aside, ignore_errors=True)
    elif os.path.lexists(aside):
        os.remove(aside)
    os.replace(path, aside)
    return aside


def read_json(path: str):
    """The JSON document at `path`; ValueError (in plain words) where it cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} cannot be read ({getattr(exc, 'strerror', None) or exc})") from None


def checked_indices(value, total: int, what: str) -> set[int]:
    """The indices in `value` (a list of whole numbers from 0 to total-1, each once); ValueError
    saying what is wrong otherwise (a dict, strings, null, a band 99999 of 12)."""
    if not isinstance(value, list):
        raise ValueError(f"the list of finished {what} is a {type(value).__name__}, not a list")
    bad = [v for v in value if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < total]
    if bad:
        raise ValueError(f"the list of finished {what} holds {bad[0]!r}, not one of 0 to {total - 1}")
    if len(set(value)) != len(value):
        raise ValueError(f"the list of finished {what} names one twice")
    return set(value)


def checked_cut(value, frames: int) -> list[tuple[int, int]]:
    """A movie plan's segments: [first, count] pairs, each count 1 or more, in order from frame 0
    without gap or overlap, covering exactly `frames` frames; ValueError otherwise (a negative or
    too-large count would make a movie of the wrong length)."""
    if not isinstance(value, list) or not value:
        raise ValueError(f"its segments are a {type(value).__name__}, not a list of segments")
    cut, at = [], 0
    for seg in value:
        ok = (isinstance(seg, list) and len(seg) == 2 and
              all(isinstance(v, int) and not isinstance(v, bool) for v in seg))
        if not ok or seg[0] != at or seg[1] < 1:
            raise ValueError(f"its segment {seg!r} does not follow frame {at}")
        cut.append((seg[0], seg[1]))
        at += seg[1]
    if at != frames:
        raise ValueError(f"its segments cover {at} frames, not the movie's {frames}")
    return cut


class PartsFolder:
    """The folder `folder` of one output's parts and its plan file (`plan_file`, default
    FOLDER/plan.json). `plan` is what identifies the output; `matches(old)` says whether a plan
    found on disk is this output's (equality unless a kind of output says otherwise)."""
    # a plan that cannot be read: another output's (its parts are not vouched for), unless a fresh
    # start rewrites every part anyway
    unreadable_is_other = True

    def __init__(self, folder: str, plan: dict, plan_file: str | None = None):
        self.folder = os.fspath(folder)
        self.plan = plan
        self.plan_file = plan_file or os.path.join(self.folder, "plan.json")

    def matches(self, old: dict) -> bool:
        return old == self.plan

    def read_plan(self) -> dict | None:
        """The plan on disk: None where there is none, {} where it cannot be read."""
        if not os.path.exists(self.plan_file):
            return None
        try:
            with open(self.plan_file, encoding="utf-8") as fh:
                got = json.load(fh)
            return got if isinstance(got, dict) else {}
        except (OSError, ValueError):
            return {}

    def holds_other(self) -> bool:
        """Whether the folder holds another output's parts (a plan that is not this one's)."""
        old = self.read_plan()
        if old is None or (old == {} and not self.unreadable_is_other):
            return False
        return not self.matches(old)

    def resumable(self) -> bool:
        """Whether the plan on disk is this output's: its parts may be kept."""
        old = self.read_plan()
        return old is not None and self.matches(old)

    def make(self) -> None:
        os.makedirs(self.folder, exist_ok=True)

    def write_plan(self, record: dict | None = None) -> None:
        """Write the plan (or `record`, a plan with more in it) atomically: a folder with a plan
        is a usable one, so it is written once the parts can be added."""
        write_json(self.plan_file, self.plan if record is None else record)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
