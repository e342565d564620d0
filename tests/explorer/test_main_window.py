from dataclasses import dataclass

import pytest
from PyQt6.QtCore import QSettings, Qt

from explorer.app import MainWindow
from explorer.errors import format_exception, install_excepthook
from explorer.views import VIEW_IDS
from kernels import backend
from kernels.timing import Timings


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def no_gpu(monkeypatch):
    st = backend.CudaStatus(False, "no CUDA-capable GPU was found")
    monkeypatch.setattr(backend, "cuda_status", lambda: st)
    return st


@dataclass(frozen=True)
class Call:
    """A test request: its handler calls fn()."""
    fn: object
    backend: object = None


def make(qtbot, settings, **kw):
    kw.setdefault("synchronous", True)      # jobs on the GUI thread: no race with a compile
    w = MainWindow("cpu", settings=settings, **kw)
    w.scheduler.register(Call, lambda ctx, req: req.fn())
    qtbot.addWidget(w)
    w.show()
    return w


def test_opens_switches_tabs_and_closes(qtbot, settings, no_gpu):
    w = make(qtbot, settings)
    assert w.tabs.count() == len(VIEW_IDS)
    for i in range(w.tabs.count()):
        w.tabs.setCurrentIndex(i)
        assert w.current_view().view_id == VIEW_IDS[i]
    w.close()
    assert not w.scheduler.running


def test_gpu_toggle_disabled_with_reason(qtbot, settings, no_gpu):
    w = make(qtbot, settings)
    assert not w.act_gpu.isEnabled()
    assert no_gpu.reason in w.act_gpu.toolTip()
    assert "GPU unavailable" in w.backend_label.text()  # stays visible whatever the views report
    assert no_gpu.reason in w.backend_label.toolTip()
    assert w.act_cpu.isChecked()
    w.set_backend("cuda")  # e.g. from a shortcut: refused with the reason, stays on the CPU
    assert w.backend.name == "cpu"
    assert no_gpu.reason in w.statusBar().currentMessage()


def test_remembers_last_view(qtbot, settings, no_gpu):
    w = make(qtbot, settings)
    w.tabs.setCurrentIndex(2)
    w.close()
    w2 = make(qtbot, settings)
    assert w2.current_view().view_id == VIEW_IDS[2]
    w2.close()


def test_switching_backend_rerenders_current_view(qtbot, settings, monkeypatch):
    sim = backend.CudaStatus(True, "", "Fake GPU")
    monkeypatch.setattr(backend, "cuda_status", lambda: sim)
    w = make(qtbot, settings, view="distance")
    for view_id in VIEW_IDS:        # built now: a view built later starts on the backend of then
        w.views[view_id]
    calls = []
    for v in w.views.values():
        monkeypatch.setattr(v, "request_render", lambda v=v: calls.append(v.view_id))
    w.act_gpu.trigger()
    assert w.backend.is_gpu and calls == ["distance"]
    assert all(v.backend.is_gpu for v in w.views.values())
    w.tabs.setCurrentIndex(0)  # a view rendered on the old backend catches up when shown
    assert calls == ["distance", "mandelbrot"]
    w.close()


def test_timing_panel_table_counts_jobs(qtbot, settings, no_gpu):
    w = make(qtbot, settings)
    panel = w.timing.panel
    for k in range(3):
        t = Timings(backend="cuda", label="test")
        t.phases_ms.update(kernel=1.0, d2h=0.5, total=2.0, compile=100.0 if k == 0 else None)
        t.bytes["d2h"] = 4_000_000
        w._on_timings(t)
    panel.refresh()
    stats = panel.stats()
    assert stats["kernel"] == (3.0, 3) and stats["d2h"] == (1.5, 3) and stats["compile"] == (100.0, 1)
    rows = {panel.table.item(r, 0).text(): panel.table.item(r, 2).text() for r in range(panel.table.rowCount())}
    # every millisecond has a name: the 0.5 ms of each 2 ms job outside kernel and d2h is "unaccounted"
    assert rows["kernel / compute"] == "50.0 %" and rows["unaccounted"] == "25.0 %"
    assert rows["JIT compile"] == "—"
    assert "8.0 GB/s" in panel.numbers.text()
    panel.reset()
    assert panel.table.rowCount() == 0
    w.close()


def test_excepthook_formats_plainly(monkeypatch):
    import sys
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        summary, details = format_exception(type(exc), exc, exc.__traceback__)
    assert summary == "RuntimeError: boom" and "Traceback" in details
    old = sys.excepthook
    try:
        hook = install_excepthook()
        assert sys.excepthook is hook
    finally:
        sys.excepthook = old


def test_failing_job_shows_in_status_bar_and_app_keeps_working(qtbot, settings, no_gpu):
    w = make(qtbot, settings)
    view = w.current_view()

    def bad():
        raise RuntimeError("kernel launch failed: too many resources requested")
    with qtbot.waitSignal(view.error_message, timeout=5000):
        view.submit(Call(bad))
    assert "too many resources requested" in w.statusBar().currentMessage()
    with qtbot.waitSignal(w.scheduler.event, timeout=5000, check_params_cb=lambda ev: ev.key == "probe") as sig:
        w.scheduler.submit("probe", Call(lambda: "fine"))
    assert sig.args[0].result == "fine"
    w.close()


def test_closing_during_a_render_exits_cleanly(tmp_path):
    """A real process: close the window while a long job runs; exit 0 and no Qt thread warning."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = f"""
import sys, time
from PyQt6.QtCore import QSettings, QTimer
from PyQt6.QtWidgets import QApplication
app = QApplication([])
from dataclasses import dataclass
from explorer.app import MainWindow
@dataclass(frozen=True)
class Long:
    backend: object = None
def long_job(ctx, req):
    for _ in range(300):
        ctx.token.check()
        time.sleep(0.01)
w = MainWindow("cpu", settings=QSettings({str(tmp_path / 's.ini')!r}, QSettings.Format.IniFormat))
w.scheduler.register(Long, long_job)
w.show()
QTimer.singleShot(50, lambda: w.current_view().submit(Long()))
QTimer.singleShot(300, w.close)
sys.exit(app.exec())
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
               QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "QThread: Destroyed" not in r.stderr


@pytest.mark.gpu
def test_toolbar_backend_toggle_reaches_every_view(qtbot, settings, gpu_backend):
    """The one path for a backend: the toolbar tells every view, and each view's controls follow
    (the distance strategies used to stay disabled after switching to the GPU in the window)."""
    w = make(qtbot, settings)
    if w.gpu_backend is None:
        pytest.skip(f"the window sees no usable GPU: {w.cuda_status.reason}")
    w.tabs.setCurrentIndex(VIEW_IDS.index("throughput"))   # renders nothing on its own
    dist, thr = w.views["distance"], w.views["throughput"]
    assert not dist.strategy_combo.isEnabled() and "GPU only" in dist.strategy_label.text()
    assert not thr.mode_checks["pinned"].isEnabled()
    w.act_gpu.trigger()
    assert w.backend.is_gpu and all(v.backend == w.backend for v in w.views.values())
    assert dist.strategy_combo.isEnabled() and "GPU only" not in dist.strategy_label.text()
    assert thr.mode_checks["pinned"].isEnabled()
    assert any(thr.impl_list.item(i).text() == "cuda-jit" and
               thr.impl_list.item(i).flags() & Qt.ItemFlag.ItemIsEnabled for i in range(thr.impl_list.count()))
    w.act_cpu.trigger()
    assert not w.backend.is_gpu and all(v.backend == w.backend for v in w.views.values())
    assert not dist.strategy_combo.isEnabled() and not thr.mode_checks["pinned"].isEnabled()
    w.close()


@pytest.mark.parametrize("close_after_ms", [0, 150, 600])
def test_first_start_with_an_empty_numba_cache_closes_within_a_second(tmp_path, close_after_ms):
    """A real process through the app's own entry point, with a cold numba cache (kernels compile
    for seconds): closing at any moment ends the process within a second, settings written."""
    import os
    import subprocess
    import sys
    import time
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ini = tmp_path / "s.ini"
    code = f"""
import sys, time
from PyQt6.QtCore import QSettings, QTimer
from explorer.app import run
def close_soon(w):
    def close():
        print("closing-at", time.time(), flush=True)
        w.close()
    QTimer.singleShot({close_after_ms}, close)
sys.exit(run("cpu", settings=QSettings({str(ini)!r}, QSettings.Format.IniFormat), after_show=close_soon))
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
               QT_QPA_PLATFORM="offscreen", NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    r = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    ended = time.time()
    assert r.returncode == 0, r.stderr
    assert "QThread: Destroyed" not in r.stderr
    closing = float(r.stdout.split("closing-at")[1].split()[0])
    assert ended - closing < 1.0, f"the process ended {ended - closing:.2f} s after the close"
    assert "geometry" in ini.read_text()


def test_file_menu_exports_a_picture_from_any_view(qtbot, settings, no_gpu, monkeypatch):
    from explorer.views import mandelbrot_export
    w = make(qtbot, settings)
    w.tabs.setCurrentWidget(w.views["distance"])
    asked = []
    monkeypatch.setattr(mandelbrot_export, "ask_export",
                        lambda parent, size, gpus=(): asked.append((parent, gpus)) or None)
    w.act_picture.trigger()
    assert asked and asked[0][0] is w.views["mandelbrot"]        # the Mandelbrot view's dialog
    assert w.tabs.currentWidget() is w.views["mandelbrot"]
    assert asked[0][1] == []                                      # on the CPU: no GPU to list


@pytest.mark.parametrize("start", ["distance", "random"])
def test_a_window_opened_on_another_view_loads_the_mandelbrot_kernels_when_it_is_shown(
        qtbot, settings, no_gpu, monkeypatch, start):
    """The worker and its GIL go to the first view's result; the Mandelbrot view's warm-up waits
    for its tab, then runs and draws (a saved choice counts as an asked one)."""
    from explorer.scheduler_qt import QtScheduler
    from kernels.scheduler import Warmup
    asked = []
    real = QtScheduler.submit

    def submit(self, key, request, **kw):
        asked.append(request)
        return real(self, key, request, **kw)
    monkeypatch.setattr(QtScheduler, "submit", submit)
    settings.setValue("view", start)
    w = make(qtbot, settings)
    assert w.current_view().view_id == start
    assert not any(isinstance(r, Warmup) and r.workload == "mandelbrot" for r in asked)
    w.tabs.setCurrentIndex(VIEW_IDS.index("mandelbrot"))
    m = w.views["mandelbrot"]
    qtbot.waitUntil(lambda: m.model.shown is not None and not m.model.shown.coarse, timeout=60000)
    assert any(isinstance(r, Warmup) and r.workload == "mandelbrot" for r in asked)


def test_a_window_opened_on_the_mandelbrot_view_loads_its_kernels_while_it_is_built(
        qtbot, settings, no_gpu, monkeypatch):
    from explorer.views import mandelbrot
    pumped = []
    real = mandelbrot.MandelbrotView.__init__

    def init(self, *a, **kw):
        pumped.append(kw.get("warm_early", True))
        real(self, *a, **kw)
    monkeypatch.setattr(mandelbrot.MandelbrotView, "__init__", init)
    make(qtbot, settings, view="mandelbrot")
    assert pumped == [True]


def test_views_are_built_as_they_are_needed_then_all_once_the_app_is_idle(qtbot, settings, no_gpu):
    """The view the window opens on is built with it; a tab chosen or a view asked for is built
    then, in its place; the rest follow a second after the window shows, one at a time."""
    w = make(qtbot, settings, view="distance")
    assert list(w.views) == ["distance"] and w.tabs.count() == len(VIEW_IDS)
    assert w.current_view() is w.views["distance"] and w.tabs.currentWidget() is w.views["distance"]
    w.tabs.setCurrentIndex(VIEW_IDS.index("random"))
    assert "random" in w.views and w.tabs.widget(VIEW_IDS.index("random")) is w.views["random"]
    assert w.current_view().view_id == "random"
    qtbot.waitUntil(lambda: not w.views.pending(), timeout=10000)
    assert [w.tabs.widget(i).view_id for i in range(w.tabs.count())] == list(VIEW_IDS)
    assert w.current_view().view_id == "random"         # building them changed no tab
    w.close()


def test_a_bad_saved_view_is_dropped_with_a_note_and_the_first_view_opens(qtbot, settings, no_gpu):
    settings.setValue("view", "nonsense")
    w = make(qtbot, settings)
    assert w.current_view().view_id == VIEW_IDS[0] and list(w.views) == [VIEW_IDS[0]]
    assert any("saved view 'nonsense' is not one of" in n for n in w.notes())
    w.close()
