"""KF's benchmark locations on the GPU: a workload's first frame (reference + table + kernel) on
the CUDA backend gives the CPU twin's counts, and its speed-up beside KF's logged time is reported
at the GPU size. Tiny sizes under the simulator; the real 1024x1024 numbers come from
`main.py --bench --backend cuda --only deep-kf`."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.backend import resolve
from kernels.mandelbrot.benches import place_bench
from kernels.mandelbrot.deep.renderer import DeepRenderer
from kernels.mandelbrot.requests.deep_request import DeepRequest
from services import kf_bench

pytestmark = pytest.mark.gpu
pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")


def test_a_kf_workload_runs_on_the_gpu_and_reports_its_speed_up(gpu_backend, simulated,
                                                                monkeypatch):
    if simulated:   # ~40 s there for its warm-up, first frame and re-render of 4,036 iterations
        pytest.skip("the bench row on a real GPU; the simulator leg checks the counts below")
    side = 1024
    monkeypatch.setattr(place_bench, "GPU_SIZE", (side, side))
    (w,) = [w for w in kf_bench.kf_workloads() if w.name == "deep-kf-1e14"]
    rows = w.run(gpu_backend, 1)
    first = rows[0]
    assert first["backend"] == "cuda" and first["size"] == f"{side}x{side}"
    assert first["metrics"]["x KF"] == pytest.approx(7.56e3 / first["metrics"]["wall ms"])


def test_the_gpu_gives_the_cpu_twins_counts_at_a_kf_location(gpu_backend, simulated):
    loc = kf_bench.load_location_file(kf_bench.shipped_file("kf-1e14.kfr")).place((1, 1))
    side = 6 if simulated else 64
    req = DeepRequest(str(loc.center_re), str(loc.center_im), str(loc.width), (side, side),
                      loc.iterations)
    gpu = DeepRenderer(gpu_backend).render_values(req).values
    cpu = DeepRenderer(resolve("cpu")).render_values(req).values
    assert np.mean(np.abs(np.asarray(gpu) - cpu) <= 1.0) >= 0.995
