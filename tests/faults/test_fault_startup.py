"""Faults in what the app reads when it starts: window settings, the coastline, the bookmark
files. None of them may stop the window from opening; a bad value or entry is dropped with a
note, a file that cannot be used at all is set aside, and the good entries stay."""
import json
import os

import pytest
from PyQt6.QtCore import QByteArray, QSettings, Qt

from explorer.app import MainWindow
from explorer.views import VIEW_IDS
from explorer.views import distance_map, mandelbrot_controls
from explorer.views.mandelbrot_controls import BadBookmarkFile, load_bookmarks
from kernels import backend

GOOD = {"name": "Good place", "center": [-0.75, 0.1], "width": 0.5, "iterations": 300}


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No GPU, the shipped files as they are, and no user bookmarks unless a test writes some."""
    st = backend.CudaStatus(False, "no CUDA-capable GPU was found")
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    monkeypatch.setattr(mandelbrot_controls, "user_bookmarks_path", lambda: str(tmp_path / "user-bm.json"))
    distance_map.load_coastline.cache_clear()
    yield
    distance_map.load_coastline.cache_clear()


def ini(tmp_path, text=None, name="settings.ini"):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    return path


def window(qtbot, settings_path, **kw):
    w = MainWindow("cpu", settings=QSettings(str(settings_path), QSettings.Format.IniFormat),
                   synchronous=True, **kw)
    qtbot.addWidget(w)
    w.show()
    return w


def status(w) -> str:
    """The start-up notes the window keeps (its notes label), as one text."""
    assert w.notes_label.isVisibleTo(w) == bool(w.notes())
    return "\n".join(w.notes())


# ---- window settings ----------------------------------------------------------------------------
@pytest.mark.parametrize("key, value, words", [
    ("geometry", 12345, "geometry"),
    ("geometry", [1, 2], "geometry"),
    ("windowState", "hello", "windowState"),
    ("view", ["a", "b"], "view"),
    ("view", "no-such-view", "view"),
])
def test_settings_of_the_wrong_type_are_dropped_with_a_note(qtbot, tmp_path, key, value, words):
    path = ini(tmp_path)
    s = QSettings(str(path), QSettings.Format.IniFormat)
    s.setValue(key, value)
    s.setValue("other", "kept")
    s.sync()
    w = window(qtbot, path)
    assert words in status(w) and "reset" in status(w)
    assert w.tabs.count() == len(VIEW_IDS)
    w.close()
    after = QSettings(str(path), QSettings.Format.IniFormat)
    assert after.value("other") == "kept"
    assert key == "view" or isinstance(after.value(key), QByteArray)   # rewritten on close


def test_garbage_geometry_bytes_are_ignored_quietly(qtbot, tmp_path):
    path = ini(tmp_path)
    s = QSettings(str(path), QSettings.Format.IniFormat)
    s.setValue("geometry", QByteArray(b"\x00\x01not a geometry"))
    s.setValue("windowState", QByteArray(b"\xff" * 40))
    s.sync()
    w = window(qtbot, path)
    assert w.isVisible() and w.width() > 100
    w.close()


def test_an_unreadable_settings_file_is_set_aside(qtbot, tmp_path):
    path = ini(tmp_path, "[General\nview=\"unterminated\n")
    w = window(qtbot, path)
    assert "settings file could not be read" in status(w) and "set aside" in status(w)
    aside = [p for p in os.listdir(tmp_path) if p.startswith("settings.ini.bad-")]
    assert len(aside) == 1 and "unterminated" in (tmp_path / aside[0]).read_text()
    w.close()
    assert "geometry" in path.read_text()        # a fresh file took its place


def test_a_settings_file_that_cannot_be_written_is_said_at_start(qtbot, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    w = window(qtbot, tmp_path / "a-file" / "settings.ini")
    assert "Settings will not be saved" in status(w)
    w.close()                                     # and closing still works


def test_notes_given_by_the_caller_reach_the_status_bar(qtbot, tmp_path):
    w = window(qtbot, ini(tmp_path), notes=["numba's cache is in /tmp/x for this run only"])
    assert "for this run only" in status(w)
    w.close()


def test_a_window_that_cannot_be_built_gives_one_line_not_an_abort(tmp_path):
    """The scheduler's thread starts while the window is built: a failure after that point must
    end in a message and an exit status, with the thread stopped or abandoned, never in an abort.
    A process of its own: the app may end it at once when a compile is still in flight."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = f"""
import sys
from PyQt6.QtCore import QSettings
from explorer import app as explorer_app
def broken(self):
    raise RuntimeError("the status bar is on fire")
explorer_app.MainWindow._build_status_bar = broken
sys.exit(explorer_app.run("cpu", settings=QSettings({str(tmp_path / 's.ini')!r}, QSettings.Format.IniFormat)))
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
               QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, r.stderr
    assert "GPU Explorer cannot start: RuntimeError: the status bar is on fire" in r.stderr
    assert "Traceback" not in r.stderr.split("GPU Explorer cannot start")[1]   # one line, not a dump
    assert "QThread: Destroyed" not in r.stderr and "Aborted" not in r.stderr


# ---- the coastline -----------------------------------------------------------------------------
LINE = {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[0, 0], [10, 5], [20, 0]]}}


@pytest.mark.parametrize("content, words", [
    ("[1, 2, 3]", "no list of features"),
    ('{"features": null}', "no list of features"),
    ("{not json", "not valid JSON"),
    ('{"features": [{"geometry": {"type": "LineString", "coordinates": [[0, 0], [1, "x"]]}}]}',
     "no usable lines"),
    ('{"features": [{"geometry": {"type": "LineString", "coordinates": [[0, 0], [1]]}}]}',
     "no usable lines"),
    ('{"features": [{"geometry": {"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]], 7]}}]}',
     "no usable lines"),
    ('{"features": [{"geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 95]]}}]}',
     "no usable lines"),
    ('{"features": [{"geometry": null}, "text", 3]}', "no usable lines"),
    (None, "cannot be read"),
])
def test_a_bad_coastline_leaves_the_map_without_it_and_says_so(qtbot, tmp_path, monkeypatch, content, words):
    path = tmp_path / "coast.geojson"
    if content is not None:
        path.write_text(content)
    monkeypatch.setattr(distance_map, "COASTLINE_PATH", path)
    w = window(qtbot, ini(tmp_path), view="distance")
    assert words in status(w)
    assert len(w.views["distance"].canvas.coast.xData or []) == 0
    w.close()


def test_bad_coastline_features_are_left_out_and_the_good_ones_drawn(tmp_path):
    bad = {"geometry": {"type": "LineString", "coordinates": [[0, 0], ["a", 1]]}}
    ragged = {"geometry": {"type": "LineString", "coordinates": [[0, 0, 5], [1, 1]]}}   # 3-d point: fine
    path = tmp_path / "coast.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": [LINE, bad, ragged, None]}))
    xs, ys, problems = distance_map.load_coastline(str(path))
    assert len(xs) == 3 * (3 + 1 + 2 + 1)           # two good lines (+ NaN each) at three wraps
    assert problems == ("2 of 4 coastline features in coast.geojson were not lines of [lon, lat] "
                        "points and were left out",)


# ---- bookmarks ---------------------------------------------------------------------------------
def bookmark_file(path, entries):
    path.write_text(json.dumps({"bookmarks": entries}, allow_nan=True))
    return str(path)


def test_one_bad_bookmark_hides_no_other(tmp_path):
    entries = [GOOD,
               {"name": "No width", "center": [0, 0]},
               {"name": "NaN centre", "center": [float("nan"), 0], "width": 1},
               {"name": "Too many", "center": [0, 0], "width": 1, "iterations": 1e12},
               {"name": "Text", "center": ["-0.5", 0], "width": 1},
               {"name": "Far", "center": [1e9, 0], "width": 1},
               {"name": "Huge", "center": [0, 0], "width": 1e6},
               {"name": "Bool", "center": [True, 0], "width": 1},
               "just text",
               dict(GOOD, name="Also good", iterations=None)]
    found, problems = load_bookmarks(bookmark_file(tmp_path / "b.json", entries))
    assert [b.name for b in found] == ["Good place", "Also good"]
    assert len(problems) == 8
    text = "\n".join(problems)
    for words in ("'No width' skipped: it has no width", "'NaN centre' skipped", "finite",
                  "'Too many' skipped: the iteration count", "'Far' skipped", "too far out",
                  "'Huge' skipped: the width", "entry 9 skipped"):
        assert words in text
    assert "KeyError" not in text and "Traceback" not in text


@pytest.mark.parametrize("content, words", [
    ("{not json", "not valid JSON"), ("[]", "no list"), ('{"bookmarks": {"a": 1}}', "no list"),
    (b"\xff\xfe\x00", "not valid JSON")])
def test_an_unusable_bookmark_file_is_refused_as_a_whole(tmp_path, content, words):
    path = tmp_path / "b.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(BadBookmarkFile, match=words):
        load_bookmarks(str(path))


def test_the_panel_lists_the_good_bookmarks_and_notes_the_skipped(qtbot, tmp_path, monkeypatch):
    shipped = bookmark_file(tmp_path / "shipped.json", [GOOD, {"name": "Broken", "center": [0, 0]}])
    monkeypatch.setattr(mandelbrot_controls, "BOOKMARKS_PATH", shipped)
    w = window(qtbot, ini(tmp_path))
    items = w.views["mandelbrot"].controls.bookmarks
    texts = [items.item(i).text() for i in range(items.count())]
    assert texts == ["Good place", "(1 bookmark skipped: hover for why)"]
    assert "it has no width" in items.item(1).toolTip()
    assert not items.item(1).flags() & Qt.ItemFlag.ItemIsEnabled
    assert "'Broken' skipped: it has no width" in status(w)
    w.close()


def test_a_broken_user_bookmark_file_is_set_aside_and_the_shipped_ones_stay(qtbot, tmp_path):
    user = tmp_path / "user-bm.json"
    user.write_text('{"bookmarks": [')
    w = window(qtbot, ini(tmp_path))
    items = w.views["mandelbrot"].controls.bookmarks
    assert "Seahorse valley" in [items.item(i).text() for i in range(items.count())]
    assert "Your bookmarks were not loaded" in status(w) and "set aside" in status(w)
    assert not user.exists() and [p for p in os.listdir(tmp_path) if p.startswith("user-bm.json.bad-")]
    w.close()


def test_the_users_own_bookmarks_follow_the_shipped_ones(qtbot, tmp_path):
    bookmark_file(tmp_path / "user-bm.json", [dict(GOOD, name="Mine")])
    w = window(qtbot, ini(tmp_path))
    items = w.views["mandelbrot"].controls.bookmarks
    names = [items.item(i).text() for i in range(items.count())]
    assert names[-1] == "Mine" and "Full set" in names
    w.close()
