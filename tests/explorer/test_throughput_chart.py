"""The throughput chart's styling: a key shown by default, colours no two alike, neutral reference
lines, and the spread of the repeats drawn at every point."""
import itertools

import pytest
from PyQt6.QtCore import QPointF, Qt
from PyQt6.QtGui import QColor
from PyQt6.QtWidgets import QApplication

from explorer.views.throughput import IMPL_COLOURS, REF_LINES, ThroughputView
from kernels.vector import sweep as vector_sweep


@pytest.fixture
def view(qtbot, scheduler, cpu_backend):
    v = ThroughputView(scheduler, cpu_backend)
    qtbot.addWidget(v)
    v.resize(1100, 650)
    v.show()
    yield v
    v.shutdown()


def feed(view, points):
    """What a sweep delivers, without running one: references, then points (add: 12 bytes/elem)."""
    view.on_progress(vector_sweep.SweepReferences(
        {"d2d-copy": 900.0, "h2d-pinned": 25.0, "d2h-pinned": 24.0, "cpu-copy": 12.0}, 2**20))
    for impl, mode, n, ms, lo, hi in points:
        gbs = 12 * n / (ms * 1e-3) / 1e9
        view.on_progress(vector_sweep.SweepPoint("add", impl, mode, n, time_ms=ms, kernel_ms=ms,
                                                 gbs=gbs, gelems=n / (ms * 1e-3) / 1e9, repeats=5,
                                                 min_ms=lo, max_ms=hi))


POINTS = [("cpu-numba", "kernel", 1024, 0.010, 0.009, 0.012),
          ("cpu-numba", "kernel", 2048, 0.030, 0.012, 0.040),   # a dip with a wide spread
          ("numpy", "kernel", 1024, 0.008, 0.008, 0.009),
          ("numpy", "kernel", 2048, 0.010, 0.009, 0.011)]


def _grey(colour: QColor) -> bool:
    return colour.red() == colour.green() == colour.blue()


def test_key_is_on_by_default_and_names_implementations_and_modes(view):
    assert view.legend_check.isChecked() and view.legend.isVisible()
    feed(view, POINTS)
    labels = [label.text for _, label in view.legend.items]
    assert labels == ["cpu-numba", "numpy", "kernel (all)"]
    view.legend_check.setChecked(False)
    assert not view.legend.isVisible()


def test_implementation_colours_are_distinct_and_never_grey():
    colours = [QColor(c) for c in IMPL_COLOURS.values()]
    assert not any(_grey(c) for c in colours)
    for a, b in itertools.combinations(colours, 2):
        dist = sum((x - y) ** 2 for x, y in zip(a.getRgb()[:3], b.getRgb()[:3])) ** 0.5
        assert dist > 60, (a.name(), b.name())


def test_reference_lines_are_grey_and_differ_from_every_curve(view):
    feed(view, POINTS)
    assert len(view.plot.reference_lines()) == len(REF_LINES)
    curve_pens = {(c.opts["pen"].color().name(), c.opts["pen"].style()) for c in view.plot.drawn_curves().values()}
    styles = set()
    for line in view.plot.reference_lines():
        pen = line.pen
        assert _grey(pen.color()) and (pen.color().name(), pen.style()) not in curve_pens
        assert pen.style() != Qt.PenStyle.SolidLine
        styles.add(pen.style())
        assert line.label.toPlainText().split()[0] in {"device", "h→d", "d→h", "CPU"}
    assert len(styles) == len(REF_LINES)         # each reference its own dash pattern


def test_spread_of_the_repeats_is_drawn_at_each_point(view):
    feed(view, POINTS)
    bars = view.plot.spread_bars("cpu-numba", "kernel")
    top, bottom = bars.opts["top"], bars.opts["bottom"]
    assert len(top) == 2 and all(top >= 0) and all(bottom >= 0)
    assert bottom[1] > bottom[0] and top[1] > top[0]     # the dip's spread is the wider one
    assert bars.isVisible() == view.plot.drawn_curves()[("cpu-numba", "kernel")].isVisible()


def test_clicking_a_key_entry_unticks_its_implementation(view):
    feed(view, POINTS)
    sample = view.plot.key_sample("impl", "numpy")
    sample.setVisible(False)                     # what a click on the legend's sample does
    assert "numpy" not in view.checked_impls()
    assert not view.plot.drawn_curves()[("numpy", "kernel")].isVisible()
    assert not view.plot.spread_bars("numpy", "kernel").isVisible()
    sample.setVisible(True)
    assert view.plot.drawn_curves()[("numpy", "kernel")].isVisible()


def test_key_sits_under_the_chart_not_over_the_curves(view):
    feed(view, POINTS)
    QApplication.processEvents()
    vb = view.plot.getPlotItem().vb
    key = view.legend.mapRectToScene(view.legend.boundingRect())
    assert key.top() >= vb.mapRectToScene(vb.boundingRect()).bottom()
    view.grab().save("/tmp/throughput_chart.png")


def _label_rect(line):
    return line.label.mapRectToScene(line.label.boundingRect())


def _line_y(view, line):
    from PyQt6.QtCore import QPointF
    return view.plot.getPlotItem().vb.mapViewToScene(QPointF(0.0, line.value())).y()


def test_reference_labels_sit_in_front_of_the_curves_inside_the_plot_and_apart(view):
    feed(view, POINTS)       # h→d 25 and d→h 24 GB/s: closer than a label is tall
    QApplication.processEvents()
    vb = view.plot.getPlotItem().vb
    box = vb.sceneBoundingRect()
    curves_z = max(c.zValue() for c in view.plot.drawn_curves().values())
    rects = []
    for line in view.plot.reference_lines():
        rect = _label_rect(line)
        assert line.label.zValue() > curves_z and line.label.isVisible()
        assert box.contains(rect), (line.label.toPlainText(), rect, box)
        y = _line_y(view, line)
        assert rect.bottom() <= y + 1 or rect.top() >= y - 1        # never across its line
        rects.append(rect)
    for a, b in itertools.combinations(rects, 2):
        assert not a.intersected(b).height() > 1, "two reference labels overlap"


def test_a_reference_label_moves_to_the_end_where_no_curve_runs(view):
    """The report's case: the CPU curves reach and pass the CPU copy line at large N."""
    view.on_progress(vector_sweep.SweepReferences({"cpu-copy": 12.0}, 2**20))
    for k in range(10, 23):
        n = 2 ** k
        gbs = 0.5 if k < 14 else 12.5          # under the line at small N, just over it at large N
        ms = 12 * n / (gbs * 1e9) * 1e3
        view.on_progress(vector_sweep.SweepPoint("add", "numpy", "kernel", n, time_ms=ms,
                                                 kernel_ms=ms, gbs=gbs, gelems=gbs / 12, repeats=1))
    QApplication.processEvents()
    (line,) = view.plot.reference_lines()
    assert line.label.end == "left"
    x, y = view.plot.drawn_curves()[("numpy", "kernel")].getData()
    vb = view.plot.getPlotItem().vb
    from PyQt6.QtCore import QPointF
    rect = _label_rect(line)
    assert not any(rect.contains(vb.mapViewToScene(QPointF(a, b))) for a, b in zip(x, y))


def test_the_key_wraps_in_a_narrow_window_so_the_plot_keeps_its_right_end(qtbot, view):
    feed(view, POINTS + [("nvrtc", "pinned", 1024, 0.01, 0.01, 0.01),
                         ("cuda-jit", "pageable", 1024, 0.01, 0.01, 0.01)])
    columns = []
    for width in (1100, 640, 1100):
        view.resize(width, 650)
        qtbot.waitUntil(lambda: view.plot.width() < width - 250)
        QApplication.processEvents()
        item = view.plot.getPlotItem()
        assert item.geometry().width() <= view.plot.width() + 1
        for line in view.plot.reference_lines():
            assert item.vb.sceneBoundingRect().contains(_label_rect(line))
        columns.append(view.legend.columnCount)
    assert columns[0] == columns[2] > columns[1] >= 1


def test_a_reference_label_covers_no_curve_when_curves_cross_its_line_at_both_ends(view):
    """The first hour's case: one CPU curve crosses the CPU copy line at small N, the other
    falls back under it at large N; neither end is free, the middle is."""
    view.on_progress(vector_sweep.SweepReferences({"cpu-copy": 32.0}, 2**22))
    for k in range(10, 23):
        n = 2 ** k
        for impl, gbs in (("numpy", 12.0 if k < 12 else 90.0),
                          ("cpu-numba", 140.0 if k < 21 else 20.0)):
            ms = 12 * n / (gbs * 1e9) * 1e3
            view.on_progress(vector_sweep.SweepPoint("add", impl, "kernel", n, time_ms=ms,
                                                     kernel_ms=ms, gbs=gbs, gelems=gbs / 12,
                                                     repeats=1))
    QApplication.processEvents()
    (line,) = view.plot.reference_lines()
    vb = view.plot.getPlotItem().vb
    points = view.plot._curve_points(view.plot._view_to_scene(vb, vb.sceneBoundingRect()))
    rect = _label_rect(line)
    assert not any(rect.contains(QPointF(float(x), float(y))) for x, y in points)
    assert line.label.end == "middle"
