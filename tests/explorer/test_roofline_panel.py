"""The roofline panel: roofs asked of the scheduler, a job's work placed with the right hover
text, the notes for missing roofs, re-measuring (asked, or because a point beat a roof beyond its
spread, and only while the app is idle), the legend, and the panel in the window."""
import dataclasses

import pytest
from PyQt6.QtCore import QEvent, QPoint, QPointF, QSettings, Qt
from PyQt6.QtGui import QMouseEvent
from PyQt6.QtWidgets import QApplication

import explorer.roofline_panel as roofline_panel
import kernels.roofs as roofs_pkg
import kernels.roofs.jobs as roof_jobs
from explorer.models.roofline import RooflineModel
from explorer.roofline_panel import RooflinePanel
from kernels.roofs import Roofs
from kernels.roofs.work import Work, record
from kernels.timing import Timings

# made-up roofs of a made-up CPU: round numbers, a timestamp that is no run
ROOFS = Roofs("cpu", "Test CPU", bandwidth_Bps=20e9, f32_flops=200e9, f64_flops=100e9,
              int32_ops=50e9, measured_at="2000-01-01T00:00:00+00:00", key="k")


@pytest.fixture
def fake_roofs(monkeypatch):
    """The roofs job answers ROOFS (for the backend asked) after one probe step; nothing is kept;
    the panel measures as soon as the scheduler is idle; calls are recorded."""
    calls = []

    def fake(backend, remeasure=False, **kw):
        calls.append((backend.name, remeasure))
        return dataclasses.replace(ROOFS, backend=backend.name)

    def fake_steps(backend, remeasure=False, **kw):
        yield "a probe"
        return fake(backend, remeasure, **kw)
    monkeypatch.setattr(roof_jobs, "device_roofs", fake)
    monkeypatch.setattr(roof_jobs, "device_roofs_steps", fake_steps)
    monkeypatch.setattr(roofs_pkg, "kept_roofs", lambda backend, folder=None: None)
    monkeypatch.setattr(roofline_panel, "QUIET_MS", 0)
    return calls


def job(kernel_ms=10.0, ops=1e9, nbytes=1e8, kind="f64", label="mandelbrot 64×48"):
    t = Timings(backend="cpu", label=label)
    t.phases_ms.update(kernel=kernel_ms, total=kernel_ms)
    return record(t, Work("escape, useful iterations", kind, ops, nbytes, how="8 flops × …"))


@pytest.fixture
def panel(qtbot, scheduler, cpu_backend, fake_roofs):
    p = RooflinePanel(scheduler, {"cpu": cpu_backend, "cuda": None})
    qtbot.addWidget(p)
    p.resize(420, 700)
    p.show()
    qtbot.waitUntil(lambda: "cpu" in p.model.roofs, timeout=5000)
    return p


def test_a_job_becomes_a_point_with_its_hover_text(panel, qtbot):
    panel.add(job())
    panel.refresh()
    assert len(panel._items) == 1
    (text,) = panel.point_texts()
    # 1 Gflop in 10 ms = 100 Gflop/s at AI 10: under 10 × 20 GB/s = 200 Gflop/s, the float64 peak
    # of 100 Gflop/s bounds it, and it is there
    assert "mandelbrot 64×48 — escape, useful iterations" in text
    assert "time: 10 ms" in text and "100.0 % of the float64 peak roof" in text
    assert panel._tip(data=0) == text
    (x, y), = panel.spots()
    assert (x, y) == pytest.approx((1.0, 11.0))                     # log10(10), log10(1e11)
    panel.add(job(kernel_ms=40.0, ops=1e9, nbytes=1e9))             # AI 1: memory bound
    panel.refresh()
    assert "25.0 % of the bandwidth roof" in panel.point_texts()[-1]
    assert panel.details.text() == panel.point_texts()[-1]           # the newest is described


def test_hovering_a_point_describes_it(panel, qtbot):
    panel.add(job())
    panel.add(job(kernel_ms=20.0, label="second"))
    panel.refresh()
    assert panel.details.text().startswith("second")           # the newest, until a hover
    first = panel.scatter.points()[0]
    vb = panel.plot.getPlotItem().vb
    at = panel.plot.mapFromScene(vb.mapViewToScene(first.pos()))
    viewport = panel.plot.viewport()
    for pos in (QPoint(at.x() - 30, at.y()), at):               # move in from beside the point
        QApplication.sendEvent(viewport, QMouseEvent(
            QEvent.Type.MouseMove, QPointF(pos), QPointF(viewport.mapToGlobal(pos)),
            Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))
        qtbot.wait(20)
    assert panel.details.text().startswith("mandelbrot 64×48")
    assert vb.toolTip() == panel.details.text() == panel.point_texts()[0]


def test_the_roofs_are_drawn_and_named(panel):
    names = [name for name, _, _ in panel.model.roof_lines("cpu")]
    assert names == ["bandwidth", "f32", "f64", "int32"]
    assert len(panel._roof_items) == 4
    assert "Test CPU" in panel.caption.text() and "20 GB/s" in panel.caption.text()
    assert "no GPU: CPU roofs only" in panel.note_label.text()


def test_remeasure_asks_again(panel, qtbot, fake_roofs):
    assert fake_roofs == [("cpu", False)]
    panel.remeasure_btn.click()
    qtbot.waitUntil(lambda: len(fake_roofs) == 2, timeout=5000)
    assert fake_roofs[-1] == ("cpu", True)


def test_missing_roofs_are_said():
    m = RooflineModel()
    m.add(job())
    assert "not measured yet" in m.note()
    m.set_roofs("cpu", dataclasses.replace(ROOFS, simulated=True, bandwidth_Bps=None,
                                           f32_flops=None, f64_flops=None, int32_ops=None))
    assert m.note() == "simulator: roofs not measured"
    assert m.roof_lines() == [] and m.placements()[0][1].percent is None
    m.set_roofs("cpu", dataclasses.replace(ROOFS, f64_flops=None, note="not measured: float64"))
    assert "not measured: float64" in m.note()
    assert [n for n, _, _ in m.roof_lines()] == ["bandwidth", "f32", "int32"]
    m.set_failed("cpu", "out of memory")
    assert "could not be measured: out of memory" in m.note()


def _cpu_window(qtbot, tmp_path, monkeypatch):
    """The main window on a machine without a GPU, its distance view small, shown."""
    from explorer.app import MainWindow
    from kernels import backend
    monkeypatch.setattr(backend, "cuda_status",
                        lambda: backend.CudaStatus(False, "no CUDA-capable GPU was found"))
    w = MainWindow("cpu", view="distance", synchronous=True,
                   settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.views["distance"].max_side = 64
    w.show()
    return w


def test_the_window_places_a_views_job(qtbot, tmp_path, fake_roofs, monkeypatch):
    w = _cpu_window(qtbot, tmp_path, monkeypatch)
    w.roofline.raise_()
    panel = w.roofline.panel
    qtbot.waitUntil(lambda: len(panel._items) >= 1 and "cpu" in panel.model.roofs, timeout=30000)
    panel.refresh()
    text = panel.point_texts()[-1]
    assert "distance" in text and "% of the" in text and "on the CPU" in text
    assert "no GPU: CPU roofs only" in panel.note_label.text()
    w.close()


@pytest.mark.gpu
def test_gpu_roofs_in_the_panel(qtbot, scheduler, cpu_backend, gpu_backend, simulated,
                                monkeypatch):
    """The real roofs job on the GPU backend: the simulator's roofs say so and draw nothing."""
    from kernels.roofs import stream_probe
    monkeypatch.setattr(stream_probe, "STREAM_OPS", ("triad",))    # one kernel of each kind
    monkeypatch.setattr(stream_probe, "STREAM_N", 2**24)
    p = RooflinePanel(scheduler, {"cpu": cpu_backend, "cuda": gpu_backend})
    qtbot.addWidget(p)
    p.show()
    assert p.shown_backend() == "cuda"
    qtbot.waitUntil(lambda: "cuda" in p.model.roofs, timeout=120000)
    p.refresh()
    if simulated:
        assert p.note_label.text() == "simulator: roofs not measured"
        assert p.model.roof_lines("cuda") == [] and p.caption.text() == ""
    else:
        assert p.model.roofs["cuda"].complete
        assert [n for n, _, _ in p.model.roof_lines("cuda")] == ["bandwidth", "f32", "f64", "int32"]
        assert "timed by" in p.caption.text() and "bandwidth set by" in p.caption.text()


def test_jobs_without_a_time_are_counted_not_placed(panel):
    t = job()
    t.phases_ms["kernel"] = None                    # as under the simulator
    panel.add(t)
    panel.refresh()
    assert panel._items == [] and "1 kernel(s) counted but not timed" in panel.details.text()


def test_a_failed_measurement_is_said_and_retried_only_when_asked(qtbot, scheduler, cpu_backend,
                                                                   monkeypatch):
    calls = []

    def failing(backend, remeasure=False, **kw):
        calls.append(remeasure)
        raise MemoryError("no room for the bandwidth probe")
    monkeypatch.setattr(roof_jobs, "device_roofs", failing)
    monkeypatch.setattr(roof_jobs, "device_roofs_steps", failing)
    monkeypatch.setattr(roofs_pkg, "kept_roofs", lambda backend, folder=None: None)
    monkeypatch.setattr(roofline_panel, "QUIET_MS", 0)
    p = RooflinePanel(scheduler, {"cpu": cpu_backend, "cuda": None})
    qtbot.addWidget(p)
    p.show()
    qtbot.waitUntil(lambda: "cpu" in p.model.failed, timeout=5000)
    p.refresh()
    assert "could not be measured" in p.note_label.text()
    for _ in range(3):
        p.add(job())
    qtbot.wait(50)
    assert calls == [False]                          # no new attempt per job
    p.remeasure_btn.click()
    qtbot.waitUntil(lambda: calls == [False, True], timeout=5000)


def test_a_point_above_its_roof_has_the_roofs_measured_again(panel, qtbot, fake_roofs):
    assert fake_roofs == [("cpu", False)]
    # AI 1 at 40 Gop/s: twice the 20 GB/s slope, over 1 GB (no cache holds it)
    panel.add(job(kernel_ms=25.0, ops=1e9, nbytes=1e9, label="fast add"))
    panel.refresh()
    assert "stale: fast add" in panel.note_label.text()
    assert "100.0 % above the bandwidth roof" in panel.note_label.text()
    qtbot.waitUntil(lambda: len(fake_roofs) == 2 and "cpu" in panel.model.roofs, timeout=5000)
    assert fake_roofs[-1] == ("cpu", True)
    panel._dirty = True
    panel.refresh()
    # the same roofs again: the point is said, and not measured against once more
    assert "1 point(s) above their roof after it was measured again" in panel.note_label.text()
    qtbot.wait(300)
    assert len(fake_roofs) == 2
    panel.add(job(kernel_ms=25.0, ops=1e9, nbytes=1e9, label="a new one"))     # a new point
    qtbot.waitUntil(lambda: len(fake_roofs) == 3, timeout=5000)


def test_roofs_are_not_measured_while_the_apps_work_runs(qtbot, scheduler, cpu_backend,
                                                        fake_roofs):
    working = [True]

    class Work_:                    # a job of steps, as a sweep or a warm-up's compiles are
        pass

    def steps(ctx, req):
        while working[0]:
            yield "a step"
        return "done"
    scheduler.register(Work_, steps)
    scheduler.submit("view", Work_())
    p = RooflinePanel(scheduler, {"cpu": cpu_backend, "cuda": None})
    qtbot.addWidget(p)
    p.show()
    qtbot.wait(400)
    assert fake_roofs == [] and "cpu" in p.model.waiting
    p.refresh()
    assert "roofs are measured once the app is idle" in p.note_label.text()
    working[0] = False
    qtbot.waitUntil(lambda: "cpu" in p.model.roofs, timeout=5000)
    assert fake_roofs == [("cpu", False)]


def test_kept_roofs_are_shown_at_once_with_how_and_when(qtbot, scheduler, cpu_backend,
                                                       fake_roofs, monkeypatch):
    how = dataclasses.replace(ROOFS, details={
        "method": "wall clock", "bandwidth": [
            {"probe": "STREAM triad", "Bps": 20e9, "spread": 0.012},
            {"probe": "STREAM copy", "Bps": 18e9, "spread": 0.03}],
        "roofs": {"bandwidth": {"probe": "STREAM triad", "spread": 0.012, "probes": 2},
                  "f64": {"probe": "float64 multiply-add chains", "spread": 0.004,
                          "repeats": 3}}})
    monkeypatch.setattr(roofs_pkg, "kept_roofs", lambda backend, folder=None: how)
    p = RooflinePanel(scheduler, {"cpu": cpu_backend, "cuda": None})
    qtbot.addWidget(p)
    p.show()
    assert p.model.roofs["cpu"] is how and fake_roofs == []       # read, not measured
    p.refresh()
    text = p.caption.text()
    assert "bandwidth 20 GB/s ±1.2 %" in text and "float64 100 Gflop/s ±0.4 %" in text
    assert "measured 2000-01-01 00:00 UTC" in text and "timed by wall clock" in text
    assert "bandwidth set by STREAM triad, the best of 2 probes" in text
    tip = p.caption.toolTip()
    assert "STREAM copy: 18 GB/s ±3.0 %" in tip and "float64 peak: float64 multiply-add" in tip


def test_the_legend_names_the_points_markers(panel):
    t = job()
    record(t, Work("escape, executed lane-iterations", "f64", 2e9, 1e8))
    panel.add(t)
    panel.add(job(kind="int32", label="random"))
    panel.refresh()
    assert panel.legend_titles() == [
        "bandwidth", "float32 peak", "float64 peak", "int32 peak", "float64 work", "int32 work",
        "executed lane-iterations", "newest job (larger, outlined)"]
    assert panel.point_key.isVisible() and "executed" in panel.point_key.text()


def test_roofs_wait_while_the_panel_is_a_tab_behind_another(qtbot, tmp_path, fake_roofs,
                                                            monkeypatch):
    """The first start's case: the roofline is tabbed behind the timing panel; measuring the CPU's
    roofs then would take the cores a first start's compile needs, for a panel nobody sees."""
    w = _cpu_window(qtbot, tmp_path, monkeypatch)
    w.timing.raise_()
    panel = w.roofline.panel
    panel.quiet_ms = 0
    panel.ensure_roofs("cpu")
    for _ in range(5):
        panel.measure_if_idle()
        qtbot.wait(50)
    assert fake_roofs == [] and "cpu" in panel.model.waiting
    w.roofline.raise_()                 # its tab chosen: measured now
    qtbot.waitUntil(lambda: "cpu" in panel.model.roofs, timeout=10000)
    assert fake_roofs == [("cpu", False)]
    w.close()
