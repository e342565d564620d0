"""Zoom to minibrot in the Mandelbrot view, driven as a user would (CPU backend, the synchronous
scheduler, a small canvas): N finds the minibrot of the view and goes there, Shift+N and a zoom
box look in the box (a deep one too), Esc cancels a long search and leaves the last frame on
show, a place without a minibrot says why; and the readout names a deep frame's reference orbit
(bits, points, and its period where the orbit carries one)."""
from decimal import Decimal

import pyqtgraph as pg
import pytest
from PyQt6.QtCore import Qt

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from explorer.views.mandelbrot_readout import readout_text, reference_text
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.reference.reference import ReferenceOrbit
from kernels.mandelbrot.requests.deep_request import add_decimal

from explorer.views.mandelbrot import MandelbrotView

P3 = Decimal("-1.7548776662466927600495088963585286918946")
W, H = 96, 72
WAIT_MS = 120_000


def make_view(qtbot, scheduler, backend, iters=300):
    pg.setConfigOption("mouseRateLimit", -1)
    v = MandelbrotView(scheduler, backend)
    qtbot.addWidget(v)
    v.controls.set_iterations(iters)
    v.progressive = False
    v.resize(W + v.controls.sizeHint().width(), H)
    v.show()
    qtbot.waitExposed(v)
    return v


def wait_frame(qtbot, v, timeout=WAIT_MS):
    """A full-size frame of the current camera on screen, nothing in flight."""
    def ok():
        t = v.model.shown
        assert t is not None and not t.coarse and not v.in_flight
        assert (t.w, t.h) == v.canvas_size() and t.state == v.camera.state
    qtbot.waitUntil(ok, timeout=timeout)
    return v.last_frame


def messages(view):
    out = []
    view.status_message.connect(lambda t, ms: out.append(t))
    return out


@pytest.fixture
def view(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend)
    wait_frame(qtbot, v)
    yield v
    qtbot.waitUntil(lambda: not v.in_flight and not v.minibrot.running, timeout=WAIT_MS)
    v.shutdown()


def search_ended(view):
    return lambda: not view.minibrot.running and bool(view.minibrot.found or view.minibrot.failed)


def test_n_zooms_to_the_minibrot_in_view(qtbot, view):
    assert view.go_to("-1.75", "0.001", "0.2", 300)     # wider than the minibrot's view: a zoom in
    wait_frame(qtbot, view)
    msgs = messages(view)
    view.canvas.setFocus()
    qtbot.keyClick(view.canvas, Qt.Key.Key_N)
    assert view.minibrot.running
    qtbot.waitUntil(search_ended(view), timeout=WAIT_MS)
    found = view.minibrot.found
    assert found is not None and found.period == 3
    s = view.camera.state
    assert abs(s.center_re - P3) < Decimal("1e-10") and abs(s.center_im) < Decimal("1e-10")
    assert s.width == found.width < Decimal("0.2")
    frame = wait_frame(qtbot, view)
    # the nucleus in the middle of the picture: its pixels are inside (the interior colour)
    h, w = frame.rgba.shape[:2]
    assert tuple(frame.rgba[h // 2, w // 2]) == tuple(view.model.colouring.interior)
    assert any("period 3" in m for m in msgs) and any("Minibrot found" in m for m in msgs)
    assert view.minibrot.button.toolTip() and "N" in view.minibrot.action.shortcut().toString()


def test_shift_n_then_a_box_finds_a_deep_minibrot(qtbot, view):
    m = loc.MINIBROT_424
    # a view 1e-316 wide a little off the period-424 nucleus: the box goes round the middle
    assert view.go_to(add_decimal(m.center_re, "2e-318"), m.center_im, "1e-316", 2000)
    wait_frame(qtbot, view)
    qtbot.keyClick(view.canvas, Qt.Key.Key_N, Qt.KeyboardModifier.ShiftModifier)
    assert view.minibrot.box_armed
    before = view.camera.state
    w, h = view.canvas_size()
    view.canvas.vb.box_zoom.emit(w / 2 - 10, h / 2 - 10, w / 2 + 10, h / 2 + 10)
    assert view.camera.state == before          # a minibrot's box, not a zoom
    qtbot.waitUntil(search_ended(view), timeout=WAIT_MS)
    found = view.minibrot.found
    assert found is not None and found.period == 424
    s = view.camera.state
    assert abs(s.center_re - Decimal(m.center_re)) < found.width / 1000
    assert abs(s.center_im - Decimal(m.center_im)) < found.width / 1000
    frame = wait_frame(qtbot, view)
    assert frame.meta["format"] == "extended" and "extended" in view.readout.text()
    assert "reference" in view.readout.full_text() and "bits" in view.readout.full_text()


def test_esc_cancels_a_long_search_and_keeps_the_last_frame(qtbot, view):
    # inside the main cardioid, in a disc too small to hold its nucleus: the orbit never
    # escapes, so the search would scan all 2,000,000 iterations
    assert view.go_to("-0.1", "0.1", "1e-9", 2_000_000)
    shown = wait_frame(qtbot, view)
    state = view.camera.state
    msgs = messages(view)
    pressed = []

    def esc_while_looking(text, _ms):
        if "looking for a period" in text and not pressed:
            pressed.append(text)
            qtbot.keyClick(view.canvas, Qt.Key.Key_Escape)
    view.status_message.connect(esc_while_looking)
    view.canvas.setFocus()
    qtbot.keyClick(view.canvas, Qt.Key.Key_N)
    qtbot.waitUntil(lambda: bool(pressed) and not view.minibrot.running, timeout=WAIT_MS)
    qtbot.wait(100)
    assert view.minibrot.failed == "cancelled" and view.minibrot.found is None
    assert view.camera.state == state and view.last_frame is shown
    assert any("cancelled" in m and "stays where it was" in m for m in msgs)


def test_no_minibrot_here_says_why(qtbot, view):
    assert view.go_to("0.3", "0.6", "0.004", 1000)
    wait_frame(qtbot, view)
    state = view.camera.state
    msgs = messages(view)
    assert view.minibrot.start_view()
    qtbot.waitUntil(search_ended(view), timeout=WAIT_MS)
    assert view.camera.state == state
    assert "escapes after" in view.minibrot.failed
    assert any(m.startswith("Zoom to minibrot: no minibrot found") for m in msgs)


def test_reference_text_names_bits_points_and_period():
    meta = {"reference_points": 671_046, "precision_bits": 3424, "reference_period": None}
    assert reference_text(meta) == "reference 3,424 bits, 671,046 points"
    assert reference_text(dict(meta, reference_period=139)).endswith("points, period 139")
    assert reference_text({}) is None and reference_text(None) is None
    # the pixels float64 deltas could not place, kept at the loop's value: said, never silent
    said = reference_text(dict(meta, stats={"marked_pixels": 825, "dd_pixels": 0}))
    assert said == "reference 3,424 bits, 671,046 points   825 pixels marked: float64 cannot place them"
    assert "marked" not in reference_text(dict(meta, stats={"marked_pixels": 0}))
    text = readout_text("-1.75", "0", Decimal("1e-50"), 800, 5000, True, "perturbation",
                        reference_text(dict(meta, reference_period=139)))
    assert text.endswith("perturbation   reference 3,424 bits, 671,046 points, period 139")


def test_the_readout_shows_the_period_of_an_orbit_that_carries_one(qtbot, view, monkeypatch):
    # an orbit carries `period`, None unless it stopped there (the frames do not ask it to stop
    # yet): one that says it did, at the period-139 nucleus
    extend = ReferenceOrbit.extend

    def extend_to_period(self, *args, **kwargs):
        out = extend(self, *args, **kwargs)
        self.period = 139
        return out
    monkeypatch.setattr(ReferenceOrbit, "extend", extend_to_period)
    m = loc.MINIBROT_139
    assert view.go_to(m.center_re, m.center_im, "4e-90", 3000)
    frame = wait_frame(qtbot, view)
    assert frame.meta["reference_period"] == 139
    assert "period 139" in view.readout.full_text()
    assert f"{frame.meta['reference_points']:,} points" in view.readout.full_text()
    monkeypatch.setattr(ReferenceOrbit, "extend", extend)
    assert view.go_to("-0.75", "0.1", "1e-20", 3000)        # a new orbit, without a period
    wait_frame(qtbot, view)
    assert "reference" in view.readout.full_text()
    wait_frame(qtbot, view)
    assert "period" not in view.readout.full_text()


def test_n_never_zooms_out_and_says_why(qtbot, view):
    # the period-6 component found here needs a view 0.0435 wide: more than this one
    assert view.go_to("-1.7690", "0.0", "0.02", 300)
    wait_frame(qtbot, view)
    before = view.camera.state
    notices = []
    view.notice.connect(notices.append)
    view.canvas.setFocus()
    qtbot.keyClick(view.canvas, Qt.Key.Key_N)
    qtbot.waitUntil(search_ended(view), timeout=WAIT_MS)
    assert view.minibrot.found is None and view.camera.state == before
    assert "period 6" in view.minibrot.failed and "wider than this one" in view.minibrot.failed
    assert notices and "zoom out to see it whole" in notices[-1]
