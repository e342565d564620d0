"""Bookmarks of the Mandelbrot view: named places read from JSON files (the shipped ones, then the
user's own), each entry checked with the limits a pasted location meets. Qt-free: the side panel
lists what these functions return, and says what was skipped. The user's own file is edited here
too (add, rename, remove, and remove's undo), written atomically under a lock on the file, and
keeps every entry it held, skipped ones included (UserBookmarks).
"""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

from kernels.mandelbrot.requests.deep_request import MIN_WIDTH_EXP10
from kernels.mandelbrot.requests.formulas import MANDELBROT
from kernels.mandelbrot.requests.request import MAX_ITER_LIMIT
from services.file_lock import file_lock
from services.requests import MAX_CENTRE, MAX_VIEW_WIDTH

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
    user: int | None = None  # the user's own: its index in the user's file (None: shipped)
    formula: str = MANDELBROT   # an entry without one is a place of the Mandelbrot set


class BadBookmarkFile(ValueError):
    """The file as a whole cannot be read as bookmarks (the reason in plain words)."""


class UnreadableBookmarkFile(BadBookmarkFile):
    """The file exists but cannot be opened (permissions, a folder): left where it is, since it is
    probably fine once the user can read it again."""


def load_bookmarks(path: str = BOOKMARKS_PATH) -> tuple[list[Bookmark], list[str]]:
    """(bookmarks, problems): every good entry of the JSON file, and one plain line per entry that
    was skipped (numbers are read as Decimal so no digit is lost; each location meets the limits a
    pasted one does). Raises BadBookmarkFile when the file as a whole is unusable."""
    found, problems = _load(path)
    return [b for _, b in found], problems


def _load(path: str) -> tuple[list[tuple[int, Bookmark]], list[str]]:
    """load_bookmarks with each good entry's index in the file."""
    try:
        if os.path.getsize(path) > MAX_BOOKMARKS_BYTES:
            raise BadBookmarkFile(f"{os.path.basename(path)} is larger than "
                                  f"{MAX_BOOKMARKS_BYTES // 2 ** 20} MiB")
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh, parse_float=Decimal, parse_int=Decimal)
    except OSError as exc:
        raise UnreadableBookmarkFile(f"cannot read {os.path.basename(path)}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:      # not JSON (UnicodeDecodeError is a ValueError)
        raise BadBookmarkFile(f"{os.path.basename(path)} is not valid JSON: {exc}") from None
    entries = data.get("bookmarks") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BadBookmarkFile(f"{os.path.basename(path)} holds no list under \"bookmarks\"")
    out, problems = [], []
    for i, b in enumerate(entries):
        try:
            out.append((i, bookmark_from_entry(b)))
        except (ValueError, ArithmeticError) as exc:
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
    _check_magnitudes(centre[0], centre[1], b["width"], b.get("iterations"))
    loc = location_from_values(centre[0], centre[1], b["width"], b.get("iterations"),
                               b.get("formula", MANDELBROT))
    note = b.get("note", "")
    return Bookmark(name.strip(), loc.center_re, loc.center_im, loc.width, loc.iterations,
                    note if isinstance(note, str) else "", formula=loc.formula)


def _exponent(v) -> int | None:
    """The decimal exponent of a finite number (Decimal.adjusted: no arithmetic, so no overflow
    and no waiting on a number of a billion digits), or None for anything else."""
    if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
        return None
    if isinstance(v, float):
        v = Decimal(repr(v)) if v == v and abs(v) != float("inf") else None
    elif isinstance(v, int):
        v = Decimal(v) if v.bit_length() < 4000 else None    # far out of range either way
        if v is None:
            return 10 ** 6
    if v is None or not v.is_finite() or v.is_zero():
        return None
    return v.adjusted()


def _check_magnitudes(re_, im_, width, iterations) -> None:
    """Refuse numbers far out of range before any Decimal arithmetic: 1e1000000 overflows the
    default context, and an iteration count of 1e999999999 would be turned into an int of a
    billion digits. The precise limits are check_location's."""
    for what, v in (("the centre's real part", re_), ("the centre's imaginary part", im_)):
        e = _exponent(v)
        if e is not None and e > len(str(int(MAX_CENTRE))):
            raise ValueError(f"{what} (about 1e{e}) is too far out; the set lies within |c| ≤ 2")
    e = _exponent(width)
    if e is not None and e > len(str(int(MAX_VIEW_WIDTH))):
        raise ValueError(f"the width (about 1e{e}) is too large; the whole set is about 3 wide")
    if e is not None and e < MIN_WIDTH_EXP10 - 1:
        raise ValueError(f"the width (about 1e{e}) is deeper than the deepest supported, "
                         f"1e{MIN_WIDTH_EXP10}")
    e = _exponent(iterations)
    if e is not None and e > len(str(MAX_ITER_LIMIT)):
        raise ValueError(f"the iteration count (about 1e{e}) is more than {MAX_ITER_LIMIT:,}")


@dataclass(frozen=True)
class BookmarkList:
    """What the side panel lists: the good bookmarks, the entries skipped (one line each) and
    notes for the status bar about files that could not be used at all. `user_editable`: the
    user's own file may be written (it is absent, or was read whole)."""
    items: list[Bookmark]
    skipped: list[str]
    notes: list[str]
    user_editable: bool = True


def read_bookmark_files(shipped: str, user: str | None,
                        set_aside: Callable[[str], str | None] | None = None) -> BookmarkList:
    """The shipped bookmarks, then the user's own file if there is one (its entries carry their
    index in the file). A bad entry is skipped and named; a user's file that is not bookmarks is
    handed to `set_aside` (which renames it and returns the new path, or None); one that cannot
    be opened (permissions) is left where it is, and not written over."""
    items, skipped, notes = [], [], []
    editable = True
    try:
        found, problems = load_bookmarks(shipped)
        items += found
        skipped += problems
    except BadBookmarkFile as exc:
        notes.append(f"Bookmarks unavailable: {exc}")
    if user and os.path.lexists(user):
        try:
            found, problems = _load(user)
            items += [dataclasses.replace(b, user=i) for i, b in found]
            skipped += problems
        except UnreadableBookmarkFile as exc:
            editable = False
            notes.append(f"Your bookmarks were not loaded: {exc}; the file is left where it is "
                         "(bookmarks cannot be added until it can be read)")
        except BadBookmarkFile as exc:
            moved = set_aside(user) if set_aside is not None else None
            where = f"; set aside as {os.path.basename(moved)}" if moved else ""
            editable = moved is not None
            notes.append(f"Your bookmarks were not loaded: {exc}{where}")
    if skipped:
        notes.append("; ".join(skipped))
    return BookmarkList(items, skipped, notes, editable)


class UserBookmarks:
    """The user's own bookmark file, edited in place: add, rename and remove an entry, every other
    entry kept as written (the skipped ones too, and any other key of the file). Each change is
    read, made and written (atomically, services.files.write_text) under a lock on the file, so
    two windows or processes editing it at once both keep their changes; a failed write leaves
    the file as it was and raises OSError. Rename and remove take the Bookmark a window listed:
    when another window changed the file since, the entry is found again by what it holds."""

    def __init__(self, path: str):
        self.path = path

    def _read(self) -> dict:
        if not os.path.exists(self.path):
            return {"about": "Your own Mandelbrot bookmarks (the app's Bookmarks panel edits this "
                             "file): center = [re, im], width, iterations (null = automatic), "
                             "formula (absent: mandelbrot).",
                    "bookmarks": []}
        name = os.path.basename(self.path)
        if os.path.getsize(self.path) > MAX_BOOKMARKS_BYTES:
            raise BadBookmarkFile(f"{name} is larger than {MAX_BOOKMARKS_BYTES // 2 ** 20} MiB")
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh, parse_float=Decimal, parse_int=Decimal)
        except (ValueError, RecursionError) as exc:   # it changed since the window read it
            raise BadBookmarkFile(f"{name} is not valid JSON ({first_words(exc)})") from None
        if not isinstance(data, dict) or not isinstance(data.get("bookmarks"), list):
            raise BadBookmarkFile(f"{name} holds no list under \"bookmarks\"")
        return data

    def _write(self, data: dict) -> None:
        from services.files import write_text
        write_text(self.path, to_json(data) + "\n")

    def add(self, name: str, center_re, center_im, width, iterations: int | None,
            note: str = "", formula: str = MANDELBROT) -> int:
        """Append a bookmark (checked as any entry is); its index in the file. The formula is
        written only where it is not the Mandelbrot set's (entries without one read as it)."""
        name = (name or "").strip()
        entry = {"name": name, "center": [Decimal(str(center_re)), Decimal(str(center_im))],
                 "width": Decimal(str(width)), "iterations": iterations}
        if note:
            entry["note"] = note
        if formula != MANDELBROT:
            entry["formula"] = formula
        bookmark_from_entry(entry)      # ValueError in plain words when it is not one
        return self.insert(None, entry)

    def insert(self, index: int | None, entry: dict) -> int:
        """Put `entry` (as the file held it: remove's undo) at `index` (None or past the end:
        last); its index in the file."""
        with file_lock(self.path):
            data = self._read()
            entries = data["bookmarks"]
            at = len(entries) if index is None else max(0, min(int(index), len(entries)))
            entries.insert(at, entry)
            self._write(data)
        return at

    def rename(self, which: Bookmark | int, name: str) -> int:
        """Rename the bookmark (or the entry at an index); its index in the file now."""
        name = (name or "").strip()
        if not name:
            raise ValueError("a bookmark needs a name")
        with file_lock(self.path):
            data = self._read()
            index = self._find(data, which)
            data["bookmarks"][index]["name"] = name
            self._write(data)
        return index

    def remove(self, which: Bookmark | int) -> tuple[int, dict]:
        """Remove the bookmark (or the entry at an index); (its index, the entry as the file held
        it), for an undo through insert()."""
        with file_lock(self.path):
            data = self._read()
            index = self._find(data, which)
            entry = data["bookmarks"].pop(index)
            self._write(data)
        return index, entry

    def _find(self, data: dict, which: Bookmark | int) -> int:
        """The index of the entry `which` names: an index as it is; a Bookmark at its own index
        when the entry there is still it, else the one entry elsewhere that is (the nearest if
        several are the same)."""
        entries = data["bookmarks"]
        here = os.path.basename(self.path)
        if not isinstance(which, Bookmark):
            if not 0 <= which < len(entries) or not isinstance(entries[which], dict):
                raise ValueError(f"{here} changed since it was read; nothing was changed")
            return which
        same = [i for i, e in enumerate(entries) if _holds(e, which)]
        if not same:
            raise ValueError(f"{which.name!r} is no longer in {here} (it changed since this "
                             "window read it); nothing was changed")
        return min(same, key=lambda i: abs(i - (which.user or 0)))


def _holds(entry, b: Bookmark) -> bool:
    """True when a file's entry is the bookmark `b` (its name and place; the index aside)."""
    try:
        e = bookmark_from_entry(entry)
    except (ValueError, ArithmeticError):
        return False
    return (e.name, e.center_re, e.center_im, e.width, e.iterations, e.formula) == \
        (b.name, b.center_re, b.center_im, b.width, b.iterations, b.formula)


def first_words(exc: BaseException, limit: int = 80) -> str:
    """An exception's message cut to `limit` characters (json's can quote the whole line)."""
    text = str(exc) or type(exc).__name__
    return text if len(text) <= limit else text[:limit - 1] + "…"


def to_json(v, depth: int = 0) -> str:
    """JSON text of what json.load(parse_float=Decimal) gave, Decimals written with every digit:
    the file's keys one per line, its list of bookmarks one bookmark per line."""
    def key(k):
        return json.dumps(str(k), ensure_ascii=False)
    if isinstance(v, dict):
        if depth == 0:
            return "{\n" + ",\n".join(f"  {key(k)}: {to_json(x, 1)}" for k, x in v.items()) + "\n}"
        return "{" + ", ".join(f"{key(k)}: {to_json(x, depth + 1)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        if depth == 1:
            return "[\n" + ",\n".join("    " + to_json(x, 2) for x in v) + "\n  ]"
        return "[" + ", ".join(to_json(x, depth + 1) for x in v) + "]"
    if isinstance(v, Decimal):
        return str(v) if v.is_finite() else json.dumps(float(v))
    return json.dumps(v, ensure_ascii=False)
