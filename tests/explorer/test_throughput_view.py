"""The throughput view: a small CPU sweep draws curves, fills the table, exports what it shows;
cancel, failures and unavailable implementations keep the view usable."""
import csv
import json
import math

import numpy as np
import pytest

from kernels.scheduler import Delivered, Progress
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QApplication

from explorer.views.throughput import COLUMNS, ThroughputView
from kernels.vector import sweep as vector_sweep
from kernels.vector.ops import Impl, ImplUnavailable


@pytest.fixture
def view(qtbot, scheduler, cpu_backend):
    v = ThroughputView(scheduler, cpu_backend)
    qtbot.addWidget(v)
    v.model.ref_bytes = 2**16
    v.model.repeats = 2
    v.set_max_exponent(12)
    v.resize(1100, 650)
    yield v
    v.shutdown()


def _run(qtbot, view, timeout=60000):
    with qtbot.waitSignal(view.scheduler.event, timeout=timeout,
                          check_params_cb=lambda ev: isinstance(ev, Delivered)):
        view.start_sweep()
    qtbot.waitUntil(lambda: not view.in_flight, timeout=timeout)


def test_cpu_backend_offers_cpu_implementations_only(view):
    assert view.checked_impls() == ["cpu-numba", "numpy"]
    assert view.checked_modes() == ["kernel"]
    items = {view.impl_list.item(i).text(): view.impl_list.item(i) for i in range(view.impl_list.count())}
    for name in ("vectorize", "cuda-jit", "cuda-jit-ilp4", "nvrtc", "nvrtc-ilp4", "pycuda"):
        assert not items[name].flags() & Qt.ItemFlag.ItemIsEnabled
        # issue 24: without a usable GPU the reason is that, not "the CPU backend is selected"
        from kernels.backend import cuda_status
        st = cuda_status()
        assert ("unavailable: needs the GPU: switch to it" if st.usable else
                f"unavailable: there is no usable GPU here: {st.reason}") in items[name].toolTip()
    for name in ("cuda-jit-ilp4", "nvrtc-ilp4"):   # the tooltip says what ILP means here
        assert "ILP (instruction-level parallelism)" in items[name].toolTip()
        assert "before any store" in items[name].toolTip()
    assert not view.mode_checks["pinned"].isEnabled()
    assert view.max_combo.currentData() == 12


def test_small_cpu_sweep_draws_fills_and_exports(qtbot, view, tmp_path):
    timings = []
    view.timings_ready.connect(timings.append)
    view.op_combo.setCurrentText("triad")
    _run(qtbot, view)
    # 3 sizes × 2 implementations, the references after the first size
    assert view.model.refs["cpu-copy"] > 0
    assert len(view.model.points) == 6 and view.table.rowCount() == 6
    assert set(view.plot.drawn_curves()) == {("cpu-numba", "kernel"), ("numpy", "kernel")}
    for curve in view.plot.drawn_curves().values():
        x, y = curve.getOriginalDataset()
        assert list(x) == [1024, 2048, 4096] and np.all(y > 0)
    assert len(view.plot.reference_lines()) == 1 and "CPU copy" in view.plot.reference_lines()[0].label.toPlainText()
    assert len(timings) == 6 and all(t.phases_ms["kernel"] > 0 for t in timings)
    assert view.progress.value() == view.progress.maximum() == 6
    assert view.progress.text() == "6 / 6 points"
    assert view.run_button.isEnabled() and not view.cancel_button.isEnabled()

    path = tmp_path / "sweep.csv"
    view.export_csv(str(path))
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == COLUMNS
    assert rows[1:] == view.table_rows()
    assert rows[1][0] == "triad" and float(rows[1][8]) > 0

    jpath = tmp_path / "sweep.json"
    view.export_json(str(jpath))
    doc = json.loads(jpath.read_text())
    assert doc["op"] == "triad" and len(doc["points"]) == 6
    assert doc["points"][0]["GB/s"] == pytest.approx(float(rows[1][8]), rel=1e-3)
    assert doc["points"][0] == view.model.points[0].as_dict()
    assert doc["points"][0]["type"] == "point" and doc["points"][0]["phases_ms"]["kernel"] > 0

    view.metric_combo.setCurrentIndex(1)   # G elements/s
    x, y = view.plot.drawn_curves()[("numpy", "kernel")].getOriginalDataset()
    gelem = [p.gelems for p in view.model.points if p.impl == "numpy"]
    assert list(y) == pytest.approx(gelem)
    # the CPU-copy line becomes the element rate a copy at that bandwidth allows for triad
    ref = view.plot.reference_lines()[0]
    assert 10 ** ref.value() == pytest.approx(view.model.refs["cpu-copy"] / 12)

    view.metric_combo.setCurrentIndex(0)
    QApplication.processEvents()   # let the legend lay itself out before the screenshot
    view.grab().save("/tmp/throughput_view.png")


def test_unticking_an_implementation_hides_its_curve(qtbot, view):
    _run(qtbot, view)
    item = view.impl_list.item([view.impl_list.item(i).text()
                                for i in range(view.impl_list.count())].index("numpy"))
    item.setCheckState(Qt.CheckState.Unchecked)
    assert not view.plot.drawn_curves()[("numpy", "kernel")].isVisible()
    assert view.plot.drawn_curves()[("cpu-numba", "kernel")].isVisible()


def test_cancel_stops_the_sweep_and_the_view_keeps_working(qtbot, view, tmp_path):
    view.set_max_exponent(22)
    first = []
    view.scheduler.event.connect(lambda ev: first.append(ev.item) if isinstance(ev, Progress) else None)
    view.start_sweep()
    qtbot.waitUntil(lambda: any(isinstance(i, vector_sweep.SweepPoint) for i in first), timeout=30000)
    view.cancel_sweep()
    assert not view.in_flight and view.run_button.isEnabled()
    assert "cancelled" in view.info.text()
    assert len(view.model.points) < 26
    # the export of what was measured says it is not the whole sweep
    saved = []
    view.status_message.connect(lambda text, ms: saved.append(text))
    view.save_json(str(tmp_path / "cut.json"))
    doc = json.loads((tmp_path / "cut.json").read_text())
    done = len(view.model.points)
    assert doc["partial"] is True and doc["state"] == "cancelled"
    assert (doc["points_done"], doc["points_planned"]) == (done, 26) and len(doc["points"]) == done
    assert saved and saved[-1].endswith(f"partial (sweep cancelled): {done} of 26 points")
    view.set_max_exponent(10)
    _run(qtbot, view)
    assert len(view.model.points) == 2


def test_a_gpu_error_mid_sweep_is_shown_and_the_view_recovers(qtbot, view, monkeypatch):
    def flaky_copy(ins, out, s, stream=None):
        if out.size > 1024:
            raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS")
        np.copyto(out, ins[0])

    def broken(ins, out, s, stream=None):
        raise ImplUnavailable("NVRTC could not compile 'copy': syntax error")

    fakes = [Impl("numpy", True, "", "cpu", "", {"copy": flaky_copy}),
             Impl("cpu-numba", True, "", "cpu", "", {"copy": broken})]
    monkeypatch.setattr(vector_sweep, "implementations", lambda backend: fakes)
    errors = []
    view.error_message.connect(errors.append)
    view.op_combo.setCurrentText("copy")
    _run(qtbot, view)
    assert errors and "ILLEGAL_ADDRESS" in errors[0]
    assert "stopped" in view.info.text()
    assert view.model.unavailable == {"cpu-numba": "NVRTC could not compile 'copy': syntax error"}
    item = view.impl_list.item(view.impl_list.count() - 2)
    assert item.text() == "cpu-numba" and not item.flags() & Qt.ItemFlag.ItemIsEnabled
    assert "syntax error" in item.toolTip()
    assert view.run_button.isEnabled()
    monkeypatch.undo()
    view.backend_changed()         # e.g. a backend switch: everything offered again
    view.set_max_exponent(10)
    _run(qtbot, view)
    assert len(view.model.points) == 2 and not view.model.last_error


def test_crossover_marker(qtbot, view):
    point = vector_sweep.SweepPoint
    pts = [point("add", "cpu-numba", "kernel", n, gelems=1.0, gbs=12.0, repeats=1)
           for n in (1024, 2048, 4096)]
    pts += [point("add", "cuda-jit", "pinned", n, gelems=g, gbs=12 * g, repeats=1)
            for n, g in ((1024, 0.2), (2048, 2), (4096, 4))]
    view.op_combo.setCurrentText("add")
    view.model.start()                       # what a sweep of add delivers, without running one
    for p in pts:
        view.on_progress(p)
    view.on_result(vector_sweep.SweepSummary(len(pts), len(pts)))
    line = view.plot.crossover_line()
    assert line is not None
    assert line.value() == pytest.approx(math.log10(2048))
    assert "2^11" in line.label.toPlainText()


@pytest.mark.gpu
def test_small_gpu_sweep(qtbot, scheduler, gpu_backend, simulated):
    view = ThroughputView(scheduler, gpu_backend)
    qtbot.addWidget(view)
    view.model.ref_bytes = 2**16
    view.model.repeats = 2
    view.set_max_exponent(10 if simulated else 16)
    assert view.checked_modes() == ["kernel", "pinned", "pageable"]
    if simulated:
        for i in range(view.impl_list.count()):
            item = view.impl_list.item(i)
            if item.text() in ("vectorize", "nvrtc", "nvrtc-ilp4", "pycuda"):
                assert not item.flags() & Qt.ItemFlag.ItemIsEnabled and "simulator" in item.toolTip()
            if item.text() == "cuda-jit-ilp4":   # runs in the simulator too
                assert item.flags() & Qt.ItemFlag.ItemIsEnabled
    view.set_checked(impls=["cuda-jit", "cuda-jit-ilp4", "cpu-numba"])
    view.op_combo.setCurrentText("saxpy")
    timings = []
    view.timings_ready.connect(timings.append)
    _run(qtbot, view, timeout=120000)
    sizes = 1 if simulated else 7
    assert len(view.model.points) == 7 * sizes and view.table.rowCount() == 7 * sizes
    assert all(not p.skipped for p in view.model.points)
    gpu_pts = [p for p in view.model.points if p.impl.startswith("cuda-jit")]
    if simulated:   # no event timing in the simulator: nothing drawn, nothing invented
        assert all(p.gbs is None for p in gpu_pts)
        assert all(t.phases_ms["kernel"] is None for t in timings if t.backend == "cuda"
                   and "cuda-jit" in t.label)
    else:
        assert all(p.gbs > 0 for p in gpu_pts)
        assert {(i, m) for i in ("cuda-jit", "cuda-jit-ilp4")
                for m in ("kernel", "pinned", "pageable")} <= set(view.plot.drawn_curves())
        assert len(view.plot.reference_lines()) == 4
    view.shutdown()


def test_dot_is_offered_and_swept(qtbot, view):
    ops = [view.op_combo.itemText(i) for i in range(view.op_combo.count())]
    assert ops[-1] == "dot"
    assert view.op_combo.itemData(len(ops) - 1, Qt.ItemDataRole.ToolTipRole).startswith(
        "sum = Σ a·b: 8 bytes and 2 flops")
    view.op_combo.setCurrentText("dot")
    view.set_max_exponent(11)
    _run(qtbot, view)
    assert len(view.model.points) == 4 and view.table.rowCount() == 4
    assert all(p.op == "dot" and p.gbs > 0 and p.bytes == 8 * p.N for p in view.model.points)
    assert view.table_rows()[0][:4] == ["dot", "cpu-numba", "kernel", "1024"]


def test_before_a_sweep_the_counter_says_none_ran_and_no_tip_speaks_of_history(view):
    assert view.progress.text() == "No sweep run yet (F5)"       # not "0 / 100 points"
    from explorer.views.throughput_controls import MODE_TIPS
    assert not any("seed" in tip for tip in MODE_TIPS.values())
