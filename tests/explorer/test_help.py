"""The Help menu: a list of every key (docs/USAGE.md's table, row for row) and a short guide; and
Ctrl+Shift+G without a GPU says why instead of doing nothing."""
import pathlib

import pytest
from PyQt6.QtCore import QSettings, Qt

from explorer import help as app_help
from explorer.app import MainWindow
from kernels import backend

USAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "USAGE.md"


@pytest.fixture
def win(qtbot, tmp_path, monkeypatch):
    st = backend.CudaStatus(False, "no CUDA-capable GPU was found")
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    w = MainWindow("cpu", settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


def _usage_rows():
    section = USAGE.read_text(encoding="utf-8").split("## In the window", 1)[1]
    table = section.split("| where | action | how |", 1)[1].split("\n\n", 1)[0]
    lines = [ln for ln in table.splitlines() if ln.startswith("| ")]
    return [tuple(c.strip() for c in ln.strip().strip("|").split("|")) for ln in lines]


def test_the_help_keys_are_the_usage_table_row_for_row():
    assert _usage_rows() == list(app_help.KEYS)


def test_f1_opens_the_keys_and_the_guide(qtbot, win):
    titles = [a.text() for a in win.menuBar().actions()[-1].menu().actions()]
    assert "&Keys and guide" in titles and "&Getting started" in titles
    qtbot.keyClick(win, Qt.Key.Key_F1)
    dlg = win.help_dialog
    assert dlg.isVisible()
    text = dlg.browser.toPlainText()
    assert "Ctrl+Shift+G" in text and "F1" in text
    assert "zoom to the minibrot in view" in text and "Getting started" in text
    assert text.index("Keys") < text.index("Getting started")
    dlg.close()


def test_ctrl_shift_g_without_a_gpu_says_why(qtbot, win):
    assert not win.act_gpu.isEnabled()
    qtbot.keyClick(win, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)
    assert win.notice_bar.isVisible()
    assert win.notice_bar.text() == "No GPU to switch to: no CUDA-capable GPU was found"
    assert not win.backend.is_gpu
