"""The throughput view's model without Qt: settings, results as they arrive, partial and cancelled
sweeps, the table's rows, and CSV/JSON exports built from the results."""
import csv
import datetime as dt
import io
import math
import subprocess
import sys

import pytest

from explorer.models.throughput import COLUMNS, ThroughputModel, pow2_label, table_row
from kernels.vector import sweep as vs

REFS = {"d2d-copy": 900.0, "h2d-pinned": 25.0, "d2h-pinned": 24.0, "cpu-copy": 12.0,
        "h2d-pageable": 9.0}


def point(impl, n, ms, mode="kernel", op="add", **kw):
    gbs = 12 * n / (ms * 1e-3) / 1e9
    return vs.SweepPoint(op, impl, mode, n, time_ms=ms, kernel_ms=ms, gbs=gbs,
                         gelems=n / (ms * 1e-3) / 1e9, repeats=3, **kw)


@pytest.fixture
def model(cpu_backend):
    m = ThroughputModel(cpu_backend)
    m.events = []
    m.subscribe(lambda event, *args: m.events.append((event, *args)))
    return m


def names(model):
    return [e[0] for e in model.events]


def test_the_model_imports_no_qt():
    code = ("import sys, explorer.models.throughput; "
            "sys.exit(any(m.split('.')[0] in ('PyQt6', 'pyqtgraph') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_cpu_backend_offers_cpu_implementations_and_kernel_mode(model):
    assert model.checked_impls() == ["cpu-numba", "numpy"]
    assert model.checked_modes() == ["kernel"]
    cuda = next(c for c in model.impls if c.name == "cuda-jit")
    assert "needs the CUDA backend" in cuda.reason
    assert model.size_choices()[0] == (10, "2^10 (1 K)") and model.max_exp in model.size_exponents
    assert model.info.startswith("Backend: ") and "Press Run (F5)" in model.info


def test_ticks_change_only_what_can_run_and_tell_observers(model):
    model.set_impl_checked("cuda-jit", True)          # unavailable on the CPU: ignored
    model.set_mode_checked("pinned", True)            # needs the GPU: ignored
    assert model.events == []
    model.set_impl_checked("numpy", False)
    assert model.checked_impls() == ["cpu-numba"] and names(model) == ["checked"]
    model.set_impl_checked("numpy", False)            # no change, no event
    assert names(model) == ["checked"]
    model.set_checked(impls=["numpy", "cuda-jit"], modes=["kernel", "pinned"])
    assert model.checked_impls() == ["numpy"] and model.checked_modes() == ["kernel"]
    model.set_max_exp(12)
    model.set_max_exp(99)                             # not offered: ignored
    model.set_metric("Gelem/s")
    assert model.max_exp == 12 and model.events[-2:] == [("settings", "max_exp"),
                                                          ("settings", "metric")]


def test_nothing_ticked_starts_nothing_and_says_why(model):
    model.set_checked(impls=[])
    assert model.start() is None
    assert model.events[-1] == ("status", "Check at least one implementation and one mode", 5000)
    assert model.state == "idle"


def test_results_arrive_into_table_rows_curves_and_ceilings(model):
    model.set_op("triad")
    model.set_max_exp(11)
    req = model.start()
    assert (req.op, req.impls, req.modes, req.sizes) == ("triad", ("cpu-numba", "numpy"),
                                                         ("kernel",), (1024, 2048))
    assert model.running and model.total == 4 and model.progress == 0
    assert model.title().startswith("triad: ")
    model.events.clear()
    model.add(vs.SweepReferences(dict(REFS), 2**20))
    model.add(point("numpy", 2048, 0.02, op="triad", index=1, total=4, min_ms=0.01, max_ms=0.04))
    model.add(point("numpy", 1024, 0.01, op="triad", index=2, total=4))
    model.add(vs.SweepPoint("triad", "cpu-numba", "kernel", 2**30, skipped="does not fit",
                            index=3, total=4))
    assert [n for n in names(model) if n != "status"] == ["references", "point", "point", "point"]
    assert model.progress == 3 and model.running
    rows = model.table_rows()
    assert rows[0] == table_row(model.points[0]) and rows[0][:4] == ["triad", "numpy", "kernel", "2048"]
    assert rows[2][-1] == "does not fit" and rows[2][8] == ""
    x, y = model.curve("numpy", "kernel")                       # sorted by N
    assert list(x) == [1024, 2048] and y[0] == pytest.approx(model.points[1].gbs)
    assert len(model.curve("cpu-numba", "kernel")[0]) == 0      # skipped points are not drawn
    sx, sy, top, bottom = model.spread("numpy", "kernel")       # only the timed spread
    assert list(sx) == [pytest.approx(math.log10(2048))] and top[0] > 0 and bottom[0] > 0
    assert model.reference_value("cpu-copy") == 12.0
    assert model.size_span() == (1024, 2**30)
    model.set_metric("Gelem/s")
    assert model.axis_label() == "G elements/s"
    assert model.reference_value("cpu-copy") == pytest.approx(12.0 / 12)   # triad: 12 B/elem
    assert model.curve("numpy", "kernel")[1][0] == pytest.approx(model.points[1].gelems)
    model.finish(vs.SweepSummary(3, 4))
    assert model.state == "done" and model.complete and not model.running
    assert model.info == "Sweep done: 2 point(s) measured, 1 skipped (see the note column)"
    assert model.events[-2:] == [("finished",), ("status", model.info, 8000)]


def test_a_cancelled_sweep_keeps_what_it_measured(model):
    model.start()
    model.add(point("numpy", 1024, 0.01, index=1))
    model.add(point("numpy", 2048, 0.02, index=2))
    model.cancelled()
    assert model.state == "cancelled" and not model.complete and not model.running
    assert model.info == "Sweep cancelled after 2 point(s)"
    assert len(model.table_rows()) == 2
    assert model.csv_text().count("\n") == 3
    model.start()                                              # a new sweep forgets them
    assert model.points == [] and model.table_rows() == [] and model.refs == {}


def test_errors_stop_or_fail_the_sweep_and_unavailable_implementations_are_kept(model):
    model.start()
    model.add(vs.ImplUnavailableNotice("cpu-numba", "no compiler"))
    assert model.unavailable == {"cpu-numba": "no compiler"}
    assert model.checked_impls() == ["numpy"]
    model.add(vs.SweepNotice("fyi"))
    model.add(vs.SweepError("CUDA_ERROR_ILLEGAL_ADDRESS"))
    assert ("unavailable", "cpu-numba", "no compiler") in model.events
    assert ("status", "fyi", 8000) in model.events
    assert ("error", "CUDA_ERROR_ILLEGAL_ADDRESS") in model.events
    model.finish(vs.SweepSummary(0, 2, error="CUDA_ERROR_ILLEGAL_ADDRESS"))
    assert model.state == "stopped" and model.info == "Sweep stopped: CUDA_ERROR_ILLEGAL_ADDRESS"
    model.start()
    assert model.last_error is None
    model.fail("worker died")
    assert model.state == "failed" and model.last_error == "worker died"
    assert ("error", "worker died") in model.events and model.info == "Sweep failed: worker died"
    model.set_backend(model.backend)                           # a backend switch offers all again
    assert model.unavailable == {} and model.checked_impls() == ["cpu-numba", "numpy"]
    assert model.events[-1] == ("choices",)


def test_crossover_is_the_size_from_which_the_gpu_end_to_end_wins(model):
    model.set_op("add")
    model.start()
    for n, g in ((1024, 0.2), (2048, 2), (4096, 4)):
        model.add(vs.SweepPoint("add", "cpu-numba", "kernel", n, gelems=1.0, gbs=12.0, repeats=1))
        model.add(vs.SweepPoint("add", "cuda-jit", "pinned", n, gelems=g, gbs=12 * g, repeats=1))
    assert model.crossover_n() == 2048 and pow2_label(2048) == "2^11 (2 K)"


def test_csv_and_json_are_built_from_the_results(model):
    model.start()
    model.add(vs.SweepReferences(dict(REFS), 2**20))
    model.add(point("numpy", 1024, 0.01, index=1, total=2))
    model.add(point("cpu-numba", 1024, 0.02, index=2, total=2, note="slow"))
    model.finish(vs.SweepSummary(2, 2))
    rows = list(csv.reader(io.StringIO(model.csv_text(), newline="")))
    assert tuple(rows[0]) == COLUMNS and rows[1:] == model.table_rows()
    assert rows[2][-1] == "slow" and float(rows[1][8]) == pytest.approx(model.points[0].gbs, rel=1e-3)
    when = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
    doc = model.json_document(when)
    assert doc["view"] == "throughput" and doc["backend"] == model.backend.name
    assert doc["date"] == "2024-05-01T12:00:00+00:00" and doc["op"] == "add"
    assert doc["references_gbs"] == REFS and doc["crossover_n"] is None
    assert doc["unavailable"] == {} and doc["error"] is None
    assert doc["points"] == [p.as_dict() for p in model.points]


def test_a_cancelled_sweeps_json_says_it_is_partial_with_how_many_points(model):
    model.start()
    model.total = 26
    model.add(vs.SweepReferences(dict(REFS), 2**20))
    for i, n in enumerate((1024, 2048, 4096), 1):
        model.add(point("numpy", n, 0.01, index=i, total=26))
    model.cancelled()
    doc = model.json_document()
    assert doc["state"] == "cancelled" and doc["partial"] is True
    assert doc["points_done"] == 3 and doc["points_planned"] == 26
    assert doc["completeness"] == "partial (sweep cancelled): 3 of 26 points"
    assert len(doc["points"]) == 3
    model.fail("worker died")
    assert model.json_document()["partial"] is True and "failed" in model.completeness()
    # a whole sweep says so too
    model.start()
    model.total = 1
    model.add(point("numpy", 1024, 0.01, index=1, total=1))
    model.finish(vs.SweepSummary(1, 1))
    doc = model.json_document()
    assert doc["partial"] is False and doc["state"] == "done"
    assert doc["completeness"] == "complete: 1 of 1 points"


def test_a_running_sweep_keeps_a_status_line_until_it_ends(model):
    model.start()
    statuses = [e[1:] for e in model.events if e[0] == "status"]
    assert statuses[-1][1] == 0 and "started" in statuses[-1][0]      # no timeout
    model.add(point("numpy", 1024, 0.01, index=1))
    text, ms = [e[1:] for e in model.events if e[0] == "status"][-1]
    assert ms == 0 and f"1 / {model.total} points" in text
    model.finish(None)
    text, ms = [e[1:] for e in model.events if e[0] == "status"][-1]
    assert text.startswith("Sweep done") and ms > 0
