"""A float64 poster's band runs in one launch once the renderer's last band of the same picture
was quick: the cuts that bound one launch's worst-case work made a 512-row band of a 16384²
poster at 20,000 iterations twenty launches, each ending in a synchronisation and a cancel check,
the GPU idle between them (and longer on two GPUs, whose workers share the GIL)."""
from dataclasses import replace

import numpy as np
import pytest

from kernels.mandelbrot import renderer as m
from kernels.scheduler import CancelToken

pytestmark = pytest.mark.gpu

SEAHORSE = (-0.743643887037151, 0.131825904205330)


def _counting(renderer):
    """The number of escape launches (sub-bands) the renderer's target makes, as a list to read."""
    runs = []
    launch = renderer.target.launch
    real = launch.run

    def run(*a, **k):
        runs.append(1)
        return real(*a, **k)
    launch.run = run
    return runs


def test_a_posters_next_band_is_one_launch_with_the_same_pixels(gpu_backend, simulated,
                                                                monkeypatch):
    w, h, iters = (16, 8, 200) if simulated else (1024, 512, 4000)
    rows = h // 2
    # every band cut into launches of two rows
    monkeypatch.setattr(m, "GPU_BAND_WORK", 2 * w * iters)
    monkeypatch.setattr(m, "SIM_BAND_WORK", 2 * w * iters)
    monkeypatch.setattr(m, "GPU_MIN_BAND_PIXELS", 1)
    monkeypatch.setattr(m, "SIM_BAND_PIXELS", 10 ** 9)
    if simulated:       # the simulator's launches take tenths of a second
        monkeypatch.setattr(m, "QUICK_BAND_S", 1e9)
    req = m.MandelbrotRequest(*SEAHORSE, 2e-3, (w, h), iters)
    r = m.Renderer(gpu_backend)
    r.warmup((req.mapping,))            # the warm-up's own launches are not the band's
    runs = _counting(r)
    token = CancelToken()
    banded = np.array(r.band(req, 0, rows, False, cancel=token), copy=True)
    assert len(runs) == rows // 2, "the first band is cut as before"
    runs.clear()
    whole = np.array(r.band(req, 0, rows, False, cancel=token), copy=True)
    assert len(runs) == 1, "the next band of the same picture should be one launch"
    np.testing.assert_array_equal(whole, banded)
    runs.clear()
    r.band(replace(req, max_iter=iters + 1), rows, rows, False, cancel=token)
    assert len(runs) > 1, "another picture's first band is cut again"


def test_a_slow_last_band_keeps_the_cuts(gpu_backend, simulated, monkeypatch):
    w, h, iters = (16, 8, 200) if simulated else (1024, 512, 4000)
    monkeypatch.setattr(m, "GPU_BAND_WORK", 2 * w * iters)
    monkeypatch.setattr(m, "SIM_BAND_WORK", 2 * w * iters)
    monkeypatch.setattr(m, "GPU_MIN_BAND_PIXELS", 1)
    monkeypatch.setattr(m, "SIM_BAND_PIXELS", 10 ** 9)
    monkeypatch.setattr(m, "QUICK_BAND_S", 0.0)         # no band is quick
    req = m.MandelbrotRequest(*SEAHORSE, 2e-3, (w, h), iters)
    r = m.Renderer(gpu_backend)
    r.warmup((req.mapping,))            # the warm-up's own launches are not the band's
    runs = _counting(r)
    for _ in range(2):
        runs.clear()
        r.band(req, 0, 4, False, cancel=CancelToken())
        assert len(runs) == 2
