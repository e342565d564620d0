"""The settings file as an attacker or a broken disk leaves it (issue 24): Qt turns a
`@Variant(…PyQt_PyObject…)` value into a Python object by unpickling it as it reads the file, so
nothing of that kind may reach Qt; a file that is not a settings file is set aside (renamed beside
itself, the note says where), never overwritten at quit, and never called "not writable"."""
import os
import subprocess
import sys
import textwrap

import pytest
from PyQt6.QtCore import QByteArray, QSettings

from explorer import persisted
from explorer.app import MainWindow
from kernels import backend

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch, tmp_path):
    st = backend.CudaStatus(False, "no CUDA-capable GPU was found")
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    from explorer.views import mandelbrot_controls
    monkeypatch.setattr(mandelbrot_controls, "user_bookmarks_path", lambda: str(tmp_path / "bm.json"))


def child(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=60)


def pickled_settings(path, marker):
    """A settings file whose geometry is a PyQt_PyObject pickle that creates `marker` (written
    by another process, so that this one holds no cached copy of its values)."""
    r = child(f"""
        import os
        from PyQt6.QtCore import QSettings
        class Evil:
            def __reduce__(self):
                return (os.mkdir, ({str(marker)!r},))
        s = QSettings({str(path)!r}, QSettings.Format.IniFormat)
        s.setValue("geometry", Evil())
        s.setValue("view", "distance")
        s.sync()
    """)
    assert r.returncode == 0, r.stderr
    text = path.read_text()
    assert "@Variant(" in text and "PyQt_PyObject" in text and not marker.exists()
    return text


def test_the_pickle_really_runs_when_qt_reads_the_file(tmp_path):
    """The control: Qt alone runs the pickle as it reads the file (so the test below can fail)."""
    path, marker = tmp_path / "s.ini", tmp_path / "MARKER"
    pickled_settings(path, marker)
    r = child(f"""
        from PyQt6.QtCore import QSettings
        QSettings({str(path)!r}, QSettings.Format.IniFormat).allKeys()
    """)
    assert r.returncode == 0, r.stderr
    assert marker.exists()


def test_a_pickled_setting_is_removed_unread_with_a_note(qtbot, tmp_path):
    path, marker = tmp_path / "s.ini", tmp_path / "MARKER"
    pickled_settings(path, marker)
    w = MainWindow("cpu", settings=QSettings(str(path), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    assert not marker.exists()
    assert any("geometry was not a plain value" in n and "nothing in it was run" in n
               for n in w.notes()), w.notes()
    assert w.current_view().view_id == "distance"          # the plain values are kept
    assert "@Variant" not in path.read_text()
    w.close()
    assert not marker.exists()
    assert isinstance(QSettings(str(path), QSettings.Format.IniFormat).value("geometry"), QByteArray)


def test_screen_ini_keeps_plain_values_and_drops_every_other_kind():
    text = ("[General]\nview=distance\ngeometry=@ByteArray(\\x1\\x2)\nsizes=1, 2\n"
            "a=@Variant(\\0\\0\\0\\x7f)\nb=\"x, @Variant(\\0)\"\nc=@Rect(1 2 3 4)\nd=@@literal\n"
            "[Dock]\ne=@Variant(\\0)\n")
    kept, dropped = persisted.screen_ini(text)
    assert dropped == ["a", "b", "c", "Dock/e"]
    assert "view=distance" in kept and "@ByteArray" in kept and "d=@@literal" in kept
    assert "@Variant" not in kept and "@Rect" not in kept
    assert persisted.screen_ini("\0\xff garbage")[0] is None
    assert persisted.screen_ini("[General\nview=1")[0] is None


@pytest.mark.parametrize("content", [b"\x00\xff\xfe garbage \x01", b"\xff\xfe\x00\x01",
                                     b"just some words\n"])
def test_a_corrupt_settings_file_is_set_aside_not_called_unwritable(qtbot, tmp_path, content):
    path = tmp_path / "s.ini"
    path.write_bytes(content)
    w = MainWindow("cpu", settings=QSettings(str(path), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    notes = "\n".join(w.notes())
    assert "could not be written" not in notes and "will not be saved" not in notes, notes
    aside = [p for p in os.listdir(tmp_path) if p.startswith("s.ini.bad-")]
    assert len(aside) == 1, os.listdir(tmp_path)
    assert f"set aside as {tmp_path / aside[0]}" in notes        # where, in full
    w.close()
    assert (tmp_path / aside[0]).read_bytes() == content          # kept as it was
    assert "geometry" in path.read_text()                         # a fresh file beside it


def test_a_corrupt_file_holding_a_pickle_is_set_aside_unread(qtbot, tmp_path):
    path, marker = tmp_path / "s.ini", tmp_path / "MARKER"
    text = pickled_settings(path, marker)
    path.write_text("this line is no setting\n" + text)
    w = MainWindow("cpu", settings=QSettings(str(path), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    assert "set aside as" in "\n".join(w.notes())
    w.close()
    assert not marker.exists()
