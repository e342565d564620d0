"""Bookmarks of the Mandelbrot view: named places read from JSON files (the shipped ones, then the
user's own), each entry checked with the limits a pasted location meets. Qt-free: the side panel
lists what these functions return, and says what was skipped.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

from ..shipped_data import shipped_file
from .location import location_from_values

BOOKMARKS_PATH = shipped_file("bookmarks.json")
MAX_BOOKMARKS_BYTES = 4 * 2 ** 20     # a bookmark file larger than this is not one


@dataclass(frozen=True)
class Bookmark:
    name: str
    center_re: Decimal
    center_im: Decimal
    width: Decimal           # any depth (deep bookmarks are far below float64's range)
    iterations: int | None
    note: str = ""


class BadBookmarkFile(ValueError):
    """The file as a whole cannot be read as bookmarks (the reason in plain words)."""


def load_bookmarks(path: str = BOOKMARKS_PATH) -> tuple[list[Bookmark], list[str]]:
    """(bookmarks, problems): every good entry of the JSON file, and one plain line per entry that
    was skipped (numbers are read as Decimal so no digit is lost; each location meets the limits a
    pasted one does). Raises BadBookmarkFile when the file as a whole is unusable."""
    try:
        if os.path.getsize(path) > MAX_BOOKMARKS_BYTES:
            raise BadBookmarkFile(f"{os.path.basename(path)} is larger than "
                                  f"{MAX_BOOKMARKS_BYTES // 2 ** 20} MiB")
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh, parse_float=Decimal, parse_int=Decimal)
    except OSError as exc:
        raise BadBookmarkFile(f"cannot read {os.path.basename(path)}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:      # not JSON (UnicodeDecodeError is a ValueError)
        raise BadBookmarkFile(f"{os.path.basename(path)} is not valid JSON: {exc}") from None
    entries = data.get("bookmarks") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BadBookmarkFile(f"{os.path.basename(path)} holds no list under \"bookmarks\"")
    out, problems = [], []
    for i, b in enumerate(entries):
        try:
            out.append(bookmark_from_entry(b))
        except ValueError as exc:
            name = b.get("name") if isinstance(b, dict) else None
            label = f"{name!r}" if isinstance(name, str) and name.strip() else f"entry {i + 1}"
            problems.append(f"bookmark {label} skipped: {exc}")
    return out, problems


def bookmark_from_entry(b) -> Bookmark:
    """One entry of a bookmark file as a Bookmark; ValueError in plain words when it is not one."""
    if not isinstance(b, dict):
        raise ValueError(f"expected an object with name, center and width, got {type(b).__name__}")
    name = b.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("it has no name")
    centre = b.get("center")
    if not isinstance(centre, list) or len(centre) != 2:
        raise ValueError("its center must be a list of two numbers [re, im]")
    if "width" not in b:
        raise ValueError("it has no width")
    loc = location_from_values(centre[0], centre[1], b["width"], b.get("iterations"))
    note = b.get("note", "")
    return Bookmark(name.strip(), loc.center_re, loc.center_im, loc.width, loc.iterations,
                    note if isinstance(note, str) else "")


@dataclass(frozen=True)
class BookmarkList:
    """What the side panel lists: the good bookmarks, the entries skipped (one line each) and
    notes for the status bar about files that could not be used at all."""
    items: list[Bookmark]
    skipped: list[str]
    notes: list[str]


def read_bookmark_files(shipped: str, user: str | None,
                        set_aside: Callable[[str], str | None] | None = None) -> BookmarkList:
    """The shipped bookmarks, then the user's own file if there is one. A bad entry is skipped and
    named; a user's file that cannot be read at all is handed to `set_aside` (which renames it and
    returns the new path, or None)."""
    items, skipped, notes = [], [], []
    try:
        found, problems = load_bookmarks(shipped)
        items += found
        skipped += problems
    except BadBookmarkFile as exc:
        notes.append(f"Bookmarks unavailable: {exc}")
    if user and os.path.exists(user):
        try:
            found, problems = load_bookmarks(user)
            items += found
            skipped += problems
        except BadBookmarkFile as exc:
            moved = set_aside(user) if set_aside is not None else None
            where = f"; set aside as {os.path.basename(moved)}" if moved else ""
            notes.append(f"Your bookmarks were not loaded: {exc}{where}")
    if skipped:
        notes.append("; ".join(skipped))
    return BookmarkList(items, skipped, notes)
