"""File → Export zoom movie…: the dialog lists what can encode here (and why the rest cannot), the
movie is made through the window's scheduler from the Mandelbrot view's place with progress and
Cancel, and a cancelled movie resumes from its finished segments."""
from __future__ import annotations

import os

import pytest
from PyQt6.QtCore import QSettings
from PyQt6.QtWidgets import QDialog

from services import movie as movie_mod
from services import movie_parts, movie_writer, video
from explorer.app import MainWindow
from explorer.views import mandelbrot_movie as mm
from kernels import backend

av = pytest.importorskip("av", reason="the movie extra (PyAV) is not installed")

PLACE = ("-0.7436438870", "0.1318259043", "1e-4")


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    """Each test's dialogs open with the defaults, not an earlier test's values."""
    monkeypatch.setattr(mm, "_last", {})


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    st = backend.CudaStatus(False, "no CUDA-capable GPU was found")
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    w = MainWindow("cpu", settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    w.show()
    view = w.views["mandelbrot"]
    assert view.go_to(*PLACE)
    yield w
    exporter = getattr(w, "movie_exporter", None)
    if exporter is not None:
        exporter.shutdown()
    w.close()


@pytest.fixture
def short_segments(monkeypatch):
    monkeypatch.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    monkeypatch.setattr(movie_writer, "default_lanes", lambda kind, size: 1)


def tiny(dlg: mm.MovieDialog, path, codec_index=0):
    dlg.preset.setCurrentIndex(len(mm.SIZES) - 1)       # custom
    dlg.w.setValue(64)
    dlg.h.setValue(36)
    dlg.fps.setValue(4)
    dlg.seconds.setValue(2.0)                            # 8 frames
    dlg.codec.setCurrentIndex(codec_index)
    dlg.path.setText(str(path))


def test_the_dialog_lists_codecs_with_the_reason_some_cannot_run(qtbot, tmp_path):
    dlg = mm.MovieDialog(path=str(tmp_path / "zoom.mp4"))
    qtbot.addWidget(dlg)
    labels = [dlg.codec.itemText(i) for i in range(dlg.codec.count())]
    assert labels[0] == "H.264 (libx264)" and labels[-1].startswith("PNG frames")
    nvenc = [i for i, (_, c) in enumerate(mm.CODECS) if c == "h264_nvenc"][0]
    why = mm.codec_problem("h264_nvenc")
    if why is not None:
        assert labels[nvenc].endswith("(unavailable)")
        assert not dlg.codec.model().item(nvenc).isEnabled()
        assert why in dlg.codec.itemData(nvenc, 3)          # the tooltip says why
    # PNG frames write a numbered sequence; back to H.264 writes a video again
    dlg.codec.setCurrentIndex(len(mm.CODECS) - 1)
    assert dlg.path.text() == str(tmp_path / "zoom%05d.png")
    dlg.codec.setCurrentIndex(0)
    assert dlg.path.text() == str(tmp_path / "zoom.mp4")
    dlg.resize(dlg.sizeHint())
    dlg.grab().save(str(tmp_path / "dialog.png"))
    assert os.path.getsize(tmp_path / "dialog.png") > 0


def test_the_file_menu_makes_a_movie_of_the_views_place(qtbot, window, tmp_path, monkeypatch,
                                                        short_segments):
    out = tmp_path / "zoom.mp4"

    def run_dialog(dlg):
        tiny(dlg, out)
        return QDialog.DialogCode.Accepted
    monkeypatch.setattr(mm.MovieDialog, "exec", run_dialog)
    progress = []
    window.act_movie.trigger()
    exporter = window.movie_exporter
    assert exporter.running and exporter.dialog is not None
    failures = []
    exporter.failed.connect(failures.append)
    with qtbot.waitSignal(exporter.finished, timeout=60_000) as got:
        while exporter.running:
            qtbot.wait(10)
            if exporter.dialog is not None:
                progress.append(exporter.dialog.labelText())
    assert got.args == [str(out)]
    assert any(t.startswith("Frame ") and "left" in t for t in progress) and not failures
    assert "Movie written" in window.statusBar().currentMessage()
    assert video.probe_frames(str(out)) == (8, 4)
    # the movie's last frame is the view's place with the view's colouring
    spec = exporter.spec
    assert spec.center == f"{PLACE[0]},{PLACE[1]}" and float(spec.width) == float(PLACE[2])
    assert spec.palette == window.views["mandelbrot"].controls.palette.currentText()
    assert dict(spec.colouring)["density"] == window.views["mandelbrot"].controls.density.value()


def test_cancel_keeps_the_finished_segments_and_the_next_export_resumes(
        qtbot, window, tmp_path, monkeypatch, short_segments):
    out = tmp_path / "zoom.mp4"
    dlg = mm.MovieDialog(window)
    qtbot.addWidget(dlg)
    tiny(dlg, out)
    spec = mm.place_of(window.views["mandelbrot"]).spec(**dlg.choice())
    exporter = mm.MovieExporter(window.scheduler, window, status=window.show_status)
    assert exporter.start(spec, window.backend)
    parts = movie_parts.parts_dir(str(out))
    first = os.path.join(parts, "segment-00000.mp4")
    qtbot.waitUntil(lambda: os.path.exists(first), timeout=60_000)
    with qtbot.waitSignal(exporter.failed, timeout=5_000) as got:
        exporter.cancel()
    assert got.args == ["cancelled"] and not exporter.running
    assert "Movie cancelled" in window.statusBar().currentMessage()
    assert "export it again to resume" in window.statusBar().currentMessage()
    qtbot.wait(200)        # the scheduler's next step sees the cancel and stops the lanes
    assert os.path.exists(first) and not out.exists()
    kept = os.stat(first)

    # every progress text the exporter shows (dialog and status bar get the same one): polling the
    # dialog's label missed them on a loaded machine, where the resumed frames went by between polls
    labels = []
    shown = exporter.status
    exporter.status = lambda text, *rest: (labels.append(text), shown(text, *rest))
    assert exporter.start(spec, window.backend)
    with qtbot.waitSignal(exporter.finished, timeout=60_000):
        while exporter.running:
            qtbot.wait(10)
    assert any("resumed after" in t for t in labels), labels
    assert video.probe_frames(str(out)) == (8, 4)
    assert kept.st_size > 0


def test_a_movie_that_cannot_be_made_says_so_in_the_status_bar(qtbot, window, tmp_path):
    spec = movie_mod.MovieSpec(out=str(tmp_path / "nowhere" / "zoom.mp4"), size=(64, 36), fps=4,
                               seconds=2, center="-0.74,0.13", width="1e-3")
    exporter = mm.MovieExporter(window.scheduler, window, status=window.show_status)
    with qtbot.waitSignal(exporter.failed, timeout=1_000):
        assert not exporter.start(spec, window.backend)
    assert "does not exist" in window.statusBar().currentMessage()
    assert not exporter.running


def test_eta_reads_as_minutes_and_seconds():
    assert mm.eta_text(10.0, 100, 700) == "about 1:00 left"
    assert mm.eta_text(0.0, 0, 700) == ""


def test_the_dialog_lets_the_user_pick_one_gpu_or_all(qtbot, tmp_path):
    from kernels.spread import GpuInfo
    gpus = [GpuInfo(0, "NVIDIA H200", 141.0), GpuInfo(1, "NVIDIA H200", 141.0)]
    dlg = mm.MovieDialog(path=str(tmp_path / "zoom.mp4"), gpus=gpus)
    qtbot.addWidget(dlg)
    assert dlg.gpus.itemText(0) == "All 2 GPUs" and dlg.chosen_gpus() == (0, 1)
    dlg.gpus.setCurrentIndex(1)
    assert dlg.chosen_gpus() == (0,)
    cpu = mm.MovieDialog(path=str(tmp_path / "zoom.mp4"))
    qtbot.addWidget(cpu)
    assert cpu.chosen_gpus() is None and not cpu.gpus.isEnabled()

