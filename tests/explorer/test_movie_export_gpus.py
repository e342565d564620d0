"""The window's movie export with its frames spread over every GPU of the machine (pool workers
on each GPU) against the same movie made on the view's own GPU: PNG frames bit for bit, and a
video's decoded frames. Apart from test_movie_export.py so that the PNG case runs where PyAV is
not installed (the GPU machine's Qt bundle)."""
from __future__ import annotations

import os

import pytest
from PyQt6.QtCore import QSettings

from explorer.app import MainWindow
from explorer.views import mandelbrot_movie as mm
from services import movie_parts, movie_writer, video

PLACE = ("-0.7436438870", "0.1318259043", "1e-4")


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.setattr(mm, "_last", {})


@pytest.fixture
def short_segments(monkeypatch):
    monkeypatch.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    monkeypatch.setattr(movie_writer, "default_lanes", lambda kind, size: 1)


@pytest.mark.gpu
def test_a_movie_spread_over_every_gpu_equals_one_on_the_view_gpu(qtbot, tmp_path, gpu_backend,
                                                                  simulated, short_segments):
    """The window's movie with its frames on every GPU (pool workers) has the frames of the movie
    made on the view's own GPU (PNG frames: compared bit for bit)."""
    if simulated:
        pytest.skip("the window's movie on GPUs needs a real GPU (the simulator takes minutes)")
    import numpy as np
    from PIL import Image
    w = MainWindow("cuda", settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    w.show()
    view = w.views["mandelbrot"]
    assert view.go_to(*PLACE)
    gpus = tuple(g.index for g in view.export_gpus())
    outs = []
    for name, chosen in (("one", None), ("all", gpus)):
        spec = mm.place_of(view).spec(str(tmp_path / name / "f%05d.png"), size=(320, 180), fps=4,
                                      seconds=2.0)
        os.makedirs(tmp_path / name)
        exporter = mm.MovieExporter(w.scheduler, w)
        assert exporter.start(spec, view.backend, show_progress=False, gpus=chosen)
        with qtbot.waitSignal(exporter.finished, timeout=120_000):
            pass
        outs.append(sorted((tmp_path / name).glob("f*.png")))
    assert len(outs[0]) == len(outs[1]) == 8
    for a, b in zip(*outs):
        assert np.array_equal(np.asarray(Image.open(a)), np.asarray(Image.open(b)))
    w.close()


# a deep place (perturbation past float64) beside the float64 one: its frames come from one
# reference orbit on every GPU
DEEP_PLACE = ("-1.99999999913827011875827476290869498831683", "0.0000000000000131489544350763757513624756",
              "1e-24")


@pytest.mark.gpu
@pytest.mark.parametrize("place", [PLACE, DEEP_PLACE], ids=["float64", "deep"])
def test_a_video_spread_over_every_gpu_decodes_to_the_frames_of_one_gpu(
        qtbot, tmp_path, gpu_backend, simulated, place):
    """The window's video (several segments, several encoder lanes) with its frames rendered on
    every GPU decodes to the same frames as the video rendered on the view's own GPU."""
    if simulated:
        pytest.skip("the window's movie on GPUs needs a real GPU (the simulator takes minutes)")
    if video.pyav_missing():
        pytest.skip(video.pyav_missing())
    import av
    import numpy as np
    w = MainWindow("cuda", settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                   synchronous=True)
    qtbot.addWidget(w)
    w.show()
    view = w.views["mandelbrot"]
    assert view.go_to(*place)
    gpus = tuple(g.index for g in view.export_gpus())
    decoded = []
    for name, chosen in (("one", None), ("all", gpus)):
        spec = mm.place_of(view).spec(str(tmp_path / f"{name}.mp4"), size=(320, 180), fps=8,
                                      seconds=3.0)
        exporter = mm.MovieExporter(w.scheduler, w)
        assert exporter.start(spec, view.backend, show_progress=False, gpus=chosen)
        with qtbot.waitSignal(exporter.finished, timeout=180_000):
            pass
        with av.open(spec.out) as f:
            decoded.append([fr.to_ndarray(format="rgb24") for fr in f.decode(video=0)])
    assert len(decoded[0]) == len(decoded[1]) == 24
    for a, b in zip(*decoded):
        assert np.array_equal(a, b)
    w.close()
