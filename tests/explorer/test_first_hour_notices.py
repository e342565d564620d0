"""First-hour fixes in the window: results and errors stay on show until read (a frame's progress
takes the status bar's line within a second), and what the window says while it works."""
import pytest
from PyQt6.QtCore import QSettings

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


def window(qtbot, settings, view=None, size=(1200, 800)):
    w = MainWindow("cpu", view, settings=settings, synchronous=True)
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    return w


def test_a_paste_error_stays_on_show_through_frame_progress(qtbot, settings, no_gpu):
    win = window(qtbot, settings)
    view = win.views["mandelbrot"]
    assert not view.places.paste("not a place at all")
    bar = win.notice_bar
    assert bar.isVisible() and bar.text().startswith("Cannot paste location")
    # a deep frame's progress lines follow, as they do within a second
    for n in range(5):
        view.status_message.emit(f"Deep frame {n * 20}%: reference orbit   (Esc cancels)", 0)
    assert bar.isVisible() and bar.text().startswith("Cannot paste location")
    bar.dismiss()
    assert not bar.isVisible()


def test_an_error_is_kept_until_the_next_one_replaces_it(qtbot, settings, no_gpu):
    win = window(qtbot, settings)
    win.show_error("first")
    win.statusBar().showMessage("progress", 0)
    assert win.notice_bar.text() == "Error: first"
    win.show_error("second")
    assert win.notice_bar.text() == "Error: second" and win.notice_bar.isVisible()
