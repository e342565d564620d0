"""The Bookmarks box of the Mandelbrot side panel: the shipped places, then the user's own, names
wrapped to the panel's width, a tooltip with the note and the centre wrapped to lines, and Add,
Rename and Remove for the user's own bookmarks (explorer.models.bookmarks.UserBookmarks writes
them, atomically, to the user's bookmarks.json), and Undo for the last Remove. Shipped bookmarks
cannot be renamed or removed.
"""
from __future__ import annotations

import textwrap
from typing import Callable

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (QGroupBox, QHBoxLayout, QInputDialog, QLineEdit, QListView,
                             QListWidget, QListWidgetItem, QPushButton, QVBoxLayout)

from kernels.mandelbrot.requests.formulas import EQUATIONS, LABELS, MANDELBROT

from ..models.bookmarks import Bookmark, BookmarkList, UserBookmarks
from ..models.location import width_text

TIP_COLUMNS = 64          # characters per tooltip line: a long centre is cut into such lines
TIP_CENTRE_LINES = 6      # at most this many lines of each coordinate; then how many digits in all


def wrapped_number(text: str, columns: int = TIP_COLUMNS, lines: int = TIP_CENTRE_LINES) -> str:
    """A number of any length as lines of `columns` characters (a tooltip never runs off the
    screen); past `lines` lines the rest is summed up as a count of digits."""
    parts = [text[i:i + columns] for i in range(0, len(text), columns)] or [""]
    if len(parts) > lines:
        parts = parts[:lines] + [f"… ({len(text):,} characters in all)"]
    return "\n".join(parts)


def bookmark_tooltip(b: Bookmark) -> str:
    """The note wrapped to lines, then the centre (wrapped) and the width and iterations."""
    lines = textwrap.wrap(b.note, TIP_COLUMNS) if b.note else []
    iters = "automatic" if b.iterations is None else f"{b.iterations:,}"
    lines += ["centre (re):", wrapped_number(str(b.center_re)), "centre (im):",
              wrapped_number(str(b.center_im)),
              f"width {width_text(b.width)}; iterations {iters}"]
    if b.formula != MANDELBROT:
        lines.append(f"formula: {LABELS[b.formula]} ({EQUATIONS[b.formula]})")
    if b.user is not None:
        lines.append("Your own bookmark: Rename or Remove below")
    return "\n".join(lines)


class BookmarkBox(QGroupBox):
    """chosen(Bookmark) when one is clicked or activated; message(str) for the status bar.
    `read()` gives the bookmarks to list and `user_path()` where the user's own are kept (both
    asked at each refill, so tests can point them elsewhere)."""

    chosen = pyqtSignal(object)
    message = pyqtSignal(str)
    add_requested = pyqtSignal()        # the view answers with add(name, place)

    def __init__(self, read: Callable[[], BookmarkList], user_path: Callable[[], str], parent=None):
        super().__init__("Bookmarks", parent)
        self._read, self._user_path = read, user_path
        self.user_editable = True
        self.load_notes: list[str] = []
        lay = QVBoxLayout(self)
        self.list = QListWidget()
        self.list.setToolTip("Famous places and your own: click (or Enter) to fly there")
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # long names wrap onto a second line instead of being cut
        self.list.setWordWrap(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setUniformItemSizes(False)
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        self.list.currentItemChanged.connect(lambda *_: self._update_buttons())
        lay.addWidget(self.list)
        row = QHBoxLayout()
        self.add_btn = QPushButton("Add…")
        self.add_btn.setToolTip("Keep the current place as a bookmark of your own")
        self.rename_btn = QPushButton("Rename…")
        self.rename_btn.setToolTip("Rename the selected bookmark (your own ones only)")
        self.remove_btn = QPushButton("Remove")
        self.remove_btn.setToolTip("Remove the selected bookmark (your own ones only; Undo puts "
                                   "it back)")
        # Remove asks nothing: the last removed bookmark can be put back, as it was, until the
        # next Remove (a question before every remove is one more click for the common case)
        self.undo_btn = QPushButton("Undo")
        self.undo_btn.setVisible(False)
        self._removed: tuple[int, dict, str] | None = None    # (index, entry, name) for Undo
        for b in (self.add_btn, self.rename_btn, self.remove_btn, self.undo_btn):
            row.addWidget(b)
        lay.addLayout(row)
        self.add_btn.clicked.connect(self.add_requested)
        self.rename_btn.clicked.connect(self._ask_rename)
        self.remove_btn.clicked.connect(self._ask_remove)
        self.undo_btn.clicked.connect(self.undo_remove)
        self.fill()

    # ---- the list ---------------------------------------------------------------------------
    def fill(self, select_user: int | None = None):
        """(Re)read the bookmark files and list them; `select_user`: select that user entry."""
        self.list.clear()
        found = self._read()
        self.user_editable = found.user_editable
        for b in found.items:
            shown = b.name if b.formula == MANDELBROT else f"{b.name} ({LABELS[b.formula]})"
            item = QListWidgetItem(shown)
            item.setData(Qt.ItemDataRole.UserRole, b)
            item.setToolTip(bookmark_tooltip(b))
            self.list.addItem(item)
            if select_user is not None and b.user == select_user:
                self.list.setCurrentItem(item)
        skipped = found.skipped
        if skipped:
            item = QListWidgetItem(f"({len(skipped)} bookmark{'s' if len(skipped) > 1 else ''} "
                                   "skipped: hover for why)")
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            item.setToolTip("\n".join(textwrap.fill(s, TIP_COLUMNS) for s in skipped))
            self.list.addItem(item)
        self.load_notes = list(found.notes)
        if not found.items:
            self.list.addItem("(no bookmarks)")
        self._update_buttons()
        return found

    def selected(self) -> Bookmark | None:
        item = self.list.currentItem()
        b = item.data(Qt.ItemDataRole.UserRole) if item is not None and item.isSelected() else None
        return b if isinstance(b, Bookmark) else None

    def clear_selection(self):
        """The view moved off the bookmark: it is no longer highlighted."""
        self.list.clearSelection()
        self.list.setCurrentItem(None)

    def _update_buttons(self):
        b = self.selected()
        own = b is not None and b.user is not None and self.user_editable
        self.rename_btn.setEnabled(own)
        self.remove_btn.setEnabled(own)
        self.add_btn.setEnabled(self.user_editable)
        if not self.user_editable:
            self.add_btn.setToolTip("Your bookmarks.json could not be read: fix it (or move it "
                                    "away) to add bookmarks")

    def _activated(self, item: QListWidgetItem):
        b = item.data(Qt.ItemDataRole.UserRole)
        self._update_buttons()
        if isinstance(b, Bookmark):
            self.chosen.emit(b)

    # ---- editing ----------------------------------------------------------------------------
    def add(self, name: str, center_re, center_im, width, iterations,
            formula: str = MANDELBROT) -> bool:
        """Keep a place (of `formula`) as the user's bookmark `name`; False (and why, in
        message) when not."""
        store = UserBookmarks(self._user_path())
        try:
            if not self.user_editable:
                raise ValueError("your bookmarks.json could not be read, so it is not written "
                                 "over; fix it first")
            if not (name or "").strip():
                raise ValueError("a bookmark needs a name")
            index = store.add(name, center_re, center_im, width, iterations, formula=formula)
        except (ValueError, OSError) as exc:
            self.message.emit(f"Bookmark not added: {getattr(exc, 'strerror', None) or exc}")
            return False
        self.fill(select_user=index)
        self.message.emit(f"Bookmark {name.strip()!r} added to {store.path}")
        return True

    def rename(self, b: Bookmark, name: str) -> bool:
        try:
            index = UserBookmarks(self._user_path()).rename(b, name)
        except (ValueError, OSError, TypeError) as exc:
            self._refused("renamed", exc)
            return False
        self.fill(select_user=index)
        self.message.emit(f"Bookmark renamed to {name.strip()!r}")
        return True

    def remove(self, b: Bookmark) -> bool:
        try:
            index, entry = UserBookmarks(self._user_path()).remove(b)
        except (ValueError, OSError, TypeError) as exc:
            self._refused("removed", exc)
            return False
        self._removed = (index, entry, b.name)
        self.undo_btn.setToolTip(f"Put back the bookmark {b.name!r}, as it was")
        self.undo_btn.setVisible(True)
        self.fill()
        self.message.emit(f"Bookmark {b.name!r} removed (Undo puts it back)")
        return True

    def undo_remove(self) -> bool:
        """Put the last removed bookmark back where it was (as the file held it, every digit)."""
        if self._removed is None:
            return False
        index, entry, name = self._removed
        try:
            if not self.user_editable:
                raise ValueError("your bookmarks.json could not be read, so it is not written "
                                 "over; fix it first")
            at = UserBookmarks(self._user_path()).insert(index, entry)
        except (ValueError, OSError) as exc:
            self._refused("put back", exc)
            return False
        self._removed = None
        self.undo_btn.setVisible(False)
        self.fill(select_user=at)
        self.message.emit(f"Bookmark {name!r} put back")
        return True

    def _refused(self, what: str, exc: BaseException):
        """Say why an edit was refused, and list the file as it is now (another window may
        have changed it: that is often why)."""
        found = self.fill()
        notes = "".join(f"; {n}" for n in found.notes if n.startswith("Your bookmarks"))
        self.message.emit(f"Bookmark not {what}: {getattr(exc, 'strerror', None) or exc}{notes}")

    def ask_name(self, title: str, default: str) -> str | None:
        name, ok = QInputDialog.getText(self, title, "Name:", QLineEdit.EchoMode.Normal, default)
        return name if ok and name.strip() else None

    def _ask_rename(self):
        b = self.selected()
        if b is None or b.user is None:
            return
        name = self.ask_name("Rename bookmark", b.name)
        if name is not None:
            self.rename(b, name)

    def _ask_remove(self):
        b = self.selected()
        if b is not None and b.user is not None:
            self.remove(b)
