"""Faults while writing files: an export that fails half-way must leave the earlier file whole, a
path that cannot be written must be refused before any rendering, and a long export must not
stop the view from rendering."""
import json
import os

import numpy as np
import pytest
from PyQt6.QtCore import Qt

import kernels.mandelbrot.renderer as m
import kernels.mandelbrot.requests.strips as strips
import services.files
from explorer.views.throughput import ThroughputView
from kernels.scheduler import Progress
from kernels.vector import sweep as vector_sweep

EARLIER = b"the earlier file, whole"


def leftovers(folder):
    return sorted(p for p in os.listdir(folder) if p.endswith(".tmp"))


@pytest.fixture
def disk_full(monkeypatch):
    """Every atomic write fails once its data is written (fsync says the disk is full)."""
    def full(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(services.files.os, "fsync", full)


# ---- the throughput view's table exports --------------------------------------------------------
@pytest.fixture
def throughput(qtbot, scheduler, cpu_backend):
    v = ThroughputView(scheduler, cpu_backend)
    qtbot.addWidget(v)
    for i, n in enumerate((1024, 4096), 1):
        v.on_progress(vector_sweep.SweepPoint("add", "numpy", "kernel", n, time_ms=0.5, gbs=1.0,
                                              gelems=0.1, index=i, total=2))
    yield v
    v.shutdown()


@pytest.mark.parametrize("name, save", [("t.csv", "save_csv"), ("t.json", "save_json")])
def test_a_table_export_failing_half_way_keeps_the_earlier_file(qtbot, throughput, tmp_path, disk_full,
                                                                 name, save):
    target = tmp_path / name
    target.write_bytes(EARLIER)
    with qtbot.waitSignal(throughput.error_message) as sig:
        getattr(throughput, save)(str(target))
    assert "No space left on device" in sig.args[0]
    assert target.read_bytes() == EARLIER and leftovers(tmp_path) == []


def test_table_exports_written_whole(throughput, tmp_path):
    throughput.export_csv(str(tmp_path / "t.csv"))
    throughput.export_json(str(tmp_path / "t.json"))
    assert (tmp_path / "t.csv").read_text().count("\n") == 3
    assert len(json.loads((tmp_path / "t.json").read_text())["points"]) == 2


def test_a_table_export_into_a_missing_folder_says_so(qtbot, throughput, tmp_path):
    with qtbot.waitSignal(throughput.error_message) as sig:
        throughput.save_csv(str(tmp_path / "no" / "t.csv"))
    assert "does not exist" in sig.args[0]


# ---- the Mandelbrot picture export --------------------------------------------------------------
@pytest.fixture
def view(small_mandelbrot_view):
    return small_mandelbrot_view(80, 60, settle=True)


@pytest.mark.parametrize("where, words", [
    ("missing/pic.png", "does not exist"),
    ("", "is a folder"),
    ("pic.jpg", "must end in .png"),
])
def test_an_export_path_that_cannot_be_written_is_refused_before_rendering(qtbot, view, tmp_path,
                                                                         monkeypatch, where, words):
    def never(*a, **k):
        raise AssertionError("the export rendered although its path was refused")
    monkeypatch.setattr(m.Renderer, "strips", never)
    path = str(tmp_path / where) if where else str(tmp_path)
    with qtbot.waitSignal(view.export_failed, timeout=1000) as sig:
        assert not view.start_export(path, 4000, 3000, show_progress=False)
    assert words in sig.args[0]
    assert not view.has_job(view.side_key("export")) and not view.exporting


@pytest.mark.parametrize("name", ["pic.png", "pic.npy"])
def test_an_export_failing_half_way_keeps_the_earlier_file(qtbot, view, tmp_path, monkeypatch, name):
    def failing_strips(self, request, values, rows=None, cancel=None):
        w = request.size[0]
        yield 0, (np.zeros((1, w)) if values else np.zeros((1, w, 4), np.uint8))
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(m.Renderer, "strips", failing_strips)
    target = tmp_path / name
    target.write_bytes(EARLIER)
    with qtbot.waitSignal(view.export_failed, timeout=30000) as sig:
        assert view.start_export(str(target), 40, 30, show_progress=False)
    assert "No space left on device" in sig.args[0]
    assert target.read_bytes() == EARLIER and leftovers(tmp_path) == []
    assert not view.exporting


def test_a_cancelled_export_keeps_the_earlier_file(qtbot, view, tmp_path, monkeypatch):
    monkeypatch.setattr(strips, "STRIP_PIXELS", 40)           # one row per strip
    target = tmp_path / "pic.npy"
    target.write_bytes(EARLIER)
    key = view.side_key("export")
    with qtbot.waitSignal(view.scheduler.event, timeout=30000,      # the first strip is written
                          check_params_cb=lambda ev: ev.key == key and isinstance(ev, Progress)):
        assert view.start_export(str(target), 40, 200, show_progress=False)
    assert leftovers(tmp_path)                                       # half-way: a temporary file
    with qtbot.waitSignal(view.export_failed, timeout=30000) as sig:
        view.cancel_export()
    assert sig.args == ["cancelled"]
    qtbot.waitUntil(lambda: leftovers(tmp_path) == [], timeout=30000)
    assert target.read_bytes() == EARLIER


def test_the_view_keeps_rendering_while_an_export_runs(qtbot, view, tmp_path, monkeypatch):
    """The export yields between strips; the scheduler runs the view's frames in between."""
    monkeypatch.setattr(strips, "STRIP_PIXELS", 40)           # 30 strips of one row
    shown_during_export = []
    view.frame_displayed.connect(lambda f, ms: shown_during_export.append(view.exporting))
    with qtbot.waitSignal(view.export_finished, timeout=60000):
        assert view.start_export(str(tmp_path / "pic.png"), 40, 30, show_progress=False)
        qtbot.keyClick(view.canvas, Qt.Key.Key_Plus)
    assert shown_during_export and shown_during_export[0] is True
    assert (tmp_path / "pic.png").stat().st_size > 0 and leftovers(tmp_path) == []


def test_a_second_export_while_one_runs_is_refused_not_lost(qtbot, view, tmp_path, monkeypatch):
    monkeypatch.setattr(strips, "STRIP_PIXELS", 40)
    with qtbot.waitSignal(view.export_finished, timeout=60000) as sig:
        assert view.start_export(str(tmp_path / "a.png"), 40, 30, show_progress=False)
        assert not view.start_export(str(tmp_path / "b.png"), 40, 30, show_progress=False)
    assert sig.args == [str(tmp_path / "a.png")] and not (tmp_path / "b.png").exists()
