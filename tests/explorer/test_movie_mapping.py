"""The movie dialog's Mapping field (issue 24): a movie colours every frame with one mapping, so
log and histogram (each frame's own statistics) are refused beside the field with the dialog still
open; the list says which mappings apply to movies, and starts with the view's choice."""
from __future__ import annotations

import pytest
from PyQt6.QtCore import QSettings
from PyQt6.QtWidgets import QDialog

from explorer.app import MainWindow
from explorer.views import export_fields
from explorer.views import mandelbrot_movie as mm
from kernels import backend
from services.movie import MoviePlace


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.setattr(mm, "_last", {})
    monkeypatch.setattr(export_fields, "_last_folder", None)


def view_with(mapping):
    class View:
        class model:
            @staticmethod
            def movie_place():
                colouring = (("density", 1.0),) + ((("mapping", mapping),) if mapping else ())
                return MoviePlace("-0.75", "0", "3", None, "inferno", colouring)
    return View


def dialog(qtbot, tmp_path, view_mapping):
    view = view_with(view_mapping)
    dlg = mm.MovieDialog(path=str(tmp_path / "zoom.mp4"), mapping=view_mapping,
                         check=lambda c: mm.movie_problem(c, view))
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    return dlg, view


def test_the_list_says_which_mappings_apply_to_movies(qtbot, tmp_path):
    dlg, _ = dialog(qtbot, tmp_path, None)
    labels = {dlg.mapping.itemData(i): dlg.mapping.itemText(i) for i in range(dlg.mapping.count())}
    assert set(labels) == {"sqrt", "log", "histogram"}
    assert "every frame" in labels["sqrt"] and "not for movies" not in labels["sqrt"]
    assert "not for movies" in labels["log"] and "not for movies" in labels["histogram"]
    assert dlg.mapping.currentData() == "sqrt" and dlg.mapping_error.isHidden()   # view on auto


def test_log_is_refused_beside_the_mapping_field_and_the_dialog_stays(qtbot, tmp_path):
    dlg, view = dialog(qtbot, tmp_path, "log")
    assert dlg.mapping.currentData() == "log"               # the view's choice, said at once
    assert not dlg.mapping_error.isHidden()
    dlg.fps.setValue(12)
    dlg.accept()
    assert dlg.isVisible() and dlg.result() != QDialog.DialogCode.Accepted
    assert "each frame's own statistics" in dlg.mapping_error.text()
    assert "sqrt" in dlg.mapping_error.text() and "--mapping" not in dlg.mapping_error.text()
    assert dlg.path_error.isHidden() and dlg.size_error.isHidden()
    assert dlg.fps.value() == 12                            # nothing typed is lost
    dlg.mapping.setCurrentIndex(dlg.mapping.findData("histogram"))
    assert "histogram takes" in dlg.mapping_error.text()
    dlg.mapping.setCurrentIndex(dlg.mapping.findData("sqrt"))
    assert dlg.mapping_error.isHidden()
    with qtbot.waitSignal(dlg.accepted, timeout=2000):
        dlg.accept()
    spec = mm.movie_spec(dlg.full_choice(), view)
    assert dict(spec.colouring)["mapping"] == "sqrt" and dict(spec.colouring)["density"] == 1.0


def test_the_next_dialog_keeps_the_mapping_picked_while_the_view_keeps_its_own(qtbot, tmp_path):
    dlg, _ = dialog(qtbot, tmp_path, "histogram")
    dlg.mapping.setCurrentIndex(dlg.mapping.findData("sqrt"))
    dlg.reject()
    again = mm.MovieDialog(mapping="histogram")
    qtbot.addWidget(again)
    assert again.mapping.currentData() == "sqrt"
    other = mm.MovieDialog(mapping="log")                   # the view changed since: its choice
    qtbot.addWidget(other)
    assert other.mapping.currentData() == "log"


def test_movie_problem_names_the_mapping_field(tmp_path):
    choice = {"out": str(tmp_path / "z.mp4"), "size": (64, 36), "fps": 4, "seconds": 2.0,
              "zoom": "in", "codec": "h264"}
    field, why = mm.movie_problem(dict(choice, mapping="histogram"), view_with(None))
    assert field == "mapping" and why.startswith("histogram takes each frame's own statistics")
    field, _ = mm.movie_problem(choice, view_with("log"))    # none given: the view's
    assert field == "mapping"


def test_the_file_menu_opens_the_dialog_with_the_views_mapping(qtbot, tmp_path, monkeypatch):
    st = backend.CudaStatus(False, "no CUDA-capable GPU was found")
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    w = MainWindow("cpu", settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    w.show()
    w.views["mandelbrot"].controls.mapping.setCurrentText("log")
    seen = {}

    def run_dialog(dlg):
        dlg.path.setText(str(tmp_path / "zoom.mp4"))
        dlg.accept()                                        # Export: refused, still open
        seen.update(mapping=dlg.mapping.currentData(), error=dlg.mapping_error.text(),
                    visible=dlg.isVisible() or dlg.result() != QDialog.DialogCode.Accepted)
        return QDialog.DialogCode.Rejected
    monkeypatch.setattr(mm.MovieDialog, "exec", run_dialog)
    assert not mm.export_zoom_movie(w)
    assert seen["mapping"] == "log" and seen["visible"]
    assert "log takes each frame's own statistics" in seen["error"]
    w.close()
