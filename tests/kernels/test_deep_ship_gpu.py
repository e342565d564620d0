"""The Burning Ship deep on the GPU (real, or the simulator at tiny sizes): the same values and
counts as the CPU twin, and on a real GPU MPFR's counts at both of test_deep_ship.py's places."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.redo.exact import exact_values  # noqa: E402
from kernels.mandelbrot.deep.renderer import DeepRenderer  # noqa: E402

from test_deep_ship import PLACES, assert_exact, ship_request  # noqa: E402


@pytest.mark.parametrize("depth", list(PLACES))
def test_the_gpu_draws_the_ship_as_the_cpu_and_mpfr(gpu_backend, cpu_backend, simulated, depth):
    req = ship_request(depth, size=(5, 4) if simulated else None)
    if simulated:
        import dataclasses
        req = dataclasses.replace(req, max_iter=1500)
    gpu = DeepRenderer(gpu_backend).render_values(req)
    cpu = DeepRenderer(cpu_backend).render_values(req)
    assert gpu.format == cpu.format == PLACES[depth][4]
    assert np.array_equal(gpu.values, cpu.values)
    assert gpu.stats == cpu.stats
    if not simulated:
        assert_exact(gpu.values, exact_values(req), req.max_iter)


def test_the_gpu_draws_the_off_axis_ship_past_1e300_as_the_cpu_and_mpfr(gpu_backend, cpu_backend,
                                                                         simulated):
    """locations.SHIP_662 at 1e-301 (floatexp deltas off the axis), --exact-pixels on both: the
    handed-back pixels are the same ones, and on a real GPU the frame is MPFR's."""
    from test_deep_ship import counts, off_axis_deep_request
    req = off_axis_deep_request(size=(3, 2), max_iter=8000) if simulated else off_axis_deep_request()
    gpu_r, cpu_r = DeepRenderer(gpu_backend), DeepRenderer(cpu_backend)
    gpu_r.exact_redo = cpu_r.exact_redo = True
    gpu, cpu = gpu_r.render_values(req), cpu_r.render_values(req)
    assert gpu.format == cpu.format == "extended"
    assert np.array_equal(gpu.values, cpu.values)
    assert gpu.stats == cpu.stats
    assert gpu.stats["bla_steps"] > 0     # the extended loop's ship BLA (bla_ship.py) ran
    if not simulated:
        assert gpu.stats["exact_pixels"] > 0
        truth = exact_values(req)
        assert_exact(gpu.values, truth, req.max_iter)
        assert np.array_equal(counts(gpu.values), counts(truth))
