"""First-hour fixes in the window: results and errors stay on show until read (a frame's progress
takes the status bar's line within a second), and what the window says while it works."""
from decimal import Decimal

import pytest
from PyQt6.QtCore import QSettings
from PyQt6.QtWidgets import QApplication

from explorer.app import MainWindow
from kernels import backend


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def no_gpu(monkeypatch):
    st = backend.CudaStatus(False, "no CUDA-capable GPU was found")
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    return st


def window(qtbot, settings, view=None):
    """Shown as every window of the app is (a window closed unshown left its map's view box
    deleted under a pending resize), small: its frames cost little."""
    w = MainWindow("cpu", view, settings=settings, synchronous=True)
    qtbot.addWidget(w)
    w.resize(640, 420)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_a_paste_error_stays_on_show_through_frame_progress(qtbot, settings, no_gpu):
    win = window(qtbot, settings)
    view = win.views["mandelbrot"]
    assert not view.places.paste("not a place at all")
    bar = win.notice_bar
    assert not bar.isHidden() and bar.text().startswith("Cannot paste location")
    # a deep frame's progress lines follow, as they do within a second
    for n in range(5):
        view.status_message.emit(f"Deep frame {n * 20}%: reference orbit   (Esc cancels)", 0)
    assert not bar.isHidden() and bar.text().startswith("Cannot paste location")
    bar.dismiss()
    assert bar.isHidden()


def test_an_error_is_kept_until_the_next_one_replaces_it(qtbot, settings, no_gpu):
    win = window(qtbot, settings)
    win.show_error("first")
    win.statusBar().showMessage("progress", 0)
    assert win.notice_bar.text() == "Error: first"
    win.show_error("second")
    assert win.notice_bar.text() == "Error: second" and not win.notice_bar.isHidden()


def test_the_mandelbrot_place_and_the_distance_reference_come_back_after_a_restart(
        qtbot, settings, no_gpu):
    win = window(qtbot, settings)
    deep = "-1.7400623825793399052208441670658256382966" + "1" * 30
    assert win.views["mandelbrot"].go_to(deep, "0.0281753397792110489924521899305", "1e-60", 3000)
    win.views["distance"].set_reference(48.85, 2.35)
    win.close()
    again = window(qtbot, settings)
    s = again.views["mandelbrot"].camera.state
    assert str(s.center_re) == deep and s.width == Decimal("1e-60")
    assert again.views["mandelbrot"].model.fixed_iterations == 3000
    assert again.views["distance"].ref == (48.85, 2.35)
    again.close()


def test_a_saved_place_that_cannot_be_used_is_dropped_with_a_note(qtbot, settings, no_gpu):
    settings.setValue("mandelbrot/place", "re=nonsense")
    settings.setValue("distance/reference", "north,pole")
    win = window(qtbot, settings)
    assert win.views["mandelbrot"].camera.state.width == Decimal("3.5")   # the whole set
    win.views["distance"]           # its saved place is read as it is built
    notes = " ".join(win.notes())
    assert "saved Mandelbrot place could not be used" in notes
    assert "saved distance reference point could not be read" in notes
    assert settings.value("distance/reference") is None


def test_a_bookmark_result_stays_on_show_too(qtbot, settings, no_gpu):
    win = window(qtbot, settings)
    box = win.views["mandelbrot"].controls.bookmark_box
    box.message.emit("Bookmark not added: the disk is full")
    win.statusBar().showMessage("Deep frame 10%: reference orbit", 0)
    assert win.notice_bar.text() == "Bookmark not added: the disk is full"
    assert not win.notice_bar.isHidden()


def test_a_notice_floats_over_the_views_and_costs_no_frame(qtbot, settings, no_gpu):
    win = window(qtbot, settings)
    view = win.views["mandelbrot"]
    qtbot.waitUntil(lambda: view.model.shown is not None and not view.in_flight)
    size, frames = view.canvas_size(), []
    view.frame_displayed.connect(lambda frame, ms: frames.append(frame))
    win.show_notice("Minibrot found: period 3")
    bar = win.notice_bar
    assert bar.geometry().top() >= win.tabs.tabBar().height() and bar.width() == win.tabs.width()
    bar.dismiss()
    QApplication.processEvents()
    assert view.canvas_size() == size and frames == []     # the picture was not resized
