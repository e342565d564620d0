"""What a new user meets in the first hour of the window: keys that never clash, the whole world
on the distance map, the reason for the CPU kept in sight, and where the Mandelbrot picture looks."""
import pytest
from PyQt6.QtCore import QPoint, QSettings, Qt
from PyQt6.QtGui import QAction, QKeySequence, QShortcut
from PyQt6.QtWidgets import QAbstractButton, QApplication, QLabel, QMenu, QMenuBar, QToolBar, QWidget

from explorer.app import MainWindow
from explorer.views.distance import DistanceView
from explorer.views.mandelbrot import MandelbrotView
from explorer.views.mandelbrot_readout import power_of_ten, readout_text
from kernels import backend

WAIT_MS = 20000


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def no_gpu(monkeypatch):
    st = backend.CudaStatus(False, "no CUDA-capable GPU was found")
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    return st


def window(qtbot, settings, view=None, size=(1500, 900)):
    w = MainWindow("cpu", view, settings=settings, synchronous=True)
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    return w


# ---------------------------------------------------------------- shortcuts

def _key_bindings(win):
    """(key text, context, the widgets that carry it, what it is) for every key of the window:
    QShortcuts, QActions, and the Alt+letter mnemonics of labels, buttons and menus."""
    out = []
    for sc in win.findChildren(QShortcut):
        for seq in sc.keys():
            out.append((seq.toString(), sc.context(), [sc.parent()], f"QShortcut {seq.toString()}"))
    for act in win.findChildren(QAction):
        # an action lives where it was added: a menu of the menu bar or a toolbar is the window's
        owners = []
        for obj in act.associatedObjects():
            if isinstance(obj, (QMenu, QMenuBar, QToolBar)):
                owners.append(win)
            elif isinstance(obj, QWidget):
                owners.append(obj)
        for seq in act.shortcuts():
            out.append((seq.toString(), act.shortcutContext(), owners, f"action {act.text()!r}"))
    for widget in win.findChildren(QWidget):
        if isinstance(widget, QLabel) and widget.buddy() is not None:
            text = widget.text()
        elif isinstance(widget, QAbstractButton):
            text = widget.text()
        else:
            continue
        seq = QKeySequence.mnemonic(text)
        if not seq.isEmpty():
            out.append((seq.toString(), Qt.ShortcutContext.WindowShortcut, [widget],
                        f"mnemonic of {type(widget).__name__} {text!r}"))
    for menu_action in win.menuBar().actions():
        seq = QKeySequence.mnemonic(menu_action.text())
        if not seq.isEmpty():
            out.append((seq.toString(), Qt.ShortcutContext.WindowShortcut, [win],
                        f"menu {menu_action.text()!r}"))
    return out


def _active(context, owners, focus, win) -> bool:
    """Whether Qt would consider a key with this context and these widgets when `focus` has
    the keyboard focus (the rules of Qt's shortcut map: a hidden widget's keys never fire)."""
    for owner in owners:
        if owner is None or not owner.isVisible() or not owner.isEnabled():
            continue
        if context in (Qt.ShortcutContext.WindowShortcut, Qt.ShortcutContext.ApplicationShortcut):
            if owner.window() is win:
                return True
        elif context == Qt.ShortcutContext.WidgetWithChildrenShortcut:
            if owner is focus or owner.isAncestorOf(focus):
                return True
        elif owner is focus:
            return True
    return False


def test_no_two_keys_of_the_window_can_fire_together(qtbot, settings, no_gpu):
    """Every key sequence, on every tab and with the focus on any widget there, has at most one
    owner (Qt otherwise prints 'Ambiguous shortcut overload' and does nothing: the Distance
    view's strategy keys used to take Ctrl+1..3 from the view switcher once the map had focus)."""
    w = window(qtbot, settings)
    bindings = _key_bindings(w)
    keys = {k for k, *_ in bindings}
    assert {"Ctrl+1", "Ctrl+2", "Ctrl+3", "Ctrl+4", "F9", "Ctrl+E"} <= keys
    clashes = set()
    for tab in range(w.tabs.count()):
        w.tabs.setCurrentIndex(tab)
        focusable = [x for x in w.findChildren(QWidget)
                     if x.isVisible() and x.focusPolicy() != Qt.FocusPolicy.NoFocus]
        assert len(focusable) > 3
        for focus in focusable + [w]:
            seen = {}
            for key, context, owners, what in bindings:
                if _active(context, owners, focus, w):
                    if key in seen and seen[key] != what:
                        clashes.add((w.tabs.tabText(tab), key, seen[key], what))
                    seen.setdefault(key, what)
    assert not clashes, "\n".join(map(str, sorted(clashes)))
    w.close()


def _activate(qtbot, widget):
    """Keys reach shortcuts only in the active window."""
    widget.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is widget.window(), timeout=WAIT_MS)


def test_view_keys_reach_the_tabs_from_inside_the_distance_map(qtbot, settings, no_gpu):
    w = window(qtbot, settings, view="distance")
    _activate(qtbot, w)
    dist = w.views["distance"]
    for i in range(w.tabs.count()):
        w.tabs.setCurrentWidget(dist)
        dist.canvas.setFocus()
        qtbot.waitUntil(lambda: QApplication.focusWidget() is dist.canvas, timeout=WAIT_MS)
        qtbot.keyClick(dist.canvas, Qt.Key(Qt.Key.Key_1 + i), Qt.KeyboardModifier.ControlModifier)
        assert w.tabs.currentIndex() == i
    w.close()


def test_distance_strategies_take_alt_digits_and_say_so(qtbot, scheduler, monkeypatch):
    view = DistanceView(scheduler, backend.Backend("cuda", simulated=False, device="Fake GPU"))
    qtbot.addWidget(view)
    view.resize(500, 300)
    monkeypatch.setattr(view, "request_render", lambda: None)   # no GPU here: nothing renders
    view.show()
    _activate(qtbot, view)
    view.canvas.setFocus()
    qtbot.keyClick(view.canvas, Qt.Key.Key_3, Qt.KeyboardModifier.AltModifier)
    assert view.strategy == "device-mesh"
    qtbot.keyClick(view.canvas, Qt.Key.Key_1, Qt.KeyboardModifier.AltModifier)
    assert view.strategy == view.strategy_combo.itemData(0)
    assert "Alt+1/2/3" in view.strategy_combo.toolTip() and "Ctrl+" not in view.strategy_combo.toolTip()
    view.close()


# ---------------------------------------------------------------- the whole world

def _shows_the_world(view) -> bool:
    (x0, x1), (y0, y1) = view.canvas.vb.viewRange()
    return x0 <= -180 + 1e-6 and x1 >= 180 - 1e-6 and y0 <= -90 + 1e-6 and y1 >= 90 - 1e-6


@pytest.mark.parametrize("size", [(1500, 500), (600, 900), (1100, 800)], ids=["wide", "tall", "window"])
def test_the_first_view_of_the_map_is_the_whole_world(qtbot, scheduler, cpu_backend, size):
    view = DistanceView(scheduler, cpu_backend)
    qtbot.addWidget(view)
    view.resize(*size)
    with qtbot.waitSignal(view.frame_shown, timeout=WAIT_MS):
        view.show()
    qtbot.waitUntil(lambda: not view.in_flight and not view._dirty, timeout=WAIT_MS)
    assert _shows_the_world(view), view.canvas.vb.viewRange()
    (_, _), (y0, y1) = view.canvas.vb.viewRange()
    assert y0 == pytest.approx(-y1)                 # a letterbox is centred on the equator
    # the frame covers the world's part of the view; beyond the poles stays empty
    lat0, lat1, lon0, lon1 = view.last_frame.request.bounds
    assert (lat0, lat1) == (-90.0, 90.0) and lon0 <= -180 + 1e-6 and lon1 >= 180 - 1e-6
    # the map keeps its aspect: a degree is as many pixels across as up
    px, py = view.canvas.vb.viewPixelSize()
    assert px == pytest.approx(py, rel=1e-3)
    # resized before the user moved it: still the world
    view.resize(size[1], size[0])
    qtbot.waitUntil(lambda: _shows_the_world(view), timeout=WAIT_MS)
    view.close()


def test_world_button_brings_the_world_back_after_a_zoom(qtbot, scheduler, cpu_backend):
    view = DistanceView(scheduler, cpu_backend)
    qtbot.addWidget(view)
    view.resize(700, 700)
    view.show()
    vb = view.canvas.vb
    vb.scaleBy((0.2, 0.2))
    vb.sigRangeChangedManually.emit(vb.state["mouseEnabled"])   # as a wheel turn reports it
    assert not _shows_the_world(view) and not vb.fitting_world
    view.resize(900, 500)                      # the user's view survives a resize
    qtbot.wait(1)
    assert not _shows_the_world(view)
    view.world_button.click()
    assert _shows_the_world(view) and vb.fitting_world
    view.close()


def test_latitude_axis_has_no_ticks_beyond_the_poles(qtbot, scheduler, cpu_backend):
    view = DistanceView(scheduler, cpu_backend)
    qtbot.addWidget(view)
    view.resize(500, 900)
    view.show()
    axis = view.canvas.plot.getAxis("left")
    (y0, y1) = view.canvas.vb.viewRange()[1]
    assert y0 < -100 and y1 > 100                   # a tall view: bands beyond the poles
    ticks = [v for _, values in axis.tickValues(y0, y1, 800) for v in values]
    assert ticks and all(-90 <= v <= 90 for v in ticks)
    view.close()


# ---------------------------------------------------------------- why the CPU

def test_the_reason_for_the_cpu_stays_until_dismissed(qtbot, settings, no_gpu):
    w = window(qtbot, settings)
    view = w.current_view()
    frames = []
    view.frame_displayed.connect(lambda *a: frames.append(a))
    qtbot.waitUntil(lambda: len(frames) >= 1 and not view.in_flight, timeout=WAIT_MS)
    qtbot.wait(50)
    # the status bar has since said other things ("Kernels compiled in … ms")
    assert "Running on the CPU" not in w.statusBar().currentMessage()
    bar = w.info_bar
    assert bar.isVisible() and bar.text() == f"Running on the CPU: {no_gpu.reason}"
    assert bar.mapTo(w, QPoint()).y() < w.tabs.mapTo(w, QPoint()).y()   # above the views
    w.set_backend("cuda")                                    # refused: the bar stays as it is
    assert bar.isVisible()
    qtbot.mouseClick(bar.close_button, Qt.MouseButton.LeftButton)
    assert not bar.isVisible()
    w.set_backend("cuda")                                    # dismissed stays dismissed
    w.set_backend("cpu")
    assert not bar.isVisible()
    assert no_gpu.reason in w.backend_label.toolTip()       # still one hover away
    w.close()


def test_no_reason_bar_when_the_gpu_is_usable(qtbot, settings, monkeypatch):
    monkeypatch.setattr(backend, "cuda_status", lambda: backend.CudaStatus(True, "", "Fake GPU"))
    w = window(qtbot, settings)
    assert not w.info_bar.isVisible()
    w.close()


def test_tab_titles_show_an_ampersand_as_written(qtbot, settings, no_gpu):
    w = window(qtbot, settings)
    from explorer.views import VIEW_IDS
    i = VIEW_IDS.index("random")        # the tabs' order (views are built as they are needed)
    # '&&' is how Qt writes a literal '&' (a single one is an Alt mnemonic, drawn as an underline)
    assert w.tabs.tabText(i) == "Random numbers && reductions"
    w.close()


# ---------------------------------------------------------------- where the picture looks

def test_readout_text_at_the_start_and_deep():
    assert readout_text("-0.75", "0", 3.5, 800, 256, True) == \
        "c = -0.7500 + 0.0000i   width 3.5 (×1)   256 iterations (auto)"
    deep = readout_text("-0.743643887037151", "-0.131825904205330", 3.5e-12, 1000, 20000, False)
    assert deep.startswith("c = -0.743643887037151") and " - 0.131825904205330" in deep
    assert "width 3.5·10⁻¹²" in deep and "(×1.0·10¹²)" in deep and deep.endswith("20,000 iterations")
    assert power_of_ten(9.996e-6) == "1.0·10⁻⁵" and power_of_ten(1500) == "1,500"


def test_readout_follows_the_camera(qtbot, scheduler, cpu_backend):
    view = MandelbrotView(scheduler, cpu_backend)
    qtbot.addWidget(view)
    view.resize(800, 500)
    with qtbot.waitSignal(view.frame_displayed, timeout=WAIT_MS):
        view.show()
    label = view.readout
    assert label.isVisible() and label.text().startswith("c = -0.7500 + 0.0000i   width 3.5 (×1)")
    before = label.text()
    w, h = view.canvas_size()
    view.canvas.vb.wheel_zoom.emit(10.0, w / 2, h / 2)     # ten times closer at the centre
    assert label.text() != before and "width 0.35 (×10)" in label.text()
    view.controls.set_iterations(1000)
    assert "   1,000 iterations" in label.text()
    assert view.go_to("-0.743643887037151", "0.131825904205330", 1e-9)
    assert "width 1.0·10⁻⁹ (×3.5·10⁹)" in label.text() and "-0.7436438870" in label.text()
    # inside the canvas, in its lower-left corner, and the mouse goes through it
    geo = label.geometry()
    assert geo.left() >= 0 and geo.bottom() <= view.canvas.height() and geo.top() > view.canvas.height() / 2
    assert label.testAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
    view.shutdown()
    view.close()


@pytest.mark.gpu
def test_on_the_gpu_alt_digits_pick_the_strategy_of_the_next_frame(qtbot, settings, gpu_backend, simulated):
    w = MainWindow("cuda", "distance", settings=settings, synchronous=True)
    qtbot.addWidget(w)
    if w.gpu_backend is None:
        pytest.skip(f"the window sees no usable GPU: {w.cuda_status.reason}")
    dist = w.views["distance"]
    dist.max_side = 24 if simulated else 1024      # the simulator runs a Python thread per pixel
    w.resize(900, 600)
    with qtbot.waitSignal(dist.frame_shown, timeout=120_000):
        w.show()
    assert not w.info_bar.isVisible()               # nothing to explain on a GPU
    qtbot.waitUntil(lambda: not dist.in_flight and not dist._dirty, timeout=120_000)
    _activate(qtbot, w)
    dist.canvas.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is dist.canvas, timeout=WAIT_MS)
    assert dist.strategy == "device-mesh"           # the default: Alt+1 picks another
    with qtbot.waitSignal(dist.frame_shown, timeout=120_000,
                          check_params_cb=lambda f: f.request.strategy == "host-mesh"):
        qtbot.keyClick(dist.canvas, Qt.Key.Key_1, Qt.KeyboardModifier.AltModifier)
    assert w.tabs.currentWidget() is dist and dist.strategy == "host-mesh"
    w.close()
