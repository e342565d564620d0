"""The window's movie dialog offers frames from keyframes (issue 37): the export makes the movie
through the scheduler, and a cancelled keyframe export, started again, finishes into the same
frames as an uninterrupted one."""
from __future__ import annotations

import os

import numpy as np
import pytest
from PyQt6.QtCore import QSettings

pytest.importorskip("gmpy2", reason="keyframes are drawn by the deep renderer")

from explorer.app import MainWindow
from explorer.views import mandelbrot_movie as mm
from kernels import backend
from services import movie_keyframes, movie_parts, movie_writer

PLACE = ("-0.7436438870", "0.1318259043", "1e-6")


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.setattr(mm, "_last", {})
    monkeypatch.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    monkeypatch.setattr(movie_writer, "default_lanes", lambda kind, size: 1)
    monkeypatch.setattr(movie_keyframes, "BATCH_FRAMES", 3)
    monkeypatch.setattr(movie_keyframes, "DIRECT_MIN_LOG2", float("inf"))   # keyframes only
    monkeypatch.setattr(movie_keyframes, "CHUNK_FRAMES", 2)


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    st = backend.CudaStatus(False, "no CUDA-capable GPU was found")
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    w = MainWindow("cpu", settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    w.show()
    assert w.views["mandelbrot"].go_to(*PLACE)
    yield w
    exporter = getattr(w, "movie_exporter", None)
    if exporter is not None:
        exporter.shutdown()
    w.close()


def keyframe_spec(qtbot, window, pattern):
    dlg = mm.MovieDialog(window)
    qtbot.addWidget(dlg)
    dlg.preset.setCurrentIndex(len(mm.SIZES) - 1)
    dlg.w.setValue(64)
    dlg.h.setValue(36)
    dlg.fps.setValue(4)
    dlg.seconds.setValue(2.0)                            # 8 frames
    dlg.codec.setCurrentIndex(len(mm.CODECS) - 1)        # PNG frames: compared one by one
    dlg.path.setText(str(pattern))
    assert [dlg.method.itemText(i) for i in range(dlg.method.count())][1].startswith("From keyframes")
    assert dlg.choice()["keyframes"] is False            # each frame rendered unless chosen
    dlg.method.setCurrentIndex(1)
    choice = dlg.choice()
    assert choice["keyframes"] is True
    return mm.place_of(window.views["mandelbrot"]).spec(**choice)


def run(qtbot, exporter, spec):
    assert exporter.start(spec, window_backend(exporter))
    with qtbot.waitSignal(exporter.finished, timeout=120_000):
        while exporter.running:
            qtbot.wait(10)


def window_backend(exporter):
    return exporter.parent_widget.backend


def frames(pattern):
    Image = pytest.importorskip("PIL.Image", reason="reading PNG frames back needs Pillow")
    return [np.asarray(Image.open(str(pattern) % k)) for k in range(8)]


def test_a_cancelled_keyframe_export_resumes_into_the_same_frames(qtbot, window, tmp_path):
    exporter = mm.MovieExporter(window.scheduler, window, status=window.show_status)
    whole = tmp_path / "whole" / "f%05d.png"
    os.makedirs(whole.parent)
    spec = keyframe_spec(qtbot, window, whole)
    run(qtbot, exporter, spec)
    assert not os.path.exists(movie_keyframes.keyframes_dir(str(whole)))   # gone when done

    cut = tmp_path / "cut" / "f%05d.png"
    os.makedirs(cut.parent)
    spec = keyframe_spec(qtbot, window, cut)
    labels = []
    shown = exporter.status
    exporter.status = lambda text, *rest: (labels.append(text), shown(text, *rest))
    assert exporter.start(spec, window.backend)
    qtbot.waitUntil(lambda: os.path.exists(str(cut) % 2), timeout=120_000)
    with qtbot.waitSignal(exporter.failed, timeout=5_000):
        exporter.cancel()
    qtbot.wait(200)
    assert not os.path.exists(str(cut) % 7)
    assert any("keyframes" in t for t in labels)
    run(qtbot, exporter, spec)
    for a, b in zip(frames(cut), frames(whole)):
        assert np.array_equal(a, b)
