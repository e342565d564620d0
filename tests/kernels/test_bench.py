import json

import numpy as np

import pytest

import main
from kernels import bench, transfer
from kernels.backend import Backend
from kernels.timing import Timings


def _t(kernel, total):
    t = Timings()
    t.phases_ms.update(kernel=kernel, total=total)
    return t


def test_median_ignores_unmeasured_phases():
    med = bench.median_timings([_t(1.0, 2.0), _t(3.0, 4.0), _t(2.0, 9.0)])
    assert med["kernel"] == 2.0 and med["total"] == 4.0 and med["h2d"] is None


def test_bench_json_layout(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(transfer, "DEFAULT_BYTES", 1 << 20)
    out = tmp_path / "bench.json"
    assert main.main(["--bench", "--backend", "cpu", "--only", "transfer", "--repeats", "3",
                      "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    assert set(rep) == {"device", "versions", "date", "results", "roofs"}
    assert rep["roofs"] is None         # copies count no work: no roofs measured for them
    assert "numpy" in rep["versions"]
    r = rep["results"][0]
    assert set(r) == {"workload", "backend", "variant", "size", "phases_ms", "bytes", "metrics",
                      "work"}
    assert set(r["phases_ms"]) == {"compile", "h2d", "kernel", "d2h", "host", "total"}
    assert r["backend"] == "cpu" and r["metrics"]["GB/s"] > 0
    assert "transfer" in capsys.readouterr().out


def test_unknown_workload_is_a_usage_error(capsys):
    assert main.main(["--bench", "--backend", "cpu", "--only", "no-such-thing"]) == 2
    assert "choose one of" in capsys.readouterr().err


@pytest.mark.gpu
def test_transfer_probe_on_gpu(gpu_backend, simulated):
    refs = transfer.measure(gpu_backend, nbytes=4096 if simulated else 64 << 20, repeats=2)
    assert set(refs) >= {"cpu-copy", "d2d-copy", "h2d-pinned", "d2h-pinned"}
    if not simulated:
        assert refs["d2d-copy"] > refs["h2d-pageable"] > 0


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 255, 256, 257])
def test_copy_kernel_copies_every_element(gpu_backend, n):
    from numba import cuda
    src = np.random.default_rng(n).random(n, dtype=np.float32)
    d = cuda.to_device(np.full(n, -1.0, dtype=np.float32))  # poisoned: an unwritten element shows
    transfer._copy[(n + 255) // 256, 256](d, cuda.to_device(src))
    np.testing.assert_array_equal(d.copy_to_host(), src)


def test_cpu_copy_ceiling_is_the_faster_copy(monkeypatch):
    probe = transfer.TransferProbe(Backend("cpu"), 1 << 16)
    for par in (False, True):
        probe.cpu_copy(par)
        np.testing.assert_array_equal(probe._cpu_dst, probe.src_host)
    refs = transfer.measure(Backend("cpu"), nbytes=1 << 16, repeats=2)
    assert refs["cpu-copy"] == max(refs["cpu-copy-numpy"], refs["cpu-copy-parallel"])
