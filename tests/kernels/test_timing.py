import time

import pytest

from kernels.backend import Backend
from kernels.timing import PHASES, JobTimer, Timings


def test_host_phases_accumulate_and_total_covers_them():
    t = JobTimer(Backend("cpu"), label="job")
    with t.phase("kernel"):
        time.sleep(0.002)
    with t.phase("kernel", detail="colourise"):
        time.sleep(0.001)
    with t.phase("host"):
        pass
    res = t.finish()
    assert res.phases_ms["kernel"] >= 3.0 * 0.9
    assert res.detail["colourise"] >= 0.9
    assert res.phases_ms["total"] >= res.phases_ms["kernel"]
    assert res.phases_ms["h2d"] is None and res.phases_ms["compile"] is None
    assert set(res.phases_ms) == set(PHASES)


def test_copy_bytes_and_bandwidth():
    t = Timings()
    t.bytes["d2h"] = 8_000_000
    t.add("d2h", 2.0)
    assert t.bandwidth_gbs("d2h") == pytest.approx(4.0)
    assert t.bandwidth_gbs("h2d") is None


def test_unknown_phase_rejected():
    with pytest.raises(KeyError):
        Timings().add("kernal", 1.0)


def test_gpu_phase_on_cpu_backend_uses_wall_clock():
    t = JobTimer(Backend("cpu"))
    with t.phase("kernel", gpu=True):
        time.sleep(0.001)
    assert t.finish().phases_ms["kernel"] > 0


@pytest.mark.gpu
def test_gpu_phases_are_events_or_none(gpu_backend):
    from numba import cuda
    import numpy as np
    stream = cuda.stream()
    t = JobTimer(gpu_backend, stream)
    host = np.arange(64, dtype=np.float32)
    d = cuda.device_array_like(host, stream=stream)
    with t.phase("h2d", gpu=True, nbytes=host.nbytes):
        d.copy_to_device(host, stream=stream)
    res = t.finish()
    assert res.bytes["h2d"] == 256
    if gpu_backend.simulated:
        assert res.phases_ms["h2d"] is None  # never an invented number
    else:
        assert res.phases_ms["h2d"] > 0
