"""Distance heatmap on the CUDA backend: every strategy against the NumPy reference and the CPU
twin, and the bytes each strategy moves. Tiny sizes under the simulator."""
import numpy as np
import pytest

from kernels.distance import renderer as Dr
from kernels.distance import request as D

pytestmark = pytest.mark.gpu

CASES = [
    dict(),
    dict(bounds=D.SEED_BOUNDS, ref=D.SEED_REF),
    dict(bounds=(-30.0, 30.0, 150.0, 210.0), ref=(0.0, 180.0), unit="nm"),
    dict(bounds=(60.0, 90.0, -180.0, 180.0), ref=(90.0, 0.0), unit="mi"),
    dict(ref=(-51.5074, 179.8722)),
]


def _skip_broadcast_on_simulator(strategy, simulated):
    if strategy == "broadcast" and simulated:
        pytest.skip("numba's CUDA simulator cannot build @vectorize(target='cuda') ufuncs; "
                    "the broadcast strategy runs on a real GPU only")


@pytest.fixture
def sizes(simulated):
    # around a 256-thread block boundary; the simulator runs one Python thread per CUDA thread
    return [(16, 12), (257, 1)] if simulated else [(16, 12), (255, 1), (256, 1), (257, 3), (640, 480)]


@pytest.mark.parametrize("strategy", D.STRATEGIES)
def test_gpu_matches_reference_and_cpu_twin(gpu_backend, cpu_backend, simulated, sizes, strategy):
    _skip_broadcast_on_simulator(strategy, simulated)
    gpu, cpu = Dr.Renderer(gpu_backend), Dr.Renderer(cpu_backend)
    cases = CASES[:3] if simulated else CASES
    for size in sizes:
        for case in cases:
            req = D.DistanceRequest(size=size, strategy=strategy, want_values=True, **case)
            g = gpu.render(req)
            np.testing.assert_allclose(g.values, D.reference_grid(req), rtol=1e-9, atol=1e-9)
            c = cpu.render(req)
            np.testing.assert_allclose(g.values, c.values, rtol=1e-9, atol=1e-9)
            # colour indices may differ only where a distance sits on a LUT step boundary
            assert np.count_nonzero(np.any(g.rgba != c.rgba, axis=-1)) <= max(1, g.rgba.size // 4000)
            assert g.meta["strategy"] == strategy and g.meta["vmax"] == pytest.approx(c.meta["vmax"])


@pytest.mark.parametrize("strategy", D.STRATEGIES)
def test_bytes_moved_per_strategy(gpu_backend, simulated, strategy):
    _skip_broadcast_on_simulator(strategy, simulated)
    w, h = (16, 12) if simulated else (1000, 1000)
    n = w * h
    r = Dr.Renderer(gpu_backend)
    req = D.DistanceRequest(bounds=D.SEED_BOUNDS, ref=D.SEED_REF, size=(w, h), strategy=strategy)
    first = r.render(req)
    assert first.timings.bytes["h2d"] >= D.LUT_SIZE * 4  # the palette goes up once
    t = r.render(req).timings
    expected_in = {"device-mesh": 0, "broadcast": 2 * 8 * n + 3 * 8, "host-mesh": 4 * 8 * n}[strategy]
    assert t.bytes == {"h2d": expected_in, "d2h": 4 * n}
    with_values = r.render(D.DistanceRequest(bounds=D.SEED_BOUNDS, ref=D.SEED_REF, size=(w, h),
                                             strategy=strategy, want_values=True)).timings
    assert with_values.bytes["d2h"] == 12 * n
    if simulated:
        assert t.phases_ms["kernel"] is None and t.phases_ms["d2h"] is None  # never invented
    else:
        assert t.phases_ms["kernel"] > 0 and t.phases_ms["d2h"] > 0
        assert t.phases_ms["compile"] is None
    assert t.phases_ms["total"] > 0


def test_gpu_buffers_are_reused(gpu_backend):
    r = Dr.Renderer(gpu_backend)
    req = D.DistanceRequest(size=(16, 12))
    f1 = r.render(req)
    before = r.pool.allocations
    f2, f3, f4 = r.render(req), r.render(req), r.render(req)
    assert r.pool.allocations == before
    assert f1.rgba is f4.rgba and f1.rgba is not f2.rgba


def test_broadcast_on_the_simulator_says_why(gpu_backend, simulated):
    if not simulated:
        pytest.skip("only the simulator refuses the broadcast strategy")
    with pytest.raises(D.StrategyUnavailable, match="real GPU"):
        Dr.Renderer(gpu_backend).render(D.DistanceRequest(size=(4, 4), strategy="broadcast"))


def test_a_grid_too_large_for_the_gpu_says_so(gpu_backend, monkeypatch):
    from kernels import buffers
    monkeypatch.setattr(buffers, "device_free_bytes", lambda: (1000, 8000))
    with pytest.raises(buffers.OutOfDeviceMemory, match="host-mesh strategy.*smaller size"):
        Dr.Renderer(gpu_backend).render(D.DistanceRequest(size=(64, 64), strategy="host-mesh"))
