"""A first start in the window (synchronous scheduler, CPU): a NumPy preview while the kernels
compile, with the wait said in the status bar; no preview once they are cached; the deep-zoom
kernels compiled in the background after the first frame, never ahead of a frame. The cache's
state is set by hand: nothing here compiles from an empty cache."""
import pytest

from explorer.views.mandelbrot import MandelbrotView
from kernels.mandelbrot import jobs
from kernels.mandelbrot.frames import warm
from kernels.scheduler import Compiled, WarmupStep


def make_view(qtbot, scheduler, backend, show=True):
    v = MandelbrotView(scheduler, backend)
    qtbot.addWidget(v)
    v.controls.hide()               # the canvas alone fills the view: its size is the frame size
    v.controls.set_iterations(40)
    v.progressive = False
    v.resize(160, 120)
    if show:
        v.show()
        qtbot.waitExposed(v)
    return v


def wait_full_frame(qtbot, v, timeout=60000):
    def ok():
        t = v.model.shown
        assert t is not None and not t.coarse
        assert (t.w, t.h) == v.canvas_size() and t.state == v.camera.state
        assert not v.in_flight
    qtbot.waitUntil(ok, timeout=timeout)


def _statuses(view):
    got = []
    view.status_message.connect(lambda text, ms: got.append(text))
    return got


def _frames(view):
    got = []
    view.frame_displayed.connect(lambda frame, ms: got.append(frame))
    return got


def test_a_first_start_shows_a_preview_while_the_kernels_compile(qtbot, scheduler, cpu_backend,
                                                                  monkeypatch):
    monkeypatch.setattr(warm, "missing", lambda parts: tuple(parts))     # nothing on disk
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    texts, frames = _statuses(v), _frames(v)
    v.show()
    wait_full_frame(qtbot, v)
    first = frames[0]
    assert first.meta.get("preview") and first.rgba.shape[:2] == (120 // 4, 160 // 4)
    # the preview came first, then the compile was said without a promised length, then the
    # full frame
    compiling = [t for t in texts if t.startswith("Compiling the kernels, first time only")]
    assert compiling and all("about" not in t for t in compiling)
    assert "a quick preview is shown until then" in compiling[-1]
    assert any(t.startswith("Kernels compiled in") for t in texts)
    assert not v.last_frame.meta.get("preview") and v.model.shown.coarse is False
    assert v.model.frame_at(160, 120) is v.last_frame      # hover reads the full frame only


def test_the_preview_is_drawn_before_the_compile_starts_whatever_the_worker_does(
        qtbot, scheduler, cpu_backend, monkeypatch):
    """Another view's job (the roofs, measured at start) must not hold the preview up: it is
    drawn on the GUI thread as soon as the cache is found cold, before the compile is queued."""
    monkeypatch.setattr(warm, "missing", lambda parts: tuple(parts))
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    order = []
    v.frame_displayed.connect(lambda frame, ms: order.append(
        "preview" if frame.meta.get("preview") else "frame"))
    submit = v.submit

    def noting(request, *a, **k):
        order.append(type(request).__name__ if getattr(request, "cached_only", True)
                     else "compile")
        return submit(request, *a, **k)
    monkeypatch.setattr(v, "submit", noting)
    v.show()
    wait_full_frame(qtbot, v)
    # never queued on the worker, where a job of another view could run first
    assert "PreviewRequest" not in order
    assert order[:2] == ["preview", "compile"] and "frame" in order  # (the check came earlier)


def test_the_preview_shrinks_with_the_iterations_to_stay_quick():
    from kernels.mandelbrot.frames import preview
    assert preview.preview_scale(1920, 1080, 256) == preview.SCALE
    k = preview.preview_scale(1920, 1080, 100_000)
    assert k > preview.SCALE
    assert (1920 // k) * (1080 // k) * 100_000 <= preview.BUDGET


def test_a_compile_line_counts_its_seconds_instead_of_promising(qtbot, monkeypatch):
    from explorer.views import wait_line
    said = []
    clock = [100.0]
    monkeypatch.setattr(wait_line.time, "perf_counter", lambda: clock[0])
    line = wait_line.WaitLine(None, lambda text, ms: said.append((text, ms)))
    line.start("Compiling the kernels, first time only", ": a preview meanwhile")
    clock[0] += 7.2
    line._say()
    line.start("Compiling the kernels, first time only", ": a preview meanwhile")  # same wait
    assert said == [("Compiling the kernels, first time only: a preview meanwhile", 0),
                    ("Compiling the kernels, first time only (7 s so far): a preview meanwhile", 0),
                    ("Compiling the kernels, first time only (7 s so far): a preview meanwhile", 0)]
    line.stop()
    assert not line.active and line.text() is None


def test_a_cached_start_shows_no_preview(qtbot, scheduler, cpu_backend, monkeypatch):
    monkeypatch.setattr(warm, "missing", lambda parts: ())
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    frames = _frames(v)
    v.show()
    wait_full_frame(qtbot, v)
    assert frames and not any(f.meta.get("preview") for f in frames)


def test_a_deep_frame_that_compiles_says_what_and_how_long(qtbot, scheduler, cpu_backend,
                                                          monkeypatch):
    monkeypatch.setattr(warm, "missing", lambda parts: ())
    v = make_view(qtbot, scheduler, cpu_backend)
    wait_full_frame(qtbot, v)
    monkeypatch.setattr(warm, "missing", lambda parts: tuple(parts))
    texts = _statuses(v)
    v.go_to("0", "1", "1e-50", 40)             # the 1e-50 bookmark's place
    qtbot.waitUntil(lambda: any("compiling the deep-zoom kernels, first time only" in t
                                for t in texts) or v.last_frame.meta.get("format") != "float64",
                    timeout=60000)
    # said at once, when the frame is asked for (it may wait behind a background compile step)
    assert texts[0].startswith("Deep frame: compiling the deep-zoom kernels, first time only") \
        or texts[0].startswith("Number format")
    wait_full_frame(qtbot, v)
    # a fresh deep renderer compiles (or loads) before its first frame, and says so, no number
    said = [t for t in texts if t.startswith("Deep frame: compiling the deep-zoom kernels, "
                                             "first time only")]
    assert said and not any("about" in t for t in said)


@pytest.fixture
def fake_deep_warmup(monkeypatch):
    """warm_deep without its compiles: three parts, each noted when it runs; `after_first`, when
    set, runs once the first part is done (the user acting while the deep kernels compile)."""
    order = []
    hooks = {}

    def warm_deep(ctx, req):
        for i, part in enumerate(("table", "perturbation", "extended")):
            order.append(part)
            if i == 0 and "after_first" in hooks:
                hooks.pop("after_first")()
            yield WarmupStep(part, i + 1, 3)
        return Compiled("mandelbrot-deep", req.backend, 1.0)
    monkeypatch.setattr(jobs, "warm_deep", warm_deep)
    return order, hooks


def test_the_deep_kernels_compile_in_the_background_after_the_first_frame(
        qtbot, scheduler, cpu_backend, monkeypatch, fake_deep_warmup):
    monkeypatch.setattr(warm, "missing", lambda parts: ())
    events = []
    scheduler.event.connect(events.append)
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    v.model.compile_ahead = True
    v.show()
    wait_full_frame(qtbot, v)
    key = v.side_key("deep-warmup")
    qtbot.waitUntil(lambda: not v.has_job(key), timeout=20000)
    assert fake_deep_warmup[0] == ["table", "perturbation", "extended"]
    own = [(e.key, type(e).__name__) for e in events if e.key in (v.view_id, key)]
    first_frame = own.index((v.view_id, "Delivered"), 1)    # after the warm-up's Compiled
    first_step = own.index((key, "Progress"))
    assert first_frame < first_step            # the window's first frame before any deep part


def test_a_frame_asked_for_during_the_background_compile_comes_before_its_next_part(
        qtbot, scheduler, cpu_backend, monkeypatch, fake_deep_warmup):
    monkeypatch.setattr(warm, "missing", lambda parts: ())
    order, hooks = fake_deep_warmup
    v = make_view(qtbot, scheduler, cpu_backend)
    wait_full_frame(qtbot, v)
    v.progressive = True                       # a coarse pass, then the full frame: two steps
    v.frame_displayed.connect(lambda frame, ms: order.append(
        "coarse" if v.model.shown.coarse else "full"))
    v.model.compile_ahead = True
    hooks["after_first"] = lambda: v.model.pan(20, 0)     # the user moves meanwhile
    v.frames._compile_ahead(cpu_backend)
    qtbot.waitUntil(lambda: not v.has_job(v.side_key("deep-warmup")), timeout=20000)
    # both passes of the pan's frame came before the warm-up's next part
    assert order == ["table", "coarse", "full", "perturbation", "extended"]
    wait_full_frame(qtbot, v)


def test_the_app_compiles_ahead_and_tools_do_not(qtbot, tmp_path, monkeypatch):
    from PyQt6.QtCore import QSettings
    from explorer.app import MainWindow
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow("cpu", "distance", settings=settings, synchronous=True, compile_ahead=True)
    qtbot.addWidget(w)
    assert w.views["mandelbrot"].model.compile_ahead
    w2 = MainWindow("cpu", "distance", settings=settings, synchronous=True)
    qtbot.addWidget(w2)
    assert not w2.views["mandelbrot"].model.compile_ahead


def test_a_jump_far_deeper_fades_the_last_frame_instead_of_stretching_one_pixel(
        qtbot, scheduler, cpu_backend, monkeypatch):
    from explorer.models.camera import CameraState
    from explorer.views.mandelbrot_frames import MAX_STRETCH, STALE_OPACITY
    monkeypatch.setattr(warm, "missing", lambda parts: ())
    v = make_view(qtbot, scheduler, cpu_backend)
    wait_full_frame(qtbot, v)
    image = v.canvas.image
    before = image.mapRectToParent(image.boundingRect())
    w, _ = v.canvas_size()
    # the camera alone moves (the new frame not yet asked for): a deep bookmark's first moment
    assert v.camera.go_to(CameraState.of("0", "1", "1e-50"), w)
    v.frames.place_image()
    assert image.opacity() == STALE_OPACITY
    assert image.mapRectToParent(image.boundingRect()) == before     # not one pixel blown up
    # a zoom the frame still shows: placed as ever, at full strength
    s = v.model.shown.state
    assert v.camera.go_to(CameraState.of(s.center_re, s.center_im, s.width / 2), w)
    v.frames.place_image()
    assert image.opacity() == 1.0
    assert image.mapRectToParent(image.boundingRect()).width() > before.width() * 1.9
    assert MAX_STRETCH > 2
