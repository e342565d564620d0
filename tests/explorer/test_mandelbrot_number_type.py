"""The Mandelbrot view's number type, driven as a user would: the side panel's auto / float32 /
float64 choice reaching the frames, the type shown with its reason (a simulated GeForce through
number_type.RATES_SOURCE), and the comparison mode's window (CPU backend)."""
import dataclasses

import numpy as np
import pytest
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QApplication

from kernels.mandelbrot.requests import number_type as nt
from kernels.mandelbrot import renderer as m

from test_mandelbrot_view import make_view, wait_full_frame


@pytest.fixture
def view(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend)
    wait_full_frame(qtbot, v)
    yield v
    v.number_types.close()


def _choose(qtbot, v, wanted):
    box = v.number_types.box
    box.combo.setCurrentIndex(box.combo.findData(wanted))
    wait_full_frame(qtbot, v)


def test_forced_float32_reaches_the_frames_and_back(qtbot, view):
    box = view.number_types.box
    assert view.last_frame.meta["number_type"] == "float64"
    assert "Using float64 (auto)" in box.chosen.text()
    assert "as fast as float32" in box.chosen.toolTip()        # the CPU: no reason to leave it
    with qtbot.waitSignal(view.status_message, check_params_cb=lambda t, ms: "float32" in t):
        _choose(qtbot, view, "float32")
    wait_full_frame(qtbot, view)
    qtbot.waitUntil(lambda: view.last_frame.meta["number_type"] == "float32", timeout=60000)
    assert view.last_frame.request.number_type == "float32"
    assert "Using float32" in box.chosen.text() and "(auto)" not in box.chosen.text()
    assert view.readout.full_text().endswith("float32")
    assert "float32" in view.controls.precision.text()
    _choose(qtbot, view, "float64")
    qtbot.waitUntil(lambda: view.last_frame.meta["number_type"] == "float64", timeout=60000)


def test_auto_picks_float32_on_a_simulated_geforce_until_it_runs_out(qtbot, view, monkeypatch):
    monkeypatch.setattr(nt, "RATES_SOURCE", lambda backend: (64.0, 1.0))
    view.request_render()
    view.number_types.refresh()
    qtbot.waitUntil(lambda: view.last_frame.meta["number_type"] == "float32", timeout=60000)
    box = view.number_types.box
    assert "Using float32 (auto)" in box.chosen.text() and "1/64" in box.chosen.toolTip()
    w = view.canvas_size()[0]
    w32, _ = nt.run_out_widths(view.camera.state.center_re, view.camera.state.center_im, w)
    with qtbot.waitSignal(view.status_message, check_params_cb=lambda t, ms: "float64" in t):
        view.go_to(-0.75, 0.1, w32 / 4)
    qtbot.waitUntil(lambda: view.last_frame.meta["number_type"] == "float64", timeout=60000)
    assert "Using float64 (auto)" in box.chosen.text() and "runs out" in box.chosen.toolTip()


def test_comparison_marks_where_float32_departs(qtbot, view, cpu_backend):
    view.go_to(-0.743643887037151, 0.131825904205330, 2e-4)
    wait_full_frame(qtbot, view)
    qtbot.mouseClick(view.number_types.box.compare_btn, Qt.MouseButton.LeftButton)
    dialog = view.number_types.dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.comparison is not None, timeout=60000)
    c = dialog.comparison
    req = c.request
    # the marked pixels are those whose escape counts the two renderers give differently
    counts = [m.iteration_counts(m.Renderer(cpu_backend, number_type=t).render(
        dataclasses.replace(req, want_values=True, number_type=t)).values, req.max_iter)
        for t in ("float32", "float64")]
    np.testing.assert_array_equal(c.departs, counts[0] != counts[1])
    assert c.departed > 0
    assert "float32 departs" in dialog.summary.text() or "run out" in dialog.summary.text()
    w32, w64 = c.run_out()
    assert f"{w32:.3g}" in dialog.summary.text() and f"{w64:.3g}" in dialog.summary.text()
    marked = c.marked()
    assert (marked[c.departs] == (255, 0, 255, 255)).all()
    for key in ("f64", "f32", "marked"):
        assert not dialog.pictures[key].pixmap().isNull()
    dialog.grab().save("/tmp/float32_comparison.png")
    # a wide view: float32 is exact enough, and the dialog says so
    view.go_to(-0.5, 0.0, 3.0)
    wait_full_frame(qtbot, view)
    qtbot.mouseClick(dialog.refresh_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.comparison is not c, timeout=60000)
    assert "exact enough" in dialog.summary.text()
    assert dialog.comparison.departed_fraction < c.departed_fraction


def test_deep_view_uses_and_compares_float32_deltas(qtbot, view, monkeypatch):
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    # near c = i, as the deep GPU tests: perturbation format, BLA steps and rebases
    re_, im_ = "1.234567e-21", "0.999999999999999999999234568"
    view.go_to(re_, im_, "1e-20", 300)
    wait_full_frame(qtbot, view)
    box = view.number_types.box
    assert view.last_frame.meta["format"] == "perturbation"
    assert view.last_frame.meta["number_type"] == "float64"
    assert "Using float64 deltas (auto)" in box.chosen.text()
    monkeypatch.setattr(nt, "RATES_SOURCE", lambda backend: (64.0, 1.0))   # a GeForce's ratio
    view.number_types.refresh()
    view.request_render()
    qtbot.waitUntil(lambda: view.last_frame.meta["number_type"] == "float32", timeout=60000)
    assert "Using float32 deltas (auto)" in box.chosen.text()
    view.number_types.compare()
    dialog = view.number_types.dialog
    qtbot.waitUntil(lambda: dialog.comparison is not None, timeout=60000)
    c = dialog.comparison
    assert c.deep and c.float32_state() == "ok"
    assert c.departed_fraction <= 0.001
    assert "float32 deltas are exact enough" in dialog.summary.text()
    assert "extended exponents" in dialog.summary.text()


def test_a_portrait_view_is_compared_whole(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend, size=(300, 700), iters=40)
    wait_full_frame(qtbot, v)
    v.number_types.compare()
    dialog = v.number_types.dialog
    qtbot.waitUntil(lambda: dialog.comparison is not None, timeout=60000)
    QApplication.processEvents()
    h, w = dialog.comparison.rgba64.shape[:2]
    for pic in dialog.pictures.values():
        pix = pic.pixmap()
        assert max(pix.width(), pix.height()) <= 320          # shrunk into its box, both ways
        assert abs(pix.width() / pix.height() - w / h) < 0.02   # the view's shape, nothing cut
        assert pic.width() >= pix.width() and pic.height() >= pix.height()
    v.number_types.close()


def test_doubtful_deep_pixels_are_marked_until_asked_and_proved_in_exports(qtbot, view, tmp_path):
    """The box's 'Prove doubtful deep pixels' (P) makes the view's deep frames iterate the pixels
    float64 cannot place in double-double, as --render does; off (the default) they are marked
    and the readout counts them. An export proves them either way; a coarse preview never does."""
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    import os

    from services.location_file import location_options
    kf = os.path.join(os.path.dirname(__file__), "..", "..", "resources", "kf-5e227.kfr")
    opts = location_options(kf, (32, 32))
    re_, im_ = opts["center"].split(",")
    view.go_to(re_, im_, opts["width"], int(opts["iters"]))
    wait_full_frame(qtbot, view)
    assert view.last_frame.request.pixels == ""
    marked = view.last_frame.meta["stats"]["marked_pixels"]
    assert marked > 0 and f"{marked:,} pixels marked" in view.readout.full_text()
    box = view.number_types.box
    with qtbot.waitSignal(view.status_message, check_params_cb=lambda t, ms: "double-double" in t):
        box.prove.setChecked(True)
    qtbot.waitUntil(lambda: view.last_frame.request.pixels == "proved", timeout=120000)
    stats = view.last_frame.meta["stats"]
    assert stats["dd_pixels"] > 0 and stats["marked_pixels"] < marked
    w, h = view.canvas_size()
    coarse = view.model.frame_job(w, h)[0]
    assert getattr(coarse, "coarse", coarse).pixels in ("", "proved")
    if hasattr(coarse, "coarse"):
        assert coarse.coarse.pixels == "" and coarse.full.pixels == "proved"
    box.prove.setChecked(False)
    job = view.model.export_job(str(tmp_path / "x.png"), 64, 48)
    assert job.request.pixels == "proved"
