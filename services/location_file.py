"""Location files: a Kalles Fraktaler .kfr file or our own location text (`center=… width=…
iters=…`) read from disk, for the window's Open .kfr and the command line's --location FILE.

A file is checked before it is parsed, the same way wherever it is opened: it must exist, be a
file, be small (a location with 10,000-digit coordinates is a few tens of kilobytes), and be text
(UTF-8, no NUL or other control bytes). Then services.location_text reads it (one parser for
pasted text, bookmarks and files); a KF Zoom becomes a width through the picture's aspect.
Every problem is a ValueError with one plain line that names the file.
"""
from __future__ import annotations

import os
import select
import stat
import time
from dataclasses import dataclass
from fractions import Fraction

from .kfr import MAX_KFR_BYTES, looks_like_kfr, parse_kfr
from .location_text import Location, parse_location

MAX_LOCATION_FILE_BYTES = MAX_KFR_BYTES
# control characters a text file may hold (tab, line feed, carriage return, form feed)
_TEXT_CONTROLS = {9, 10, 12, 13}
# a pipe (a shell's <(…)) whose writer sends nothing for this long is given up on
PIPE_WAIT_S = 10.0


def read_location_text(path) -> str:
    """The text of the location file at `path` (~ expanded); ValueError in one line when it is
    missing, a folder, too large, or not text."""
    path = os.path.expanduser(os.fspath(path))
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{path} is a folder, not a location file")
    if stat.S_ISREG(st.st_mode) and st.st_size > MAX_LOCATION_FILE_BYTES:
        raise ValueError(_too_large(path, st.st_size))
    try:
        data = _read_bounded(path, MAX_LOCATION_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_LOCATION_FILE_BYTES:     # a pipe or a file that grew while read
        raise ValueError(_too_large(path, None))
    if not data and stat.S_ISFIFO(st.st_mode):
        raise ValueError(f"{path} is a named pipe and nothing was writing to it: give a "
                         "location file (or a pipe something writes a location into)")
    bad = next((i for i, b in enumerate(data) if b < 32 and b not in _TEXT_CONTROLS), None)
    if bad is not None:
        raise ValueError(f"{path} is not a text file (byte {bad:,} is the control code "
                         f"0x{data[bad]:02x}): a location file holds lines such as "
                         "'Re: …', 'Im: …', 'Zoom: …' or 'center=… width=…'")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not a text file (byte {exc.start:,} is not UTF-8): a location "
                         "file holds lines such as 'Re: …', 'Im: …', 'Zoom: …'") from None


def _read_bounded(path: str, limit: int) -> bytes:
    """At most `limit` bytes of the file at `path`. A pipe is opened without waiting for a
    writer (a named pipe nothing writes to reads as empty at once, instead of waiting for good)
    and read while its writer sends something at least every PIPE_WAIT_S seconds."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode) or not hasattr(select, "poll"):
            if hasattr(os, "set_blocking"):    # (Windows has neither O_NONBLOCK nor this)
                os.set_blocking(fd, True)
            with os.fdopen(os.dup(fd), "rb") as fh:
                return fh.read(limit)
        chunks, got, poll = [], 0, select.poll()
        poll.register(fd, select.POLLIN)
        deadline = time.monotonic() + PIPE_WAIT_S
        while got < limit:
            try:
                chunk = os.read(fd, min(1 << 16, limit - got))
            except BlockingIOError:      # the writer is there but sent nothing yet
                left = deadline - time.monotonic()
                if left <= 0 or not poll.poll(left * 1000):
                    raise ValueError(f"nothing came from {path} for {PIPE_WAIT_S:.0f} s: give "
                                     "a location file") from None
                continue
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            deadline = time.monotonic() + PIPE_WAIT_S
        return b"".join(chunks)
    finally:
        os.close(fd)


def _too_large(path: str, size: int | None) -> str:
    has = f"has {size:,} bytes" if size is not None else "is larger than that"
    return (f"{path} {has}: a location file is far smaller (at most "
            f"{MAX_LOCATION_FILE_BYTES:,} bytes)")


@dataclass(frozen=True)
class LocationFile:
    """A checked location file: its text and kind ("kfr": KF's keys or a .kfr name; "text"). `place(size)` is the
    location for a picture of size = (w, h) pixels (a KF Zoom fixes the height, so the width
    depends on the aspect)."""
    path: str
    text: str
    kind: str

    def place(self, size) -> Location:
        w, h = (max(1, int(v)) for v in size)
        try:
            if self.kind == "kfr":      # KF's own words for a .kfr that lacks a Zoom line
                parse_kfr(self.text)
            return parse_location(self.text, aspect=Fraction(w, h))
        except (ValueError, ArithmeticError) as exc:
            raise ValueError(f"{self.path}: {exc}") from None


def load_location_file(path) -> LocationFile:
    """Read and check the location file at `path`: ValueError in one line naming the file when it
    cannot be read or holds no place (every check runs here, before any work starts)."""
    shown = os.path.expanduser(os.fspath(path))
    text = read_location_text(shown)
    kfr = looks_like_kfr(text) or shown.lower().endswith(".kfr")
    found = LocationFile(shown, text, "kfr" if kfr else "text")
    found.place((1, 1))
    return found


def location_options(path, size, center=None, width=None, iters=None, formula=None) -> dict:
    """The --center/--width/--iters/--formula option strings of the place in the file at `path`
    for a picture of `size`: --iters and --formula, when given, override the file's iteration
    count and formula; --center and --width conflict with the file's (ValueError saying so)."""
    given = [name for name, v in (("--center", center), ("--width", width)) if v is not None]
    if given:
        raise ValueError(f"--location gives the centre and the width itself; leave out "
                         f"{' and '.join(given)} (--iters overrides the file's iteration count)")
    loc = load_location_file(path).place(size)
    if iters is None and loc.iterations is not None:
        iters = str(loc.iterations)
    return {"center": f"{loc.center_re},{loc.center_im}", "width": str(loc.width), "iters": iters,
            "formula": loc.formula if formula is None else formula}
