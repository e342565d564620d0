"""The frame's progress as the status bar says it (explorer.models.progress): one bar that only
goes forward through the stages, and a long frame that ends with how long it took."""
from explorer.models.progress import FrameProgress


def percent(text):
    return int(text.split("%")[0].rsplit(" ", 1)[1])


def test_reference_then_pixels_only_goes_forward():
    job = FrameProgress(0.0)
    seen = [percent(job.update("reference", f)) for f in (0.2, 1.0)]
    seen += [percent(job.update("pixels", f)) for f in (0.46, 0.91, 1.0)]
    assert seen == sorted(seen) and seen[-1] == 100 and seen[1] == 60


def test_a_progressive_frame_counts_the_coarse_pass_then_the_full_one():
    job = FrameProgress(0.0, progressive=True)
    job.update("reference", 1.0)
    coarse = job.update("pixels", 1.0)
    assert "coarse preview" in coarse and percent(coarse) == 70
    job.coarse_shown()
    job.update("reference", 0.3)            # the full pass's reference: reused, already done
    full = job.update("pixels", 0.5)
    assert "full resolution" in full and percent(full) == 85


def test_compile_is_named_and_a_long_frame_ends_with_its_time():
    job = FrameProgress(10.0)
    assert "compiling the deep-zoom kernels" in job.update("compile", 0.0)
    assert job.done_text(13.25, "extended") == "Deep frame (extended) done in 3.2 s"
    assert FrameProgress(0.0).done_text(0.5, "float64") is None      # quick: nothing to say
    assert FrameProgress(0.0).done_text(2.5, "float64") == "Frame done in 2.5 s"


def test_the_readout_wraps_in_a_narrow_window_instead_of_cutting(qtbot):
    from PyQt6.QtWidgets import QWidget
    from explorer.views.mandelbrot_readout import CoordinateReadout
    canvas = QWidget()
    qtbot.addWidget(canvas)
    canvas.resize(900, 300)
    label = CoordinateReadout(canvas)
    canvas.show()
    text = ("c = -0.743643887037151 + 0.131825904205330i   width 1.0·10⁻⁵ (×3.5·10⁵)   "
            "2,227 iterations (auto)   float64")
    label.set_text(text)
    assert label.text() == text and label.full_text() == text
    canvas.resize(260, 300)
    qtbot.waitUntil(lambda: "\n" in label.text())
    lines = label.text().splitlines()
    assert lines[-2:] == ["2,227 iterations (auto)", "float64"]      # nothing cut at the end
    assert label.width() <= 260 and label.geometry().bottom() < 300
    fm = label.fontMetrics()
    assert all(fm.horizontalAdvance(line) <= 260 for line in lines)
    assert "190" in label.styleSheet()         # a dark translucent background behind the text


def test_esc_after_the_coarse_pass_says_the_coarse_preview_is_shown(qtbot, scheduler, cpu_backend):
    from PyQt6.QtCore import Qt
    from explorer.views.mandelbrot import MandelbrotView
    v = MandelbrotView(scheduler, cpu_backend)
    qtbot.addWidget(v)
    v.controls.hide()
    v.resize(320, 240)
    v.show()
    qtbot.waitExposed(v)
    qtbot.waitUntil(lambda: v.model.shown is not None and not v.in_flight, timeout=120_000)
    said = []
    v.status_message.connect(lambda text, ms: said.append(text))

    def esc_on_coarse(frame, _ms):
        if v.model.shown.coarse and v.in_flight and not said:
            qtbot.keyClick(v.canvas, Qt.Key.Key_Escape)
    v.frame_displayed.connect(esc_on_coarse)
    # Esc lands while the full pass is in flight (pressed as the coarse one is shown); seahorse
    # valley at 2,000,000 iterations keeps the full pass busy besides
    assert v.go_to("-0.7436", "0.1318", "0.01", 2_000_000)
    qtbot.waitUntil(lambda: bool(said) and not v.in_flight, timeout=120_000)
    assert said[-1] == "Frame cancelled: showing the coarse preview (the full frame was stopped)"


def test_the_table_stage_has_its_share_and_its_words():
    """The approximation table comes between the reference and the pixels: its own words, and the
    bar holds (never goes back) while it is built."""
    p = FrameProgress(started=0.0)
    ref_end = p.update("reference", 1.0)
    table = p.update("table", 0.5)
    pixels = p.update("pixels", 0.0)
    assert "approximation table" in table and "%" in table
    fractions = [float(t.split("%")[0].split()[-1]) for t in (ref_end, table, pixels)]
    assert fractions == sorted(fractions) and fractions[0] == fractions[1] == 60
