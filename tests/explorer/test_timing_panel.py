"""The timing panel: phases that add up, per-view histories, whole frame numbers, no clipped text."""
import pytest
from PyQt6.QtCore import Qt
from PyQt6.QtGui import QFontMetrics

from explorer import timing_breakdown as tb
from explorer.timing_bar import JobAxis
from explorer.timing_panel import TimingPanel
from explorer.timing_text import NO_COPIES
from kernels.timing import Timings


def timings(backend="cuda", label="job", detail=None, bytes_=None, **phases):
    t = Timings(backend=backend, label=label)
    t.phases_ms.update(phases)
    t.detail.update(detail or {})
    t.bytes.update(bytes_ or {})
    return t


@pytest.fixture
def panel(qtbot):
    p = TimingPanel()
    qtbot.addWidget(p)
    p.resize(400, 800)
    p.show()
    return p


def test_unaccounted_is_named_and_makes_the_bar_add_up():
    # the screenshot's case: 147.1 ms of phases in a 165.0 ms wall clock
    t = timings(h2d=10.0, kernel=120.0, d2h=7.1, host=10.0, total=165.0)
    segs = tb.frame_segments(t)
    assert [s.key for s in segs] == ["h2d", "kernel", "d2h", "host", "other"]
    assert segs[-1].ms == pytest.approx(17.9)
    assert tb.NAMES["other"] == "unaccounted"
    assert sum(s.ms for s in segs) == pytest.approx(tb.frame_total(t)) == pytest.approx(165.0)


def test_display_added_after_the_wall_clock_is_not_taken_from_unaccounted():
    # the view adds 2 ms of display to host once the job's wall clock has stopped
    t = timings(backend="cpu", kernel=10.0, host=2.5, total=11.0, detail={"display": 2.0})
    assert tb.unaccounted_ms(t) == pytest.approx(0.5)
    segs = {s.key: s.ms for s in tb.frame_segments(t)}
    assert segs["display"] == pytest.approx(2.0) and segs["host-work"] == pytest.approx(0.5)
    assert tb.frame_total(t) == pytest.approx(13.0)


def test_compile_is_kept_out_whether_inside_or_before_the_wall_clock():
    inside = timings(backend="cpu", compile=25.0, kernel=50.0, host=1.0, total=77.0)
    assert tb.unaccounted_ms(inside) == pytest.approx(1.0)
    before = timings(kernel=0.5, compile=300.0, total=0.7)     # a sweep point: compile measured apart
    assert tb.unaccounted_ms(before) == pytest.approx(0.2)
    only = timings(compile=650.0)
    assert not tb.is_frame(only) and tb.frame_segments(only) == []


def test_colourise_is_split_out_of_the_kernel_and_flags_are_not_times():
    t = timings(kernel=4.0, total=4.0, detail={"colourise": 1.0, "reference_reused": True})
    segs = {s.key: s.ms for s in tb.frame_segments(t)}
    assert segs == {"compute": 3.0, "colourise": 1.0}
    assert tb.sub_phases(t) == {"colourise": 1.0}


def test_empty_state_says_what_will_appear(panel):
    assert panel.chart.currentWidget() is panel.placeholder
    assert "bar split by phase" in panel.placeholder.text()
    assert "none yet" in panel.title.text()
    assert panel.bar.segments == [] and panel.table.isHidden()
    assert not panel.source_combo.isEnabled()


def test_job_axis_ticks_are_whole_frames():
    axis = JobAxis("bottom")
    for lo, hi, size in ((-0.5, 3.5, 400), (0.5, 10.5, 300), (0.5, 200.5, 350), (0.5, 1.5, 400)):
        ticks = [v for _, vs in axis.tickValues(lo, hi, size) for v in vs]
        assert ticks and all(float(v).is_integer() and v >= 1 for v in ticks), (lo, hi, ticks)
    assert axis.tickStrings([1.0, 2.0], 1, 1) == ["1", "2"]


def test_no_si_prefix_on_tiny_times(panel):
    for _ in range(3):
        panel.add(timings(backend="cpu", kernel=0.004, total=0.005), "throughput")
    panel.refresh()
    assert panel.chart.currentWidget() is panel.plot
    for side in ("left", "bottom"):
        axis = panel.plot.getAxis(side)
        assert not axis.autoSIPrefix and "x0.001" not in axis.labelString()


def test_each_view_keeps_its_own_history(panel):
    for _ in range(3):
        panel.add(timings(label="mandel", kernel=1.0, d2h=0.5, total=2.0), "mandelbrot")
    panel.add(timings(label="dist", kernel=5.0, total=5.0), "distance")
    panel.refresh()
    assert panel.stats()["kernel"] == (5.0, 1)              # follows the view that computes
    assert "Distance heatmap" in panel.title.text()
    assert panel.source_combo.count() == 2
    panel.show_source("mandelbrot")
    assert panel.stats()["kernel"] == (3.0, 3) and "mandel" in panel.title.text()
    assert [n for n, _ in panel.shown().frames] == [1, 2, 3]
    # the same view computing again does not pull the panel away from the one picked
    panel.source_combo.activated.emit(panel.source_combo.findText("Distance heatmap — GPU"))
    panel.add(timings(kernel=6.0, total=6.0), "distance")
    panel.refresh()
    assert panel.stats()["kernel"] == (11.0, 2)


def test_a_view_on_two_backends_has_two_histories(panel):
    panel.add(timings(backend="cpu", kernel=9.0, total=9.0), "mandelbrot")
    panel.add(timings(backend="cuda", kernel=1.0, total=1.0), "mandelbrot")
    panel.refresh()
    assert panel.stats()["kernel"] == (1.0, 1) and "GPU" in panel.title.text()


def test_cpu_shows_no_copy_rows_but_says_why(panel):
    panel.add(timings(backend="cpu", h2d=0.0, d2h=0.0, kernel=3.0, host=1.0, total=4.0), "distance")
    panel.refresh()
    names = [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]
    assert names == ["kernel / compute", "host"]
    text = panel.numbers.text()
    assert "copy" not in text.replace(NO_COPIES, "") and NO_COPIES in text
    assert NO_COPIES in panel.table_note.text()


def test_gpu_listing_has_copies_with_bandwidth_and_simulator_says_untimed(panel):
    panel.add(timings(h2d=1.0, kernel=2.0, d2h=1.0, total=4.5, bytes_={"h2d": 8_000_000,
                                                                         "d2h": 4_000_000}), "distance")
    panel.refresh()
    assert "8.0 GB/s" in panel.numbers.text() and "4.0 GB/s" in panel.numbers.text()
    panel.add(timings(host=0.5, total=3.0, bytes_={"d2h": 4096}), "random")   # simulator: no events
    panel.refresh()
    assert "not timed" in panel.numbers.text()
    assert tb.unaccounted_ms(panel.last()) == pytest.approx(2.5)


def test_compile_only_job_has_no_bar_but_is_counted(panel):
    panel.add(timings(backend="cpu", compile=650.0), "mandelbrot")
    panel.refresh()
    assert panel.bar.segments == [] and "compiled" in panel.title.text()
    assert "650.0 ms" in panel.compile_label.text()
    assert panel.chart.currentWidget() is panel.placeholder


def test_bar_labels_fit_their_segments_and_the_bar_adds_up(panel):
    # a thin segment (17.9 ms of 165) whose label used to be clipped to "7.9 ms"
    panel.add(timings(h2d=3.0, kernel=130.0, d2h=4.1, host=10.0, total=165.0), "mandelbrot")
    panel.refresh()
    fm = QFontMetrics(panel.bar.font())
    for width in (400, 250, 150):
        panel.bar.resize(width, panel.bar.height())
        rects = panel.bar.segment_rects()
        assert sum(r.width() for _, r, _ in rects) == pytest.approx(panel.bar.width() - 2)
        for seg, rect, label in rects:
            if label is not None:
                assert fm.horizontalAdvance(label) <= rect.width()
        assert any(label for *_, label in rects)            # the big kernel segment keeps its label
    assert panel.bar.total() == pytest.approx(165.0)
    ticks = panel.bar.ruler_ticks()
    assert ticks[0][1] == "0" and ticks[-1][1].endswith(" ms")
    assert all(0 <= x <= panel.bar.width() for x, _ in ticks)


def test_table_shares_include_unaccounted_and_reset_empties_everything(panel):
    panel.add(timings(kernel=1.0, d2h=0.5, total=2.0), "mandelbrot")
    panel.refresh()
    rows = {panel.table.item(r, 0).text(): panel.table.item(r, 2).text()
            for r in range(panel.table.rowCount())}
    assert rows == {"kernel / compute": "50.0 %", "device→host copy": "25.0 %", "unaccounted": "25.0 %"}
    panel.reset()
    assert panel.table.rowCount() == 0 and panel.chart.currentWidget() is panel.placeholder
    assert panel.source_combo.count() == 1 and not panel.source_combo.isEnabled()


def test_add_without_a_source_still_works(panel):
    panel.add(timings(kernel=1.0, total=1.0))
    panel.refresh()
    assert panel.stats()["kernel"] == (1.0, 1) and "all views" in panel.title.text()


def test_the_log_follows_the_computing_view_without_qt():
    from explorer.timing_log import TimingLog
    from explorer.timing_text import totals_rows
    log = TimingLog(maxlen=2)
    for k in range(3):
        log.add(timings(kernel=1.0, total=2.0), "mandelbrot")
    log.add(timings(backend="cpu", compile=5.0), "distance")       # compiled only: no frame
    assert log.shown_key == ("distance", "cpu") and log.shown().count == 0
    assert log.stats() == {"compile": (5.0, 1)} and log.jobs == 4
    log.show_source("mandelbrot")
    assert [n for n, _ in log.shown().frames] == [2, 3]              # the newest maxlen frames
    assert [r[1] for r in totals_rows(log.shown())] == [["kernel / compute", "3.000 ms", "50.0 %",
                                                          "1.000 ms"],
                                                         ["unaccounted", "3.000 ms", "50.0 %",
                                                          "1.000 ms"]]
    assert not log.pick(("random", "cuda")) and log.pick(("distance", "cpu"))
    log.reset()
    assert log.shown() is None and log.keys() == [] and log.jobs == 0


def test_reset_clears_the_shown_view_only_and_reset_all_clears_every_one(panel):
    """The report: Reset cleared every view's history, not the one selected."""
    panel.add(timings(kernel=1.0, total=2.0), "mandelbrot")
    panel.add(timings(backend="cpu", kernel=3.0, total=3.0), "distance")
    panel.refresh()
    assert panel.shown().source == "distance"
    assert "selected" in panel.reset_btn.toolTip() or "shown" in panel.reset_btn.toolTip()
    assert "other views keep" in panel.reset_btn.toolTip()
    panel.reset_btn.click()
    assert panel.log.keys() == [("mandelbrot", "cuda")]
    assert panel.shown() is None and panel.table.rowCount() == 0
    assert "Distance" in panel.title.text() and "none yet" in panel.title.text()
    assert panel.source_combo.currentText().endswith("no jobs since the reset")
    assert panel.source_combo.isEnabled()
    # the view's next job starts its fresh history on screen
    panel.add(timings(backend="cpu", kernel=5.0, total=5.0), "distance")
    panel.refresh()
    assert panel.shown().source == "distance" and panel.stats()["kernel"] == (5.0, 1)
    assert panel.shown().count == 1
    # the kept view is still there to pick, with its totals
    i = [panel.source_combo.itemData(k) for k in range(panel.source_combo.count())].index(
        ("mandelbrot", "cuda"))
    panel.source_combo.setCurrentIndex(i)
    panel.source_combo.activated.emit(i)
    assert panel.stats()["kernel"] == (1.0, 1)
    # Reset all: the button's context menu
    (action,) = [a for a in panel.reset_btn.actions() if "Reset all" in a.text()]
    assert panel.reset_btn.contextMenuPolicy() == Qt.ContextMenuPolicy.ActionsContextMenu
    action.trigger()
    assert panel.log.keys() == [] and panel.shown() is None
    assert panel.source_combo.count() == 1 and not panel.source_combo.isEnabled()


def test_the_log_resets_one_history_without_qt():
    from explorer.timing_log import TimingLog
    log = TimingLog()
    log.add(timings(kernel=1.0, total=1.0), "mandelbrot")
    log.add(timings(kernel=1.0, total=1.0), "random")
    assert log.reset_shown() == ("random", "cuda")
    assert log.keys() == [("mandelbrot", "cuda")] and log.shown() is None
    assert log.wanted_source == "random" and log.reset_shown() is None
    log.add(timings(kernel=1.0, total=1.0), "mandelbrot")     # the same view as before the reset
    assert log.shown_key == ("mandelbrot", "cuda") and log.shown().count == 2


def test_unaccounted_is_split_into_the_host_costs_noted_and_a_named_rest():
    t = timings(kernel=5.0, total=20.0)
    t.detail.update({"allocate": 8.0, "launch setup": 2.0})
    segs = tb.frame_segments(t)
    other = {s.key: s.ms for s in segs if s.phase == "other"}
    assert other == pytest.approx({"allocate": 8.0, "launch setup": 2.0, "rest": 5.0})
    assert sum(s.ms for s in segs) == pytest.approx(tb.frame_total(t))


def test_host_costs_above_the_unaccounted_rest_are_scaled_to_it():
    t = timings(kernel=5.0, total=9.0)      # 4 ms unaccounted, 8 ms of costs noted
    t.detail.update({"allocate": 6.0, "timing setup": 2.0})
    other = {s.key: s.ms for s in tb.frame_segments(t) if s.phase == "other"}
    assert other == pytest.approx({"allocate": 3.0, "timing setup": 1.0})


def test_listing_says_how_the_frame_was_timed():
    from explorer.timing_text import listing_html
    t = timings(kernel=5.0, total=6.0)
    t.method = "CUDA events behind a gate"
    html = listing_html(t)
    assert "timed by: CUDA events behind a gate" in html and "no pause" in html
