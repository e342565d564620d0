"""The Mandelbrot view's overlay selector (explorer/views/mandelbrot_overlays.py), driven as a user
would: the combo box chooses, the frame that comes back is the overlay with its legend and totals,
the overlays without a meaning here are greyed with the reason in their tooltip, and choosing none
brings the picture back."""
import numpy as np
import pyqtgraph as pg
import pytest
from PyQt6.QtCore import Qt
from PyQt6.QtTest import QTest

from explorer.views.mandelbrot import MandelbrotView
from kernels.mandelbrot.colouring import overlays as ov

W, H = 96, 72
WAIT_MS = 120_000


def make_view(qtbot, scheduler, backend, iters=60, size=(W + 420, 1000), panel=True):
    pg.setConfigOption("mouseRateLimit", -1)
    v = MandelbrotView(scheduler, backend)
    qtbot.addWidget(v)
    v.controls.set_iterations(iters)
    v.controls.setVisible(panel)    # hidden: the canvas alone, its frames as small as the view
    v.progressive = False
    v.resize(*size)
    v.show()
    qtbot.waitExposed(v)
    return v


def wait_frame(qtbot, v, overlay=None):
    def ok():
        t = v.model.shown
        assert t is not None and not t.coarse and not v.in_flight
        assert t.state == v.camera.state and (t.w, t.h) == v.canvas_size()
        if overlay is not None:
            info = v.last_frame.meta.get("overlay")
            assert (info.name if info else "") == overlay
    qtbot.waitUntil(ok, timeout=WAIT_MS)
    return v.last_frame


@pytest.fixture
def view(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend)
    wait_frame(qtbot, v)
    yield v
    qtbot.waitUntil(lambda: not v.in_flight, timeout=WAIT_MS)
    v.shutdown()


def choose(view, name):
    panel = view.overlays.panel
    panel.combo.setCurrentIndex(panel.combo.findData(name))


def test_the_iterations_overlay_replaces_the_picture_with_a_legend(qtbot, view):
    picture = view.last_frame.rgba.copy()
    panel = view.overlays.panel
    assert not panel.legend.isVisible()
    choose(view, ov.ITERATIONS)
    f = wait_frame(qtbot, view, ov.ITERATIONS)
    info = f.meta["overlay"]
    assert not np.array_equal(f.rgba, picture)
    assert panel.legend.isVisible() and panel.legend.scale == info.scale
    assert [t for t, _ in panel.legend.ticks()] == [0.0, 0.5, 1.0]
    assert panel.legend.ticks()[-1][1] == f"{view.model.iterations():,}"
    assert panel.totals.isVisible() and "per pixel" in panel.totals.text()
    assert "per pixel" in f.timings.label                      # the timing panel's title
    view.overlays.panel.legend.grab().save("/tmp/overlay_legend.png")
    choose(view, "")
    f = wait_frame(qtbot, view, "")
    assert not panel.legend.isVisible() and not panel.totals.isVisible()
    np.testing.assert_array_equal(f.rgba, picture)               # the picture, as before


def test_cpu_greys_lane_efficiency_with_the_reason(qtbot, view):
    panel = view.overlays.panel
    model = panel.combo.model()
    lanes = model.item(panel.combo.findData(ov.LANES))
    assert not lanes.isEnabled()
    assert "no warps on the CPU" in lanes.data(Qt.ItemDataRole.ToolTipRole)
    for name in ov.DEEP_ONLY:                        # a float64 frame: no deep steps
        item = model.item(panel.combo.findData(name))
        assert not item.isEnabled() and "only deep frames" in item.toolTip()
    assert model.item(panel.combo.findData(ov.ITERATIONS)).isEnabled()
    # chosen anyway (a script, or a choice kept from a deep view): the picture, and a note
    choose(view, ov.LANES)
    f = wait_frame(qtbot, view, "")
    assert "overlay" not in f.meta
    assert panel.note.isVisible() and "no warps on the CPU" in panel.note.text()


def test_the_shortcut_steps_through_the_overlays_with_a_meaning(qtbot, view):
    panel = view.overlays.panel
    view.canvas.setFocus()
    QTest.keySequence(view.canvas, "Ctrl+Shift+O")
    assert panel.current() == ov.ITERATIONS
    wait_frame(qtbot, view, ov.ITERATIONS)
    QTest.keySequence(view.canvas, "Ctrl+Shift+O")     # the only other one here: back to none
    assert panel.current() == ""
    wait_frame(qtbot, view, "")


def test_a_deep_view_offers_its_step_overlays(qtbot, scheduler, cpu_backend):
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    v = make_view(qtbot, scheduler, cpu_backend, iters=300)
    try:
        wait_frame(qtbot, v)
        assert v.go_to("-0.743643887037151", "0.131825904205330", "1e-20", 300)
        wait_frame(qtbot, v)
        panel = v.overlays.panel
        for name in ov.DEEP_ONLY:
            assert panel.enabled(name), name
        assert not panel.enabled(ov.LANES)
        choose(v, ov.STEPS)
        f = wait_frame(qtbot, v, ov.STEPS)
        assert "perturbation steps" in panel.totals.text()
        assert f.meta["overlay"].scale.log and panel.legend.isVisible()
        v.grab().save("/tmp/overlay_deep_view.png")
    finally:
        qtbot.waitUntil(lambda: not v.in_flight, timeout=WAIT_MS)
        v.shutdown()


@pytest.mark.gpu
def test_gpu_offers_and_draws_lane_efficiency(qtbot, scheduler, gpu_backend, simulated):
    v = make_view(qtbot, scheduler, gpu_backend, iters=20 if simulated else 200,
                  size=(24, 16) if simulated else (W, H), panel=False)
    v.model.number_type = "float64"     # a GPU with slow float64 would choose float32: no overlays
    try:
        wait_frame(qtbot, v)
        panel = v.overlays.panel
        assert panel.enabled(ov.LANES)
        choose(v, ov.LANES)
        f = wait_frame(qtbot, v, ov.LANES)
        assert "lane efficiency" in panel.totals.text() and "lane-iterations" in f.timings.label
        assert panel.legend.scale.unit == ov.UNITS[ov.LANES] and not panel.legend.isHidden()
    finally:
        qtbot.waitUntil(lambda: not v.in_flight, timeout=WAIT_MS)
        v.shutdown()
