"""The distance heatmap view: renders on show, click vs drag, hover readout, units, strategies."""
import numpy as np
import pyqtgraph as pg
import pytest
from PyQt6.QtCore import QEvent, QPoint, QPointF, Qt
from PyQt6.QtGui import QMouseEvent
from PyQt6.QtWidgets import QApplication, QLabel, QMainWindow, QTabWidget

from explorer.views.distance import HOVER_HINT, DistanceView, format_lat_lon
from explorer.views.distance_map import coastline_xy, ring_step, split_at_jumps
from kernels.distance import renderer as kdr
from kernels.distance import request as kd

pg.setConfigOption("mouseRateLimit", -1)
WAIT_MS = 20000


def make_view(qtbot, scheduler, backend, size=(640, 400), max_side=None):
    view = DistanceView(scheduler, backend)
    qtbot.addWidget(view)
    if max_side:
        view.max_side = max_side
    view.resize(*size)
    with qtbot.waitSignal(view.frame_shown, timeout=WAIT_MS):
        view.show()
    wait_idle(qtbot, view)
    return view


def wait_idle(qtbot, view):
    """Until the newest view state is on screen (resizes may queue one more frame)."""
    qtbot.waitUntil(lambda: not view.in_flight and not view._dirty
                    and not view._render_timer.isActive(), timeout=WAIT_MS)


def send_mouse(widget, kind, pos, button):
    buttons = Qt.MouseButton.LeftButton if kind != QEvent.Type.MouseButtonRelease else Qt.MouseButton.NoButton
    global_pos = QPointF(widget.mapToGlobal(pos))
    ev = QMouseEvent(kind, QPointF(pos), global_pos, button, buttons, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, ev)


def viewport_pos(view, lon, lat) -> QPoint:
    scene = view.canvas.vb.mapViewToScene(QPointF(lon, lat))
    return view.canvas.mapFromScene(scene)


@pytest.fixture
def cpu_view(qtbot, scheduler, cpu_backend):
    return make_view(qtbot, scheduler, cpu_backend)


def test_first_frame_covers_the_visible_map(cpu_view):
    f = cpu_view.last_frame
    lat0, lat1, lon0, lon1 = f.request.bounds
    assert (lat0, lat1) == (-90.0, 90.0) and lon0 < -100 and lon1 > 100
    w, h = f.request.size
    assert f.rgba.shape == (h, w, 4) and w > 200 and h > 100
    assert f.meta["vmax"] == pytest.approx(kd.HALF_CIRCUMFERENCE_KM)
    assert cpu_view.canvas.bar_label() == "distance (km)"
    assert cpu_view.canvas.bar.levels() == pytest.approx((0.0, kd.HALF_CIRCUMFERENCE_KM))
    # row 0 is north: the image is drawn from lat1 at the top down to lat0
    rect = cpu_view.canvas.image.mapRectToParent(cpu_view.canvas.image.boundingRect())
    assert rect.top() == pytest.approx(-90.0) and rect.bottom() == pytest.approx(90.0)
    assert cpu_view.canvas.image.mapToParent(QPointF(0, 0)).y() == pytest.approx(90.0)


def test_coastlines_rings_and_marker_are_drawn(cpu_view):
    xs, _ = cpu_view.canvas.coast.getData()
    assert xs is not None and np.count_nonzero(np.isfinite(xs)) > 3 * 5000
    rx, ry = cpu_view.canvas.rings.getData()
    finite = np.isfinite(rx)
    assert finite.sum() > 100
    d = kd.distance_km(*cpu_view.ref, ry[finite], rx[finite])
    step = ring_step(kd.HALF_CIRCUMFERENCE_KM)
    assert step == 1000.0
    np.testing.assert_allclose(d / step, np.round(d / step), atol=1e-6)
    assert "1000 km" in cpu_view.rings_label.text()
    labels = cpu_view.canvas.ring_label_texts()
    assert labels and all(t.endswith(" km") for t in labels)
    assert all(float(t.split()[0]) % step == 0 for t in labels)
    mx, my = cpu_view.canvas.marker.getData()
    assert 0.0 - 0.1278 in list(mx) and my[0] == pytest.approx(51.5074)


def test_click_sets_the_reference_and_rerenders(qtbot, cpu_view):
    pos = viewport_pos(cpu_view, -74.006, 40.7128)   # New York
    with qtbot.waitSignal(cpu_view.frame_shown, timeout=WAIT_MS) as sig:
        qtbot.mouseClick(cpu_view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    lat, lon = cpu_view.ref
    assert lat == pytest.approx(40.7128, abs=1.0) and lon == pytest.approx(-74.006, abs=1.0)
    wait_idle(qtbot, cpu_view)
    assert cpu_view.last_frame.request.ref == cpu_view.ref
    assert sig.args[0].request.ref == cpu_view.ref


def test_a_drag_pans_without_moving_the_reference(qtbot, cpu_view):
    before_ref = cpu_view.ref
    before_range = cpu_view.canvas.vb.viewRange()[0]
    vp = cpu_view.canvas.viewport()
    start = viewport_pos(cpu_view, 0.0, 0.0)
    px = cpu_view.canvas.vb.viewPixelSize()[0]
    send_mouse(vp, QEvent.Type.MouseButtonPress, start, Qt.MouseButton.LeftButton)
    for dx in (10, 40, 80, 120):
        send_mouse(vp, QEvent.Type.MouseMove, start + QPoint(dx, 0), Qt.MouseButton.NoButton)
    send_mouse(vp, QEvent.Type.MouseButtonRelease, start + QPoint(120, 0), Qt.MouseButton.LeftButton)
    assert cpu_view.ref == before_ref
    after_range = cpu_view.canvas.vb.viewRange()[0]
    # dragged 120 px east: the view now shows that much further west
    assert after_range[0] == pytest.approx(before_range[0] - 120 * px, rel=0.05)
    wait_idle(qtbot, cpu_view)
    assert cpu_view.last_frame.request.bounds[2] == pytest.approx(after_range[0])


def test_hover_reads_out_the_distance(qtbot, cpu_view):
    messages = []
    cpu_view.status_message.connect(lambda text, ms: messages.append(text))
    pos = viewport_pos(cpu_view, -74.006, 40.7128)
    qtbot.mouseMove(cpu_view.canvas.viewport(), pos)
    qtbot.waitUntil(lambda: bool(cpu_view.hover_text), timeout=WAIT_MS)
    p = cpu_view.canvas.vb.mapSceneToView(cpu_view.canvas.mapToScene(pos))
    expected = kd.distance_km(*kd.LONDON, p.y(), p.x())
    assert f"{expected:,.1f} km" in cpu_view.hover_text
    assert " N, " in cpu_view.hover_text and " W" in cpu_view.hover_text
    assert messages and messages[-1] == cpu_view.hover_text
    assert cpu_view.readout.text() == cpu_view.hover_text


def test_the_hover_line_follows_a_click_and_the_unit_under_a_still_mouse(qtbot, cpu_view):
    """The report: after a click or U the line still named the old reference and unit."""
    messages = []
    cpu_view.status_message.connect(lambda text, ms: messages.append(text))
    # (a mouse already where it is sent makes no move event: not the other tests' New York)
    pos = viewport_pos(cpu_view, -43.17, -22.91)            # Rio de Janeiro
    qtbot.mouseMove(cpu_view.canvas.viewport(), pos)
    qtbot.waitUntil(lambda: "from 51.507° N" in cpu_view.hover_text, timeout=WAIT_MS)
    before = cpu_view.hover_text
    with qtbot.waitSignal(cpu_view.frame_shown, timeout=WAIT_MS):
        qtbot.mouseClick(cpu_view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    lat, lon = cpu_view.ref
    assert cpu_view.hover_text != before
    assert cpu_view.hover_text.endswith(f"from {format_lat_lon(lat, lon)}")
    assert ": 0.000 km from" in cpu_view.hover_text      # the mouse is on the new reference
    assert cpu_view.readout.text() == cpu_view.hover_text == messages[-1]
    wait_idle(qtbot, cpu_view)
    cpu_view.next_unit()                                    # what U does
    assert cpu_view.unit != "km" and cpu_view.hover_text.split(": ")[1].split()[1] == cpu_view.unit
    assert cpu_view.readout.text() == cpu_view.hover_text == messages[-1]
    wait_idle(qtbot, cpu_view)


def test_the_hover_line_leaves_the_status_bar_with_the_tab(qtbot, scheduler, cpu_backend):
    """The report: the distance readout stayed in the status bar on the throughput tab."""
    win = QMainWindow()
    qtbot.addWidget(win)
    tabs = QTabWidget()
    view = DistanceView(scheduler, cpu_backend)
    other = QLabel("another view")
    tabs.addTab(view, "distance")
    tabs.addTab(other, "throughput")
    win.setCentralWidget(tabs)
    view.status_message.connect(win.statusBar().showMessage)
    win.resize(700, 500)
    with qtbot.waitSignal(view.frame_shown, timeout=WAIT_MS):
        win.show()
    wait_idle(qtbot, view)
    qtbot.mouseMove(view.canvas.viewport(), viewport_pos(view, 2.35, 48.86))     # Paris
    qtbot.waitUntil(lambda: bool(view.hover_text), timeout=WAIT_MS)
    assert win.statusBar().currentMessage() == view.hover_text
    tabs.setCurrentWidget(other)
    assert win.statusBar().currentMessage() == "" and view.readout.text() == HOVER_HINT
    # a message that is not the hover line is left alone
    tabs.setCurrentWidget(view)
    win.statusBar().showMessage("Switched to the CPU")
    tabs.setCurrentWidget(other)
    assert win.statusBar().currentMessage() == "Switched to the CPU"
    view.shutdown()


def test_first_look_readable_ring_labels_and_a_foot_that_says_what_to_do(cpu_view):
    """Seen at 800×600: an empty readout told nothing, the coastline credit crowded it out, and
    ring labels over the dark end of the palette were grey boxes."""
    assert cpu_view.readout.text() == HOVER_HINT
    cpu_view.resize(800, 600)
    QApplication.processEvents()
    assert cpu_view.readout.width() >= cpu_view.readout.fontMetrics().horizontalAdvance(HOVER_HINT)
    labels = [t for t in cpu_view.canvas._ring_labels if t.isVisible()]
    assert labels and all(t.fill.color().alpha() >= 200 for t in labels)


def test_unit_switch_relabels_the_colour_bar(qtbot, cpu_view):
    with qtbot.waitSignal(cpu_view.frame_shown, timeout=WAIT_MS):
        cpu_view.set_unit("nm")
    assert cpu_view.canvas.bar_label() == "distance (nm)"
    wait_idle(qtbot, cpu_view)
    f = cpu_view.last_frame
    assert f.request.unit == "nm" and f.meta["vmax"] == pytest.approx(kd.HALF_CIRCUMFERENCE_KM / 1.852)
    assert cpu_view.canvas.bar.levels()[1] == pytest.approx(f.meta["vmax"])
    assert "nm" in cpu_view.rings_label.text()
    assert all(t.endswith(" nm") for t in cpu_view.canvas.ring_label_texts())
    cpu_view.next_unit()
    assert cpu_view.unit == "mi" and cpu_view.canvas.bar_label() == "distance (mi)"
    wait_idle(qtbot, cpu_view)


def test_strategy_selector_says_it_applies_to_the_gpu_on_cpu(cpu_view):
    assert not cpu_view.strategy_combo.isEnabled()
    assert "CPU" in cpu_view.strategy_combo.toolTip()
    assert "GPU only" in cpu_view.strategy_label.text()
    assert cpu_view.last_frame.meta["strategy"] == "cpu-twin"
    assert cpu_view.last_frame.timings.bytes == {"h2d": 0, "d2h": 0}


def test_every_frame_reports_timings_with_display_time(qtbot, cpu_view):
    with qtbot.waitSignal(cpu_view.timings_ready, timeout=WAIT_MS) as sig:
        cpu_view.set_reference(-33.87, 151.21)
    t = sig.args[0]
    assert t.phases_ms["host"] is not None and t.phases_ms["kernel"] is not None


def test_zoom_rerenders_the_visible_box_with_finer_rings(qtbot, cpu_view):
    with qtbot.waitSignal(cpu_view.frame_shown, timeout=WAIT_MS):
        cpu_view.canvas.vb.setRange(xRange=(-10.0, 10.0), yRange=(45.0, 58.0), padding=0.0)
    wait_idle(qtbot, cpu_view)
    lat0, lat1, lon0, lon1 = cpu_view.last_frame.request.bounds
    assert lat0 > 40 and lat1 < 62 and lon0 > -30 and lon1 < 30
    step = float(cpu_view.rings_label.text().split()[2])
    assert step <= 200
    # the view never shows beyond the poles
    cpu_view.canvas.vb.setRange(yRange=(60.0, 120.0), padding=0.0)
    assert cpu_view.canvas.vb.viewRange()[1][1] <= 90.0 + 1e-6
    cpu_view.show_world()
    wait_idle(qtbot, cpu_view)
    assert cpu_view.last_frame.request.bounds[:2] == (-90.0, 90.0)


def test_a_failing_render_shows_a_plain_error(qtbot, cpu_view, monkeypatch):
    def broken(self, request, cancel=None):
        raise ValueError("the map exploded")
    monkeypatch.setattr(kdr.Renderer, "render", broken)
    with qtbot.waitSignal(cpu_view.error_message, timeout=WAIT_MS) as sig:
        cpu_view.set_reference(0.0, 0.0)
    assert "the map exploded" in sig.args[0]


def test_helpers():
    xs, ys = coastline_xy()
    assert np.nanmin(ys) >= -90 and np.nanmax(ys) <= 90
    lons, lats = split_at_jumps(np.array([170.0, 179.0, -179.0, -170.0]), np.zeros(4))
    assert np.isnan(lons[2]) and len(lons) == 5
    assert ring_step(1000.0) in (50.0, 100.0)


# ---- the GPU backend (real, or the simulator with tiny frames) --------------------------------
@pytest.mark.gpu
def test_switching_strategy_changes_the_bytes_copied_in(qtbot, scheduler, gpu_backend, simulated):
    view = make_view(qtbot, scheduler, gpu_backend, size=(360, 240), max_side=16 if simulated else None)
    assert view.strategy_combo.isEnabled() and view.strategy == "device-mesh"
    reported = []
    view.timings_ready.connect(reported.append)
    strategies = ["host-mesh", "device-mesh"] if simulated else ["host-mesh", "broadcast", "device-mesh"]
    seen = {}
    for s in strategies:
        with qtbot.waitSignal(view.frame_shown, timeout=WAIT_MS):
            view.set_strategy(s)
        wait_idle(qtbot, view)
        f = view.last_frame
        assert f.request.strategy == s and f.meta["strategy"] == s
        seen[s] = (f.request.size, reported[-1].bytes["h2d"], reported[-1].bytes["d2h"])
    (w, h), h2d, d2h = seen["host-mesh"]
    assert h2d == 32 * w * h and d2h == 4 * w * h
    (w, h), h2d, _ = seen["device-mesh"]
    assert h2d == 0
    if "broadcast" in seen:
        (w, h), h2d, _ = seen["broadcast"]
        assert h2d == 16 * w * h + 24
    if simulated:
        assert not view.strategy_combo.model().item(kd.STRATEGIES.index("broadcast")).isEnabled()


@pytest.mark.gpu
def test_switching_backend_enables_the_strategy_selector(qtbot, scheduler, cpu_backend, gpu_backend, simulated):
    view = make_view(qtbot, scheduler, cpu_backend, size=(360, 240), max_side=16 if simulated else None)
    assert not view.strategy_combo.isEnabled()
    with qtbot.waitSignal(view.frame_shown, timeout=WAIT_MS) as sig:
        view.set_backend(gpu_backend)
    assert view.strategy_combo.isEnabled() and view.strategy_label.text() == "&Strategy:"
    assert sig.args[0].meta["strategy"] == "device-mesh"
    view.set_strategy("broadcast")
    assert view.strategy == ("device-mesh" if simulated else "broadcast")
    wait_idle(qtbot, view)
