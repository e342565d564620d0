"""The roofline in the bench report: counted work per result, its rates, the roof and the % of it."""
import json

import pytest

import main
from cli import bench as cli_bench
from kernels import bench
from kernels.roofs import Roofs, add_roofs
from kernels.roofs import report as rr
from kernels.roofs.work import Work, record
from kernels.timing import Timings


def run(kernel_ms, colour_ms):
    t = Timings(backend="cpu", label="frame")
    t.phases_ms.update(kernel=kernel_ms, total=kernel_ms)
    t.detail["colourise"] = colour_ms
    return record(t, Work("escape", "f64", 4e9, 1e8, minus=("colourise",)))


ROOFS = Roofs("cpu", "test", bandwidth_Bps=10e9, f32_flops=2e12, f64_flops=1e12, int32_ops=1e12,
              key="k")


def test_result_carries_the_work_and_its_median_time():
    runs = [run(12.0, 2.0), run(6.0, 1.0), run(9.0, 1.0)]
    (w,) = bench.result("w", "cpu", "v", "1x1", runs)["work"]
    assert w["ops"] == 4e9 and w["bytes"] == 1e8 and w["seconds"] == pytest.approx(0.008)


def test_annotate_places_each_work_under_the_roofs():
    rep = {"results": [bench.result("w", "cpu", "v", "1x1", [run(12.0, 2.0)])]}
    rr.annotate(rep, ROOFS)
    (w,) = rep["results"][0]["work"]
    assert w["intensity"] == pytest.approx(40.0)
    # AI 40 × 10 GB/s = 400 Gflop/s < the 1 Tflop/s peak: memory bound
    assert w["roof"] == "memory" and w["roof_per_s"] == pytest.approx(400e9)
    assert w["ops_per_s"] == pytest.approx(400e9)
    assert w["roof_percent"] == pytest.approx(100.0)
    assert rep["roofs"]["f64_flops"] == 1e12
    assert rr.roof_percent(rep["results"][0]) == pytest.approx(100.0)


def test_roofs_are_measured_only_when_work_was_counted():
    calls = []
    rep = {"results": [bench.result("w", "cpu", "v", "1x1", [Timings()])]}
    add_roofs(rep, "cpu", measure=lambda be: calls.append(be) or ROOFS)
    assert rep["roofs"] is None and calls == []
    rep = {"results": [bench.result("w", "cpu", "v", "1x1", [run(12.0, 2.0)])]}
    add_roofs(rep, "cpu", measure=lambda be: calls.append(be) or ROOFS)
    assert calls == ["cpu"] and rep["results"][0]["work"][0]["roof_percent"] is not None


def test_the_table_has_a_roof_column():
    rep = {"device": "test", "results": [bench.result("w", "cpu", "v", "1x1", [run(12.0, 2.0)])]}
    rr.annotate(rep, ROOFS)
    lines = cli_bench.table(rep).splitlines()
    assert "% roof" in lines[1]
    assert " 100.0 " in lines[3]


def test_bench_json_of_a_counted_workload(tmp_path, monkeypatch):
    import kernels.roofs as roofs_pkg
    monkeypatch.setattr(roofs_pkg, "measure_roofs", lambda be, **kw: Roofs(
        "cpu", "test", bandwidth_Bps=10e9, f32_flops=1e12, f64_flops=1e12, int32_ops=1e12,
        key=roofs_pkg.device_key(be)))
    monkeypatch.setenv("GPU_EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "b.json"
    assert main.main(["--bench", "--backend", "cpu", "--only", "distance", "--repeats", "2",
                      "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    assert rep["roofs"]["f64_flops"] == 1e12
    counted = [w for r in rep["results"] for w in r["work"]]
    assert counted and all(w["roof_percent"] > 0 and w["ops_per_s"] > 0 for w in counted)
