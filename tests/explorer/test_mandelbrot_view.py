"""The Mandelbrot view, driven as a user would: mouse and key events on the canvas, the side
panel's actions, frames arriving from the render scheduler (CPU backend; one GPU test)."""
from decimal import Decimal

import numpy as np
import pytest
import pyqtgraph as pg
from PyQt6.QtCore import QEvent, QPoint, QPointF, Qt
from PyQt6.QtGui import QMouseEvent, QWheelEvent
from PyQt6.QtWidgets import QApplication

from explorer.views.mandelbrot import MandelbrotView

W, H = 160, 120
ITERS = 40


def make_view(qtbot, scheduler, backend, size=(W, H), iters=ITERS, show=True):
    pg.setConfigOption("mouseRateLimit", -1)
    v = MandelbrotView(scheduler, backend)
    qtbot.addWidget(v)
    v.controls.hide()               # the canvas alone fills the view: its size is the frame size
    v.controls.set_iterations(iters)
    v.progressive = False
    v.resize(*size)
    if show:
        v.show()
        qtbot.waitExposed(v)
    return v


def wait_full_frame(qtbot, v, timeout=60000):
    """Wait until a full-size frame of the current camera is on screen."""
    def ok():
        t = v.model.shown
        assert t is not None and not t.coarse
        assert (t.w, t.h) == v.canvas_size() and t.state == v.camera.state
        assert not v.in_flight
    qtbot.waitUntil(ok, timeout=timeout)


@pytest.fixture
def view(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend)
    wait_full_frame(qtbot, v)
    return v


def mouse(widget, kind, pos, button=Qt.MouseButton.LeftButton, buttons=None,
          mods=Qt.KeyboardModifier.NoModifier):
    p = QPointF(*pos)
    if buttons is None:
        buttons = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseButtonRelease else button
    if kind == QEvent.Type.MouseMove:
        button = Qt.MouseButton.NoButton
    ev = QMouseEvent(kind, p, widget.mapToGlobal(p), button, buttons, mods)
    QApplication.sendEvent(widget, ev)


def drag(widget, a, b, button=Qt.MouseButton.LeftButton, mods=Qt.KeyboardModifier.NoModifier, steps=6):
    mouse(widget, QEvent.Type.MouseButtonPress, a, button, mods=mods)
    for i in range(1, steps + 1):
        t = i / steps
        mouse(widget, QEvent.Type.MouseMove, (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t),
              button, buttons=button, mods=mods)
    mouse(widget, QEvent.Type.MouseButtonRelease, b, button, mods=mods)


def test_first_show_compiles_then_displays_a_cpu_frame(qtbot, scheduler, cpu_backend, monkeypatch):
    from kernels.mandelbrot.frames import warm
    # the kernels in numba's disk cache: no preview first (tests/explorer/test_first_start_view.py)
    monkeypatch.setattr(warm, "missing", lambda parts: ())
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    got = []
    v.timings_ready.connect(got.append)
    with qtbot.waitSignal(v.status_message, check_params_cb=lambda t, ms: "Loading the kernels" in t):
        v.show()
    wait_full_frame(qtbot, v)
    assert got[0].get("compile") is not None                 # the warm-up is its own timing
    frame = v.last_frame
    assert frame.rgba.shape == (H, W, 4) and frame.rgba.dtype == np.uint8
    assert got[-1] is frame.timings and frame.timings.get("host") is not None
    assert np.shares_memory(v.canvas.image.image, frame.rgba)   # displayed without a copy


def test_row_zero_is_the_top_of_the_picture(qtbot, view):
    # centre 0.6i: c = -0.12 + 1.2i (outside the set) lies above the centre, -0.12 + 0i (inside,
    # black) below it; a picture upside down would show them the other way round
    view.go_to("-0.12", "0.6", 2.4, 60)
    wait_full_frame(qtbot, view)
    img = view.canvas.image.image
    (xa, ya), (xb, yb) = (view.camera.state.to_pixel(-0.12, im, W, H) for im in (1.2, 0.0))
    assert ya < H / 2 < yb
    assert img[int(ya), int(xa), :3].any()
    assert not img[int(yb), int(xb), :3].any()


def test_mouse_drag_pans_with_the_cursor(qtbot, view):
    vp = view.canvas.viewport()
    grabbed = view.camera.state.to_complex(60, 50, W, H)
    drag(vp, (60, 50), (95, 70))
    x, y = view.camera.state.to_pixel(*grabbed, W, H)
    assert x == pytest.approx(95, abs=0.01) and y == pytest.approx(70, abs=0.01)
    assert view.camera.history_depth == 1           # the whole drag is one history entry
    # the old frame moved along at once; the new one arrives only when the event loop runs
    assert view.model.shown.state != view.camera.state
    top_left = view.canvas.image.mapRectToParent(view.canvas.image.boundingRect()).topLeft()
    assert (top_left.x(), top_left.y()) == (pytest.approx(35, abs=0.01), pytest.approx(20, abs=0.01))
    wait_full_frame(qtbot, view)


def test_wheel_zooms_about_the_cursor(qtbot, view):
    vp = view.canvas.viewport()
    pos = QPointF(40, 90)
    under = view.camera.state.to_complex(40, 90, W, H)
    ev = QWheelEvent(pos, vp.mapToGlobal(pos), QPoint(0, 0), QPoint(0, 240),
                     Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                     Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(vp, ev)
    assert float(view.camera.width) == pytest.approx(3.5 / 1.25 ** 2)
    after = view.camera.state.to_complex(40, 90, W, H)
    assert abs(float(after[0] - under[0])) < 1e-12 and abs(float(after[1] - under[1])) < 1e-12
    wait_full_frame(qtbot, view)


def test_a_burst_of_wheel_steps_is_one_history_entry(qtbot, view):
    vp = view.canvas.viewport()
    for _ in range(3):
        pos = QPointF(80, 60)
        QApplication.sendEvent(vp, QWheelEvent(pos, vp.mapToGlobal(pos), QPoint(0, 0), QPoint(0, 120),
                                               Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                               Qt.ScrollPhase.NoScrollPhase, False))
    qtbot.waitUntil(lambda: not view.wheel_timer.isActive())
    assert view.camera.history_depth == 1 and not view.camera.in_gesture
    assert float(view.camera.width) == pytest.approx(3.5 / 1.25 ** 3)


def test_a_storm_of_moves_submits_one_frame_then_the_newest(qtbot, view):
    submitted = []
    real_submit = view.submit

    def counting_submit(fn, **kw):
        submitted.append(view.camera.state)
        return real_submit(fn, **kw)
    view.submit = counting_submit
    for _ in range(30):               # no event loop in between: a drag faster than any render
        view.canvas.vb.panned.emit(1.0, 0.5)   # a drag step, straight from the canvas
    assert len(submitted) == 1 and view.in_flight and view.model.dirty
    wait_full_frame(qtbot, view)
    assert len(submitted) == 2 and submitted[-1] == view.camera.state


def test_right_drag_draws_a_zoom_box(qtbot, view):
    vp = view.canvas.viewport()
    mid = view.camera.state.to_complex(70, 60, W, H)
    drag(vp, (40, 40), (100, 80), button=Qt.MouseButton.RightButton)
    assert float(view.camera.width) == pytest.approx(3.5 * max(60 / W, 40 / H))
    assert abs(float(view.camera.center[0] - mid[0])) < 1e-12
    assert view.camera.history_depth == 1
    state = view.camera.state
    drag(vp, (10, 10), (50, 40), mods=Qt.KeyboardModifier.ShiftModifier)   # Shift-drag too
    assert view.camera.width < state.width


def test_double_click_centres_on_the_point(qtbot, view):
    vp = view.canvas.viewport()
    target = view.camera.state.to_complex(30, 20, W, H)
    mouse(vp, QEvent.Type.MouseButtonPress, (30, 20))
    mouse(vp, QEvent.Type.MouseButtonRelease, (30, 20))
    mouse(vp, QEvent.Type.MouseButtonDblClick, (30, 20))
    mouse(vp, QEvent.Type.MouseButtonRelease, (30, 20))
    assert abs(float(view.camera.center[0] - target[0])) < 1e-12
    assert abs(float(view.camera.center[1] - target[1])) < 1e-12


def test_keys_pan_zoom_reset_and_go_back(qtbot, view):
    c = view.canvas
    home = view.camera.state
    qtbot.keyClick(c, Qt.Key.Key_Right)
    assert float(view.camera.center[0]) == pytest.approx(-0.75 + 0.35)
    qtbot.keyClick(c, Qt.Key.Key_Up)
    assert float(view.camera.center[1]) == pytest.approx(0.1 * 3.5 * H / W)
    qtbot.keyClick(c, Qt.Key.Key_Plus)
    assert float(view.camera.width) == pytest.approx(1.75)
    qtbot.keyClick(c, Qt.Key.Key_Minus)
    qtbot.keyClick(c, Qt.Key.Key_Minus)
    assert float(view.camera.width) == pytest.approx(7.0)
    qtbot.keyClick(c, Qt.Key.Key_Equal)
    assert float(view.camera.width) == pytest.approx(3.5)
    qtbot.keyClick(c, Qt.Key.Key_Home)
    assert view.camera.state == home
    qtbot.keyClick(c, Qt.Key.Key_Backspace)
    assert float(view.camera.width) == pytest.approx(3.5) and view.camera.state != home
    for _ in range(6):          # seven moves, seven history entries
        qtbot.keyClick(c, Qt.Key.Key_Backspace)
    assert view.camera.state == home
    with qtbot.waitSignal(view.status_message, check_params_cb=lambda t, ms: "back" in t):
        qtbot.keyClick(c, Qt.Key.Key_Backspace)
    wait_full_frame(qtbot, view)


def test_zero_size_skips_rendering_and_resumes(qtbot, view):
    view.controls.show()
    view.resize(400, 200)
    view.splitter.setSizes([0, 400])        # the user drags the canvas shut
    qtbot.waitUntil(lambda: view.canvas_size()[0] == 0)
    qtbot.waitUntil(lambda: not view.resize_timer.isActive())
    qtbot.keyClick(view.canvas, Qt.Key.Key_Plus)
    assert view.model.dirty and not view.in_flight            # wanted, but nothing was submitted
    view.splitter.setSizes([120, 280])
    qtbot.waitUntil(lambda: view.canvas_size()[0] > 0)
    wait_full_frame(qtbot, view)
    assert view.last_frame.rgba.shape[:2] == view.canvas_size()[::-1]
    assert float(view.camera.width) == pytest.approx(1.75)


def test_pasting_garbage_leaves_the_view_unchanged(qtbot, view):
    before = view.camera.state
    for text in ("garbage", "center=nan,0 width=1", "center=0,0 width=inf iters=10", ""):
        with qtbot.waitSignal(view.status_message,
                              check_params_cb=lambda t, ms: t.startswith("Cannot paste")):
            assert not view.paste_location(text)
        assert view.camera.state == before
    QApplication.clipboard().setText("center=-0.7436438870371,0.1318259043 width=0.01 iters=77")
    assert view.paste_location()
    assert view.camera.center == (Decimal("-0.7436438870371"), Decimal("0.1318259043"))
    assert view.controls.iterations() == 77
    view.copy_location()
    assert QApplication.clipboard().text().startswith("center=-0.7436438870371,0.1318259043 width=0.01")


def test_bookmarks_load_and_fly_there(qtbot, view):
    items = view.controls.bookmarks
    names = [items.item(i).text() for i in range(items.count())]
    for famous in ("Full set", "Seahorse valley", "Elephant valley", "Triple spiral valley",
                   "Mini-brot", "Double spiral", "Scepter valley", "Tendrils"):
        assert famous in names
    item = items.item(names.index("Mini-brot"))
    items.itemClicked.emit(item)
    assert float(view.camera.center[0]) == pytest.approx(-1.7549)
    assert float(view.camera.width) == pytest.approx(0.04)


def test_colour_changes_apply_live(qtbot, view):
    first = view.last_frame.rgba.copy()
    view.controls.palette.setCurrentText("viridis")
    qtbot.waitUntil(lambda: view.last_frame.request.palette == "viridis" and not view.in_flight)
    assert not np.array_equal(view.last_frame.rgba, first)


def test_hover_reads_the_coordinate_and_the_count(qtbot, view):
    with qtbot.waitSignal(view.hover_value, timeout=20000) as sig:
        mouse(view.canvas.viewport(), QEvent.Type.MouseMove, (5, 5), Qt.MouseButton.NoButton,
              buttons=Qt.MouseButton.NoButton)
    row, col, value = sig.args
    assert (row, col) == (5, 5) and 0 < value < ITERS      # a corner pixel escapes


def test_export_png_has_the_requested_size(qtbot, view, tmp_path):
    from PIL import Image
    path = str(tmp_path / "m.png")
    with qtbot.waitSignal(view.export_finished, timeout=60000) as sig:
        assert view.start_export(path, 70, 30)
    assert sig.args == [path]
    assert Image.open(path).size == (70, 30)
    assert view.exports.dialog is None


def test_escape_cancels_a_zoom_box(qtbot, view):
    vp = view.canvas.viewport()
    before = view.camera.state
    mouse(vp, QEvent.Type.MouseButtonPress, (20, 20), Qt.MouseButton.RightButton)
    for x in (30, 40, 60):
        mouse(vp, QEvent.Type.MouseMove, (x, x), Qt.MouseButton.RightButton,
              buttons=Qt.MouseButton.RightButton)
    qtbot.keyClick(view.canvas, Qt.Key.Key_Escape)
    mouse(vp, QEvent.Type.MouseButtonRelease, (60, 60), Qt.MouseButton.RightButton)
    assert view.camera.state == before


def test_cpu_renders_a_coarse_frame_first(qtbot, view):
    view.progressive = True
    shapes = []
    view.frame_displayed.connect(lambda f, ms: shapes.append(f.rgba.shape[:2]))
    qtbot.keyClick(view.canvas, Qt.Key.Key_Plus)
    wait_full_frame(qtbot, view)
    assert shapes[0] == (H // 4, W // 4) and shapes[-1] == (H, W)


def test_coarse_frame_fills_the_canvas(qtbot, view):
    view.progressive = True
    seen = []

    def on_frame(frame, ms):
        if frame.rgba.shape[:2] == (H // 4, W // 4):
            r = view.canvas.image.mapRectToParent(view.canvas.image.boundingRect())
            seen.append((r.x(), r.y(), r.width(), r.height()))
    view.frame_displayed.connect(on_frame)
    qtbot.keyClick(view.canvas, Qt.Key.Key_Minus)
    wait_full_frame(qtbot, view)
    assert seen and seen[0] == (pytest.approx(0), pytest.approx(0), pytest.approx(W), pytest.approx(H))


def test_interior_colour_and_ctrl_c(qtbot, view):
    view.controls.set_interior((0, 255, 0, 255))
    qtbot.waitUntil(lambda: view.last_frame.request.interior == (0, 255, 0, 255) and not view.in_flight)
    x, y = view.camera.state.to_pixel(-0.2, 0.0, W, H)
    assert tuple(view.last_frame.rgba[int(y), int(x)]) == (0, 255, 0, 255)
    QApplication.clipboard().clear()
    view.canvas.setFocus()
    qtbot.keyClick(view.canvas, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text().startswith("center=-0.75,0 width=3.5 iters=40")


def test_ctrl_e_exports_at_the_size_chosen_in_the_dialog(qtbot, view, tmp_path, monkeypatch):
    from PIL import Image
    from explorer.views import mandelbrot_export
    path = str(tmp_path / "chosen.png")
    monkeypatch.setattr(mandelbrot_export, "ask_export",
                        lambda parent, size, gpus=(): (path, (40, 30), None))
    view.canvas.setFocus()
    with qtbot.waitSignal(view.export_finished, timeout=60000):
        qtbot.keyClick(view.canvas, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert Image.open(path).size == (40, 30)


def test_export_dialog_defaults_and_presets(qtbot):
    from explorer.views.mandelbrot_export import ExportDialog
    d = ExportDialog(None, window_size=(123, 45), path="/tmp/out")
    qtbot.addWidget(d)
    assert d.choice() == ("/tmp/out.png", (3840, 2160), None)
    assert not d.gpus.isEnabled() and "CPU" in d.gpus.currentText()
    d.preset.setCurrentText("Window size")
    assert d.choice()[1] == (123, 45)
    d.path.setText("/tmp/raw.npy")
    assert d.choice()[0] == "/tmp/raw.npy"


def test_export_can_be_cancelled(qtbot, view, tmp_path):
    done = []
    view.export_finished.connect(done.append)
    with qtbot.waitSignal(view.export_failed) as sig:
        view.start_export(str(tmp_path / "big.png"), 2000, 1500)
        view.cancel_export()
    assert sig.args == ["cancelled"] and view.exports.dialog is None
    qtbot.waitUntil(lambda: not view.scheduler.core.drain(), timeout=30000)
    assert done == []


def test_window_sized_view_shows_the_whole_set(qtbot, scheduler, cpu_backend, tmp_path):
    v = MandelbrotView(scheduler, cpu_backend)
    qtbot.addWidget(v)
    v.controls.set_iterations(200)
    v.resize(900, 600)
    v.show()
    qtbot.waitExposed(v)
    wait_full_frame(qtbot, v)
    w, h = v.canvas_size()
    assert w > 2 * v.controls.width()               # the picture gets most of the room
    shot = v.canvas.grab().toImage()
    assert (shot.width(), shot.height()) == (w, h)
    mid = shot.pixelColor(*(int(p) for p in v.camera.state.to_pixel(-0.2, 0.0, w, h)))
    corner = shot.pixelColor(2, 2)
    assert (mid.red(), mid.green(), mid.blue()) == (0, 0, 0)      # inside the set
    assert corner.red() + corner.green() + corner.blue() > 0      # outside it
    assert v.grab().save(str(tmp_path / "mandelbrot_view.png"))


@pytest.mark.gpu
def test_gpu_frame_is_displayed(qtbot, scheduler, gpu_backend, simulated):
    size = (16, 12) if simulated else (W, H)
    v = make_view(qtbot, scheduler, gpu_backend, size=size, iters=20 if simulated else ITERS)
    wait_full_frame(qtbot, v, timeout=120000)
    assert v.last_frame.rgba.shape == (size[1], size[0], 4)
    assert v.last_frame.timings.backend == "cuda"


@pytest.mark.gpu
def test_switching_backend_compiles_then_renders(qtbot, scheduler, cpu_backend, gpu_backend, simulated):
    size = (16, 12) if simulated else (W, H)
    v = make_view(qtbot, scheduler, cpu_backend, size=size, iters=20)
    wait_full_frame(qtbot, v)
    assert v.last_frame.timings.backend == "cpu"
    with qtbot.waitSignal(v.status_message, check_params_cb=lambda t, ms: "Compiling" in t):
        v.set_backend(gpu_backend)
    qtbot.waitUntil(lambda: v.last_frame.timings.backend == "cuda" and not v.in_flight, timeout=120000)
    wait_full_frame(qtbot, v)


def test_export_dialog_lists_the_gpus_and_offers_all(qtbot):
    from explorer.views.mandelbrot_export import ExportDialog
    from kernels.spread import GpuInfo
    gpus = [GpuInfo(0, "NVIDIA H200", 141.0), GpuInfo(1, "NVIDIA H200", 141.0)]
    d = ExportDialog(None, path="/tmp/out.png", gpus=gpus)
    qtbot.addWidget(d)
    labels = [d.gpus.itemText(i) for i in range(d.gpus.count())]
    assert labels == ["All 2 GPUs", "GPU 0: NVIDIA H200, 141 GiB", "GPU 1: NVIDIA H200, 141 GiB"]
    assert d.choice()[2] == (0, 1)
    d.gpus.setCurrentIndex(2)
    assert d.choice()[2] == (1,)


@pytest.mark.gpu
def test_an_export_spread_over_gpus_equals_one_on_the_view_gpu(qtbot, scheduler, gpu_backend,
                                                               tmp_path, simulated):
    """Bands on every GPU give the same file as the export on the view's own GPU."""
    from PIL import Image
    if simulated:   # minutes there; the pool's GPU path is covered by tests/kernels/test_spread.py
        pytest.skip("the window's export on GPUs needs a real GPU (the simulator takes minutes)")
    v = make_view(qtbot, scheduler, gpu_backend)
    wait_full_frame(qtbot, v)
    size = (1200, 900)
    gpus = tuple(g.index for g in v.export_gpus())
    paths = [str(tmp_path / "one.png"), str(tmp_path / "spread.png")]
    for path, chosen in zip(paths, (None, gpus)):
        with qtbot.waitSignal(v.export_finished, timeout=120000):
            assert v.start_export(path, *size, show_progress=False, gpus=chosen)
    one, spread = (np.asarray(Image.open(p)) for p in paths)
    assert one.shape == (size[1], size[0], 4) and np.array_equal(one, spread)
