"""The window's shell as a new user meets it (issue 24): File → Export picture… shows its key, About
gives the version and where the app computes in plain words, the "⚠ N notes" button lists every
note when clicked, and the throughput view says there is no GPU (and why) rather than "the CPU
backend is selected". And the command line's own name and choices."""
import pytest
from PyQt6.QtCore import QSettings, Qt

import main
from cli.failures import prog_name
from explorer.app import MainWindow
from kernels import backend
from kernels.extras import app_version

REASON = "no NVIDIA driver found (libcuda is missing): this machine has no usable NVIDIA GPU"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    st = backend.CudaStatus(False, REASON)
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    from explorer.views import mandelbrot_controls
    monkeypatch.setattr(mandelbrot_controls, "user_bookmarks_path", lambda: str(tmp_path / "bm.json"))
    w = MainWindow("cpu", settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True, notes=["first note", "second note"])
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def test_export_picture_shows_its_key(window):
    text = window.act_picture.text()
    assert text.endswith("\tCtrl+E") and text.startswith("Export &picture…")


def test_about_gives_the_version_and_the_backend_once_in_plain_words(window):
    text = window.about_text()
    assert f"GPU Explorer {app_version()}" in text and app_version() != "unknown"
    assert f"Computing on the CPU: {REASON}" in text
    assert "(CPU)" not in text and "Backend:" not in text


def test_clicking_the_notes_lists_every_note(qtbot, window):
    assert window.notes_label.text().strip() == "⚠ 2 notes"
    assert not window.info_bar.isVisible() or "first note" not in window.info_bar.text()
    qtbot.mouseClick(window.notes_label, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(window.info_bar.isVisible)
    shown = window.info_bar.text()
    assert shown.startswith("2 notes from this session:")
    assert "• first note" in shown and "• second note" in shown


def test_the_throughput_view_says_there_is_no_gpu_and_why(window):
    controls = window.views["throughput"].controls
    tips = {controls.impl_list.item(i).text(): controls.impl_list.item(i).toolTip()
            for i in range(controls.impl_list.count())}
    pycuda = next(t for name, t in tips.items() if "PyCUDA" in name or "pycuda" in name.lower())
    assert f"there is no usable GPU here: {REASON}" in pycuda
    assert not any("the CPU backend is selected" in t for t in tips.values())


def test_the_program_names_itself_as_it_was_started():
    assert prog_name("/home/u/app/.venv/bin/gpu-explorer") == "gpu-explorer"
    assert prog_name("C:\\venv\\Scripts\\gpu-explorer.exe".replace("\\", "/")) == "gpu-explorer"
    assert prog_name("main.py") == "main.py" and prog_name("/x/pytest") == "main.py"


def run(capsys, *argv):
    try:
        code = main.main(list(argv))
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def test_an_unknown_palette_lists_every_name(capsys):
    from kernels import palettes
    code, err = run(capsys, "--render", "mandelbrot", "--out", "x.png", "--palette", "nope")
    assert code == 2 and err.count("\n") == 1 and "…" not in err
    assert all(name in err for name in palettes.names())


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_gpus_is_refused(capsys, value):
    code, err = run(capsys, "--render", "mandelbrot", "--out", "x.png", f"--gpus={value}")
    assert code == 2 and err.strip() == "main.py: error: --gpus needs a value: all, or GPU numbers such as 0,1"


def test_help_says_a_scheduler_is_trusted_like_code():
    from cli.args import build_parser
    text = " ".join(build_parser().format_help().split())
    assert "a scheduler address is trusted like code you run" in text
