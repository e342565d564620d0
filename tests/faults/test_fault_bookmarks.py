"""Faults of the user's bookmark file (explorer/models/bookmarks.py, issue 35): a second window
acting on the same file, two processes adding at once, a file that became deeply nested JSON."""
import json
import subprocess
import sys
import textwrap

import pytest
from PyQt6.QtCore import Qt
from faultkit import ROOT, child_env

from explorer.models.bookmarks import BOOKMARKS_PATH, UserBookmarks, read_bookmark_files
from explorer.views.mandelbrot_bookmarks import BookmarkBox


def saved_names(path):
    return [e["name"] for e in json.loads(path.read_text())["bookmarks"]]


@pytest.fixture
def two_windows(qtbot, tmp_path):
    """Two bookmark boxes (as two windows show them) over one user file holding alpha, beta and
    gamma, both filled before either acts."""
    path = tmp_path / "bookmarks.json"
    store = UserBookmarks(str(path))
    for name in ("alpha", "beta", "gamma"):
        store.add(name, "-0.75", "0.1", "0.01", None)
    boxes = []
    for _ in range(2):
        box = BookmarkBox(lambda: read_bookmark_files(BOOKMARKS_PATH, str(path)), lambda: str(path))
        qtbot.addWidget(box)
        boxes.append(box)
    return path, boxes


def own(box, name):
    """The Bookmark listed under `name` in `box` (as that window read the file)."""
    return next(b for b in (box.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(box.list.count()))
                if b is not None and b.user is not None and b.name == name)


def test_a_remove_after_another_window_removed_acts_on_the_named_bookmark(two_windows):
    path, (a, b) = two_windows
    stale_beta = own(a, "beta")             # a read the file while alpha was still first
    assert b.remove(own(b, "alpha"))
    assert a.remove(stale_beta)
    assert saved_names(path) == ["gamma"]


def test_a_rename_after_another_window_removed_renames_the_named_bookmark(two_windows):
    path, (a, b) = two_windows
    stale_beta = own(a, "beta")
    assert b.remove(own(b, "alpha"))
    assert a.rename(stale_beta, "beta, renamed")
    assert saved_names(path) == ["beta, renamed", "gamma"]


def test_a_bookmark_another_window_removed_is_said_gone_and_nothing_changes(qtbot, two_windows):
    path, (a, b) = two_windows
    stale_beta = own(a, "beta")
    assert b.remove(own(b, "beta"))
    before = path.read_bytes()
    with qtbot.waitSignal(a.message) as said:
        assert not a.remove(stale_beta)
    assert "'beta' is no longer in" in said.args[0]
    assert path.read_bytes() == before
    assert "beta" not in [a.list.item(i).text() for i in range(a.list.count())]   # caught up


_ADDER = """
import sys
from explorer.models.bookmarks import UserBookmarks
store = UserBookmarks(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()                     # both start adding together
for i in range(40):
    store.add(f"{sys.argv[2]} {i}", "-0.75", "0.1", "0.01", None)
"""


def test_two_processes_adding_at_once_keep_every_bookmark(tmp_path):
    path = tmp_path / "bookmarks.json"
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_ADDER), str(path), who],
                              cwd=ROOT, env=child_env(), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for who in ("one", "two")]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    names = saved_names(path)
    assert sorted(names) == sorted(f"{w} {i}" for w in ("one", "two") for i in range(40))


@pytest.mark.parametrize("act", ["add", "rename", "remove"])
def test_a_file_that_became_deeply_nested_is_refused_in_words(qtbot, tmp_path, act):
    path = tmp_path / "bookmarks.json"
    UserBookmarks(str(path)).add("mine", "-0.75", "0.1", "0.01", None)
    box = BookmarkBox(lambda: read_bookmark_files(BOOKMARKS_PATH, str(path)), lambda: str(path))
    qtbot.addWidget(box)
    mine = own(box, "mine")
    nested = '{"bookmarks": ' + "[" * 200_000 + "]" * 200_000 + "}"
    path.write_text(nested)                  # another program wrote it after the window read it
    with qtbot.waitSignal(box.message) as said:
        if act == "add":
            assert not box.add("x", "-0.75", "0.1", "0.01", None)
        elif act == "rename":
            assert not box.rename(mine, "y")
        else:
            assert not box.remove(mine)
    assert "not valid JSON" in said.args[0]
    assert path.read_text() == nested
