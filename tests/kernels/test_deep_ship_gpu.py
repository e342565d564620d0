"""The Burning Ship deep on the GPU (real, or the simulator at tiny sizes): the same values and
counts as the CPU twin, and on a real GPU MPFR's counts at both of test_deep_ship.py's places."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.deep.exact import exact_values  # noqa: E402
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
