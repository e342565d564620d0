"""Bookmarks (issue 24): the shipped ones show what their names promise, names wrap, tooltips wrap
long centres, the user's own are added, renamed and removed in the window (kept in bookmarks.json,
written atomically), the highlight goes when the view moves off, and entries with absurd numbers or
an unreadable file never stop the window from opening."""
import json
import os
import time
from decimal import Decimal, localcontext

import pytest
from PyQt6.QtCore import Qt

from explorer.models.bookmarks import (BOOKMARKS_PATH, UserBookmarks, load_bookmarks,
                                       read_bookmark_files)
from explorer.views import mandelbrot_controls
from explorer.views.mandelbrot_bookmarks import bookmark_tooltip
from kernels.mandelbrot.requests.request import auto_iterations

from explorer.views.mandelbrot import MandelbrotView


def make_view(qtbot, scheduler, backend, size=(160, 120)):
    v = MandelbrotView(scheduler, backend)
    qtbot.addWidget(v)
    v.controls.set_iterations(40)
    v.progressive = False
    v.resize(*size)
    v.show()
    qtbot.waitExposed(v)
    return v


@pytest.fixture
def user_file(monkeypatch, tmp_path):
    path = tmp_path / "cfg" / "bookmarks.json"
    monkeypatch.setattr(mandelbrot_controls, "user_bookmarks_path", lambda: str(path))
    return path


def names(view):
    items = view.controls.bookmarks
    return [items.item(i).text() for i in range(items.count())]


# ---- the shipped bookmarks -----------------------------------------------------------------------
def test_every_shipped_bookmark_has_at_least_the_automatic_iterations():
    found, problems = load_bookmarks(BOOKMARKS_PATH)
    assert found and not problems
    for b in found:
        # None: the automatic policy itself, which is the Mandelbrot set's depth rule
        if b.iterations is not None and b.formula == "mandelbrot":
            assert b.iterations >= auto_iterations(b.width), b.name


def test_the_deep_burning_ship_bookmarks_are_the_places_tested_against_mpfr():
    """The ship's deep bookmarks are locations.SHIP_447 and SHIP_662 digit for digit, at the
    widths and iterations tests/kernels/test_deep_ship*.py check against MPFR brute force."""
    from kernels.mandelbrot.benches import locations as loc
    ships = {b.name: b for b in load_bookmarks(BOOKMARKS_PATH)[0] if b.formula == "burning-ship"}
    assert len(ships) == 4
    deep = [b for b in ships.values() if b.width < Decimal("1e-50")]
    want = {(loc.SHIP_447.center_re, loc.SHIP_447.center_im, Decimal("1e-100"), 6000),
            (loc.SHIP_662.center_re, loc.SHIP_662.center_im, Decimal("1e-301"), 20000)}
    assert {(str(b.center_re), str(b.center_im), b.width, b.iterations) for b in deep} == want


def test_the_period_424_minibrots_centre_is_inside_at_its_iterations():
    """The nucleus's reference orbit (gmpy2, no kernels) stays bounded for the bookmark's whole
    iteration count, while a point just off the minibrot escapes within it: the frame holds the
    minibrot and the filaments around it, not one colour."""
    from kernels.mandelbrot.reference.reference import ReferenceOrbit
    from kernels.mandelbrot.requests.request import DeepFrameRequest
    b = next(b for b in load_bookmarks(BOOKMARKS_PATH)[0] if "period-424" in b.name)
    n = b.iterations or auto_iterations(b.width)
    req = DeepFrameRequest(str(b.center_re), str(b.center_im), str(b.width), (16, 9), n)
    centre = ReferenceOrbit(str(b.center_re), str(b.center_im), req.precision + 64).extend(n)
    assert not centre.escaped and centre.length == n + 1
    assert n >= 60_000          # measured: below that the minibrot is a featureless blob
    with localcontext() as ctx:
        ctx.prec = 1000
        edge = b.center_re + b.width / 2      # the frame's right edge, on the centre's row
    off = ReferenceOrbit(str(edge), str(b.center_im), req.precision + 64).extend(n)
    assert off.escaped


# ---- names and tooltips --------------------------------------------------------------------------
def test_long_names_wrap_and_long_centres_wrap_in_the_tooltip(qtbot, scheduler, cpu_backend,
                                                               user_file):
    v = make_view(qtbot, scheduler, cpu_backend)
    v.controls.show()
    assert v.controls.bookmarks.wordWrap()
    assert v.controls.bookmarks.textElideMode() == Qt.TextElideMode.ElideNone
    deep = next(b for b in load_bookmarks(BOOKMARKS_PATH)[0] if "1e-1000" in b.name)
    tip = bookmark_tooltip(deep)
    assert max(len(line) for line in tip.splitlines()) <= 64
    assert "characters in all" in tip and deep.name not in tip
    item = v.controls.bookmarks.item(names(v).index(deep.name))
    assert item.toolTip() == tip


# ---- editing the user's own ------------------------------------------------------------------------
def test_add_rename_remove_round_trip(qtbot, scheduler, cpu_backend, user_file):
    v = make_view(qtbot, scheduler, cpu_backend)
    assert v.go_to("-0.743643887037151", "0.131825904205330", "1e-5", 1234)
    box = v.controls.bookmark_box
    with qtbot.waitSignal(box.message) as said:
        assert v.add_bookmark("My spiral")
    assert "added" in said.args[0]
    saved = json.loads(user_file.read_text())["bookmarks"]
    assert saved == [{"name": "My spiral", "center": [-0.743643887037151, 0.13182590420533],
                      "width": 1e-5, "iterations": 1234}]
    assert names(v)[-1] == "My spiral" and box.selected().user == 0
    assert box.rename_btn.isEnabled() and box.remove_btn.isEnabled()

    v.model.reset()
    assert box.selected() is None                  # moved off: no longer highlighted
    items = v.controls.bookmarks
    items.itemClicked.emit(items.item(names(v).index("My spiral")))
    assert v.model.fixed_iterations == 1234 and v.camera.width == Decimal("1e-5")

    item = items.item(names(v).index("My spiral"))
    items.setCurrentItem(item)
    assert box.rename(box.selected(), "  Spiral, renamed ")
    assert names(v)[-1] == "Spiral, renamed"
    assert json.loads(user_file.read_text())["bookmarks"][0]["name"] == "Spiral, renamed"
    assert box.remove(box.selected())
    assert "Spiral, renamed" not in names(v)
    assert json.loads(user_file.read_text())["bookmarks"] == []
    assert not [p for p in os.listdir(user_file.parent) if p.endswith(".tmp")]


def test_undo_puts_a_removed_bookmark_back_as_it_was(qtbot, tmp_path):
    """Remove asks nothing; Undo (shown only after a Remove) puts the entry back at its place
    with every digit, and goes again."""
    from explorer.views.mandelbrot_bookmarks import BookmarkBox
    path = tmp_path / "bookmarks.json"
    long_re = "-1." + "1234567890" * 30
    path.write_text('{"bookmarks": [{"name": "a", "center": [0, 0], "width": 1}, '
                    f'{{"name": "b", "center": [{long_re}, 0], "width": 1e-290, "note": "n"}}, '
                    '{"name": "c", "center": [0, 0], "width": 2}]}')
    UserBookmarks(str(path)).rename(0, "a")         # the file as the app writes it
    before = path.read_bytes()
    box = BookmarkBox(lambda: read_bookmark_files(BOOKMARKS_PATH, str(path)), lambda: str(path))
    qtbot.addWidget(box)
    assert box.undo_btn.isHidden() and not box.undo_remove()
    b = next(box.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(box.list.count())
             if box.list.item(i).text() == "b")
    with qtbot.waitSignal(box.message) as said:
        assert box.remove(b)
    assert "Undo" in said.args[0] and not box.undo_btn.isHidden()
    assert [e["name"] for e in json.loads(path.read_text())["bookmarks"]] == ["a", "c"]
    with qtbot.waitSignal(box.message) as said:
        box.undo_btn.click()
    assert "'b' put back" in said.args[0] and box.undo_btn.isHidden()
    assert path.read_bytes() == before
    assert box.selected().name == "b" and box.selected().user == 1


def test_shipped_bookmarks_cannot_be_renamed_or_removed(qtbot, scheduler, cpu_backend, user_file):
    v = make_view(qtbot, scheduler, cpu_backend)
    items = v.controls.bookmarks
    items.setCurrentItem(items.item(0))
    box = v.controls.bookmark_box
    assert box.selected().user is None
    assert not box.rename_btn.isEnabled() and not box.remove_btn.isEnabled()


def test_editing_keeps_the_users_skipped_entries_and_digits(tmp_path):
    path = tmp_path / "b.json"
    long_re = "-1." + "1234567890" * 30
    path.write_text('{"mine": 1, "bookmarks": [{"name": "broken", "center": [0, 0]}, '
                    f'{{"name": "long", "center": [{long_re}, 0], "width": 1e-290}}]}}')
    store = UserBookmarks(str(path))
    store.rename(1, "long, renamed")
    store.add("new", "0.25", "0", "0.5", None)
    text = path.read_text()
    assert long_re in text and '"broken"' in text and '"mine": 1' in text
    found = read_bookmark_files(BOOKMARKS_PATH, str(path))
    mine = [b for b in found.items if b.user is not None]
    assert [(b.name, b.user) for b in mine] == [("long, renamed", 1), ("new", 2)]
    assert str(mine[0].center_re) == long_re and len(found.skipped) == 1


def test_a_failed_write_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "b.json"
    UserBookmarks(str(path)).add("one", 0, 0, 1, None)
    before = path.read_bytes()
    import services.files as files

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(files, "write_text", full)
    with pytest.raises(OSError):
        UserBookmarks(str(path)).add("two", 0, 0, 1, None)
    assert path.read_bytes() == before


# ---- entries and files that must not stop the start ----------------------------------------------
@pytest.mark.parametrize("entry, words", [
    ('{"name":"far","center":[1e1000000,0],"width":1}', "too far out"),
    ('{"name":"far im","center":[0,-1e1000000],"width":1}', "too far out"),
    ('{"name":"wide","center":[0,0],"width":1e1000000}', "too large"),
    ('{"name":"shallow","center":[0,0],"width":1e-1000000}', "deepest"),
    ('{"name":"iters","center":[0,0],"width":1,"iterations":1e999999999}', "10,000,000"),
    ('{"name":"iters2","center":[0,0],"width":1,"iterations":1e1000000}', "10,000,000"),
])
def test_absurd_numbers_skip_the_entry_at_once(tmp_path, entry, words):
    path = tmp_path / "b.json"
    path.write_text('{"bookmarks":[%s, {"name":"ok","center":[0,0],"width":1}]}' % entry)
    t = time.perf_counter()
    found, problems = load_bookmarks(str(path))
    assert time.perf_counter() - t < 1.0
    assert [b.name for b in found] == ["ok"]
    assert len(problems) == 1 and words in problems[0] and "skipped" in problems[0]


def test_an_unreadable_user_file_is_left_where_it_is(qtbot, scheduler, cpu_backend, user_file,
                                                     monkeypatch):
    """Mode 000 (simulated: the tests may run as root, who reads anything): the file stays, is
    not written over, and the note says so."""
    import builtins
    from explorer.models import bookmarks
    user_file.parent.mkdir()
    user_file.write_text('{"bookmarks": []}')

    def no_access(path, *a, **k):
        if os.fspath(path) == str(user_file):
            raise PermissionError(13, "Permission denied")
        return builtins.open(path, *a, **k)
    monkeypatch.setattr(bookmarks, "open", no_access, raising=False)
    found = read_bookmark_files(BOOKMARKS_PATH, str(user_file), lambda p: "moved")
    assert not found.user_editable and found.items
    assert "left where it is" in found.notes[0] and "Permission denied" in found.notes[0]
    v = make_view(qtbot, scheduler, cpu_backend)
    assert any("left where it is" in n for n in v.load_notes)
    assert not v.controls.bookmark_box.add_btn.isEnabled()
    assert not v.add_bookmark("x")
    assert os.listdir(user_file.parent) == ["bookmarks.json"]
    assert user_file.read_text() == '{"bookmarks": []}'
