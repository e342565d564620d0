"""Export dialogs keep what was typed (issue 24): a path that cannot be written is shown beside
the File field with the dialog still open, the size list follows a typed size, the next dialog of
the session opens with the last values, file dialogs start in the last folder used (else
Pictures or home, never the working folder), and a large output is asked about with its size."""
import os

import pytest
from PyQt6.QtWidgets import QDialog, QMessageBox

from explorer.views import export_fields
from explorer.views import mandelbrot_export as me
from explorer.views import mandelbrot_movie as mm
from services.movie import MoviePlace


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.setattr(me, "_last", {})
    monkeypatch.setattr(mm, "_last", {})
    monkeypatch.setattr(export_fields, "_last_folder", None)


def export_dialog(qtbot):
    dlg = me.ExportDialog(None, (800, 600))
    qtbot.addWidget(dlg)
    dlg.show()
    return dlg


def test_the_size_list_follows_a_typed_size(qtbot):
    dlg = export_dialog(qtbot)
    assert dlg.preset.currentText().startswith("4K")
    dlg.w.setValue(320)
    dlg.h.setValue(180)
    assert dlg.preset.currentText() == "Custom"
    dlg.w.setValue(1920)
    dlg.h.setValue(1080)
    assert dlg.preset.currentText() == "Full HD 1920×1080"
    dlg.w.setValue(800)
    dlg.h.setValue(600)
    assert dlg.preset.currentText() == "Window size"


def test_a_missing_folder_is_shown_beside_the_field_and_the_dialog_stays(qtbot, tmp_path):
    dlg = export_dialog(qtbot)
    bad = str(tmp_path / "nowhere" / "pic.png")
    dlg.path.setText(bad)
    dlg.w.setValue(320)
    dlg.h.setValue(180)
    dlg.accept()
    assert dlg.isVisible() and dlg.result() != QDialog.DialogCode.Accepted
    assert not dlg.path_error.isHidden() and "does not exist" in dlg.path_error.text()
    assert dlg.path.text() == bad and (dlg.w.value(), dlg.h.value()) == (320, 180)
    good = str(tmp_path / "pic.png")
    dlg.path.setText(good)
    dlg.accept()
    assert dlg.result() == QDialog.DialogCode.Accepted and dlg.path_error.isHidden()
    again = export_dialog(qtbot)             # the next dialog opens with what was typed
    assert again.path.text() == good and (again.w.value(), again.h.value()) == (320, 180)
    assert again.preset.currentText() == "Custom"


def test_cancelled_values_come_back_too(qtbot, tmp_path):
    dlg = export_dialog(qtbot)
    dlg.path.setText(str(tmp_path / "later.npy"))
    dlg.w.setValue(640)
    dlg.reject()
    again = export_dialog(qtbot)
    assert again.path.text() == str(tmp_path / "later.npy") and again.w.value() == 640


def test_a_large_output_is_asked_about_with_its_size(qtbot, tmp_path, monkeypatch):
    asked = []

    def question(parent, title, text, *a):
        asked.append(text)
        return QMessageBox.StandardButton.No
    monkeypatch.setattr(QMessageBox, "question", question)
    dlg = export_dialog(qtbot)
    dlg.path.setText(str(tmp_path / "big.npy"))
    dlg.w.setValue(8192)
    dlg.h.setValue(8192)                     # 512 MiB of float64 values
    dlg.accept()
    assert asked and "512.0 MiB" in asked[0] and "big.npy" in asked[0]
    assert dlg.result() != QDialog.DialogCode.Accepted
    asked.clear()
    dlg.w.setValue(1000)
    dlg.h.setValue(1000)                     # 7.6 MiB: no question
    dlg.accept()
    assert not asked and dlg.result() == QDialog.DialogCode.Accepted


def test_file_dialogs_start_in_the_last_folder_used_never_the_working_folder(tmp_path):
    first = export_fields.start_folder()
    assert os.path.isdir(first) and os.path.abspath(first) != os.getcwd()
    export_fields.remember_folder(str(tmp_path / "x.kfr"))
    assert export_fields.start_folder() == str(tmp_path)
    assert export_fields.start_path("m.png") == str(tmp_path / "m.png")


def test_the_movie_dialog_keeps_what_was_typed_when_the_folder_is_missing(qtbot, tmp_path):
    checked = []

    def check(choice):
        checked.append(choice)
        folder = os.path.dirname(choice["out"])
        return None if os.path.isdir(folder) else ("path", f"the folder {folder} does not exist")
    dlg = mm.MovieDialog(check=check)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.w.setValue(320)
    dlg.h.setValue(180)
    assert dlg.preset.currentText() == "Custom"
    dlg.w.setValue(1280)
    dlg.h.setValue(720)
    assert dlg.preset.currentText() == "HD 1280×720"
    dlg.fps.setValue(12)
    bad = str(tmp_path / "nowhere" / "zoom.mp4")
    dlg.path.setText(bad)
    dlg.accept()
    assert checked and dlg.isVisible() and dlg.result() != QDialog.DialogCode.Accepted
    assert "does not exist" in dlg.path_error.text() and not dlg.path_error.isHidden()
    assert dlg.path.text() == bad and dlg.fps.value() == 12
    dlg.reject()
    again = mm.MovieDialog(check=check)
    qtbot.addWidget(again)
    assert again.path.text() == bad and again.fps.value() == 12
    assert (again.w.value(), again.h.value()) == (1280, 720)
    assert again.preset.currentText() == "HD 1280×720"


def test_movie_problem_names_the_field(qtbot, tmp_path, monkeypatch):
    class View:
        class model:
            @staticmethod
            def movie_place():
                return MoviePlace("-0.75", "0", "3", None, "inferno", ())
    choice = {"out": str(tmp_path / "nowhere" / "z.mp4"), "size": (64, 36), "fps": 4,
              "seconds": 2.0, "zoom": "in", "codec": "h264"}
    field, why = mm.movie_problem(choice, View)
    assert field == "path" and "does not exist" in why
    field, why = mm.movie_problem(dict(choice, out=str(tmp_path / "z.mp4"), size=(65, 36)), View)
    assert field == "size" and "even" in why
    assert mm.movie_problem(dict(choice, out=str(tmp_path / "z.mp4")), View) is None


def test_an_export_asks_before_it_replaces_a_file(qtbot, tmp_path, monkeypatch):
    asked = []
    answer = [QMessageBox.StandardButton.No]

    def question(parent, title, text, *a):
        asked.append(text)
        return answer[0]
    monkeypatch.setattr(QMessageBox, "question", question)
    there = tmp_path / "poster.png"
    there.write_bytes(b"x" * 3000)
    dlg = export_dialog(qtbot)
    dlg.w.setValue(800)
    dlg.h.setValue(600)
    dlg.path.setText(str(there))
    dlg.accept()                             # No: the dialog stays, the file is kept
    assert asked and str(there) in asked[0] and "already exists" in asked[0]
    assert dlg.isVisible() and dlg.result() != QDialog.DialogCode.Accepted
    answer[0] = QMessageBox.StandardButton.Yes
    dlg.accept()
    assert dlg.result() == QDialog.DialogCode.Accepted
    asked.clear()
    fresh = export_dialog(qtbot)
    fresh.w.setValue(800)
    fresh.h.setValue(600)
    fresh.path.setText(str(tmp_path / "new.png"))
    fresh.accept()                           # nothing to replace: nothing asked
    assert not asked and fresh.result() == QDialog.DialogCode.Accepted


def test_png_frames_into_a_new_folder_are_accepted_and_the_folder_made(qtbot, scheduler,
                                                                       cpu_backend, tmp_path):
    from explorer.views.mandelbrot import MandelbrotView
    view = MandelbrotView(scheduler, cpu_backend)      # not shown: its place is all that is read
    qtbot.addWidget(view)
    choice = {"out": str(tmp_path / "frames" / "zoom%05d.png"), "size": (64, 48), "fps": 4,
              "seconds": 1.0, "zoom": "in", "codec": None, "mapping": "sqrt"}
    assert mm.movie_problem(choice, view) is None
    assert (tmp_path / "frames").is_dir()
    deeper = dict(choice, out=str(tmp_path / "a" / "b" / "zoom%05d.png"))
    kind, why = mm.movie_problem(deeper, view)
    assert kind == "path" and "does not exist" in why and not (tmp_path / "a").exists()
