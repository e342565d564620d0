"""Deep zoom in the Mandelbrot view, driven as a user would (CPU backend, the synchronous
scheduler): the wheel zooms past float64 and the frames keep coming in the perturbation format,
a long frame can be cancelled, locations of hundreds of digits are pasted, opened from and saved
to Kalles Fraktaler files and exported, and bad input leaves the view as it was with a message
that says why (the limit named where there is one)."""
from decimal import Decimal

import numpy as np
import pyqtgraph as pg
import pytest
from PyQt6.QtCore import QPoint, QPointF, Qt
from PyQt6.QtGui import QWheelEvent
from PyQt6.QtWidgets import QApplication

from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.requests.request import DeepFrameRequest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from explorer.views.mandelbrot import MandelbrotView

W, H = 96, 72
WAIT_MS = 120_000
SEAHORSE = ("-0.743643887037151", "0.131825904205330")
KORMANYOS_300 = (loc.KORMANYOS_VERY_DEEP.center_re[:302], loc.KORMANYOS_VERY_DEEP.center_im[:303])


def make_view(qtbot, scheduler, backend, size=(W, H), iters=300):
    pg.setConfigOption("mouseRateLimit", -1)
    v = MandelbrotView(scheduler, backend)
    qtbot.addWidget(v)
    v.controls.hide()
    v.controls.set_iterations(iters)
    v.progressive = False
    v.resize(*size)
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


@pytest.fixture
def view(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend)
    wait_frame(qtbot, v)
    yield v
    qtbot.waitUntil(lambda: not v.in_flight and not v.exporting, timeout=WAIT_MS)
    v.shutdown()


def wheel(view, notches, pos=(W / 2, H / 2)):
    vp = view.canvas.viewport()
    p = QPointF(*pos)
    ev = QWheelEvent(p, vp.mapToGlobal(p), QPoint(0, 0), QPoint(0, 120 * notches),
                     Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                     Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(vp, ev)


def messages(view):
    out = []
    view.status_message.connect(lambda t, ms: out.append(t))
    return out


def test_wheel_zoom_past_1e15_keeps_rendering_in_perturbation(qtbot, view):
    assert view.go_to(*SEAHORSE, "1e-11", 10_000)
    first = wait_frame(qtbot, view)
    assert first.meta.get("format", "float64") == "float64" and "float64" in view.readout.text()
    msgs = messages(view)
    while view.camera.width > Decimal("1e-15"):
        before = view.camera.width
        wheel(view, 10)                                  # 1.25^10 ≈ 9.3 times closer
        assert view.camera.width < before                # never refused
    frame = wait_frame(qtbot, view)
    assert isinstance(frame.request, DeepFrameRequest) and frame.meta["format"] == "perturbation"
    assert "perturbation" in view.readout.text() and "perturbation" in view.controls.precision.text()
    assert any("Number format: perturbation" in m for m in msgs)
    assert len(np.unique(frame.rgba.reshape(-1, 4), axis=0)) > 10   # a picture, not a flat field
    wheel(view, 10)                                      # and on: the reference is reused
    again = wait_frame(qtbot, view)
    assert again.meta["reused"]


def test_a_pasted_300_digit_location_renders(qtbot, view):
    assert view.paste_location(f"center={KORMANYOS_300[0]},{KORMANYOS_300[1]} width=1e-280 iters=100000")
    frame = wait_frame(qtbot, view)
    assert frame.meta["format"] == "perturbation"
    assert Decimal(frame.request.center_re) == Decimal(KORMANYOS_300[0])     # every digit sent
    assert len(frame.request.center_re) >= 300
    assert len(np.unique(frame.rgba.reshape(-1, 4), axis=0)) > 10
    assert "(×2.9·10²⁸⁰)" in view.readout.text() or "10²⁸⁰" in view.readout.text()


def test_extended_format_below_1e290_is_shown(qtbot, view):
    m = loc.MINIBROT_424
    assert view.go_to(m.center_re, m.center_im, "3e-318", 2000)
    frame = wait_frame(qtbot, view)
    assert frame.meta["format"] == "extended" and "extended" in view.readout.text()


def test_esc_cancels_a_frame_while_its_reference_orbit_computes(qtbot, view):
    shown = view.last_frame
    msgs = messages(view)
    pressed = []

    def esc_on_reference(text, _ms):
        if "reference orbit" in text and not pressed:
            pressed.append(text)
            qtbot.keyClick(view.canvas, Qt.Key.Key_Escape)
    view.status_message.connect(esc_on_reference)
    # a bounded orbit (c = i is preperiodic) of 2,000,000 iterations: many seconds if not stopped
    assert view.go_to("0", "1", "1e-200", 2_000_000)
    qtbot.waitUntil(lambda: bool(pressed) and not view.in_flight, timeout=WAIT_MS)
    qtbot.wait(50)
    assert view.last_frame is shown                      # nothing of the cancelled frame was shown
    assert any("cancelled" in m for m in msgs)
    view.controls.set_iterations(200)                # the next change renders again
    assert wait_frame(qtbot, view).meta["format"] == "perturbation"


def test_deep_progress_only_goes_forward_and_the_frame_ends_in_a_status(qtbot, view):
    """Issue 24: the status went 100 % → 46 % → 91 % (reference, then pixels), and a long frame
    could end with an empty status bar."""
    import re
    msgs = messages(view)
    assert view.go_to("0", "1", "1e-200", 300_000)     # a bounded orbit: seconds of reference
    wait_frame(qtbot, view)
    shares = [int(m.group(1)) for m in (re.match(r"Deep frame (\d+)%", t) for t in msgs) if m]
    assert shares and shares == sorted(shares), msgs
    assert any("reference orbit" in t for t in msgs)
    assert re.match(r"Deep frame \(perturbation\) done in \d+\.\d s", msgs[-1]), msgs


@pytest.mark.parametrize("text, words", [
    ("center=abc,0 width=1e-30", "no centre"),
    ("center=nan,0 width=1e-30", "finite"),
    ("center=0." + "1" * 1_000_000 + ",0 width=1e-30", "1,000,0"),
    ("center=0,1 width=0", "positive"),
    ("center=0,1 width=1e-20000", "deepest"),
    ("center=0,1 width=1e-30 iters=20000000", "10,000,000"),
    ("Re: 0\nIm: 1\nZoom: 0\n", "positive magnification"),
])
def test_bad_pasted_locations_leave_the_view_unchanged(qtbot, view, text, words):
    before = view.camera.state
    msgs = messages(view)
    assert not view.paste_location(text)
    assert view.camera.state == before and not view.in_flight
    assert "Cannot paste location" in msgs[-1] and words in msgs[-1] and len(msgs[-1]) < 400


def test_a_reference_orbit_too_large_for_memory_is_refused_naming_the_limit(qtbot, view, monkeypatch):
    from kernels import buffers
    monkeypatch.setattr(buffers, "host_available_bytes", lambda: 2 ** 30)      # 1 GiB free
    msgs = messages(view)
    assert view.go_to("0", "1", "1e-100", 10_000_000)
    qtbot.waitUntil(lambda: any("Cannot render this view" in m for m in msgs), timeout=WAIT_MS)
    text = [m for m in msgs if "Cannot render this view" in m][-1]
    assert "10,000,000 iterations" in text and "GiB" in text and "lower the iterations" in text
    assert not view.in_flight


def test_kfr_save_and_open_round_trip(qtbot, view, tmp_path):
    assert view.go_to(*KORMANYOS_300, "1e-100", 30_000)
    wait_frame(qtbot, view)
    path = tmp_path / "place.kfr"
    assert view.save_kfr(str(path))
    text = path.read_bytes().decode()
    assert "\r\nIm: " in text and text.startswith("Re: ") and "Iterations: 30000" in text
    saved = view.camera.state
    qtbot.keyClick(view.canvas, Qt.Key.Key_Home)
    wait_frame(qtbot, view)
    assert view.open_kfr(str(path))
    s = view.camera.state
    assert s.center_re == saved.center_re and s.center_im == saved.center_im
    assert abs(s.width / saved.width - 1) < Decimal("1e-20")
    assert view.controls.iterations() == 30_000
    wait_frame(qtbot, view)
    msgs = messages(view)
    assert not view.open_kfr(str(tmp_path / "missing.kfr"))
    assert "Cannot open" in msgs[-1] and view.camera.state == s


def test_a_deep_view_exports_at_another_size(qtbot, view, tmp_path):
    assert view.go_to(*KORMANYOS_300, "1e-60", 30_000)
    wait_frame(qtbot, view)
    out = tmp_path / "deep.npy"
    with qtbot.waitSignal(view.export_finished, timeout=WAIT_MS):
        assert view.start_export(str(out), 40, 30, show_progress=False)
    values = np.load(out)
    assert values.shape == (30, 40) and values.min() > 1000        # deep counts, not float64's


@pytest.mark.gpu
def test_deep_frames_on_the_gpu(qtbot, scheduler, gpu_backend, simulated):
    v = make_view(qtbot, scheduler, gpu_backend, size=(12, 9) if simulated else (320, 240))
    wait_frame(qtbot, v)
    assert v.go_to(*KORMANYOS_300, "1e-100", 2000 if simulated else 40_000)
    frame = wait_frame(qtbot, v)
    assert frame.meta["format"] == "perturbation" and frame.timings.backend == "cuda"
    v.shutdown()


def test_readout_writes_deep_widths_and_cuts_long_centres():
    from explorer.views.mandelbrot_readout import power_of_ten, readout_text
    text = readout_text(KORMANYOS_300[0], KORMANYOS_300[1], Decimal("2.5e-1000"), 800, 1_000_000,
                        True, "extended")
    assert "width 2.5·10⁻¹⁰⁰⁰ (×1.4·10¹⁰⁰⁰)" in text and text.endswith("(auto)   extended")
    assert "…" in text and len(text) < 200
    assert power_of_ten(Decimal("9.996e-401")) == "1.0·10⁻⁴⁰⁰"
