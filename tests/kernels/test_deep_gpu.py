"""Deep zoom on the GPU (real, or numba's simulator with tiny grids): the same counts as the CPU
twin in both number formats, with rebasing, persistent threads sharing the pixels, and the orbit
and table uploaded once for frames that reuse them.

The GPU performs the CPU's exact operations (explicitly rounded, never fused into FMAs), so escape
counts agree exactly; only the smooth fraction's log may differ in the last bits."""
from decimal import Decimal

import numpy as np
import pytest

from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.requests.deep_request import DeepRequest, add_decimal

pytestmark = pytest.mark.gpu
pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.tables.layout import N_STATS
from kernels.mandelbrot.deep.renderer import DeepRenderer


@pytest.fixture(params=["persistent", "grid"])
def gpu(gpu_backend, request):
    return DeepRenderer(gpu_backend, launch=request.param)


@pytest.fixture
def cpu(cpu_backend):
    return DeepRenderer(cpu_backend)


def near_i(width):
    w = Decimal(width)
    return str(w * Decimal("0.1234567")), add_decimal(1, w * Decimal("-0.0765432"))


def _cases(simulated):
    small = (8, 6) if simulated else (67, 45)      # odd sizes: pixels split unevenly between threads
    mini = (8, 6) if simulated else (48, 32)
    return [
        ("perturbation 1e-20", DeepRequest(*near_i("1e-20"), "1e-20", small, 300)),
        ("extended 1e-320", DeepRequest(*near_i("1e-320"), "1e-320", small, 2000)),
        ("minibrot 4e-90", DeepRequest(loc.MINIBROT_139.center_re, loc.MINIBROT_139.center_im,
                                       "4e-90", mini, 3000)),
        ("no BLA 1e-60", DeepRequest(*near_i("1e-60"), "1e-60", small, 500, bla=False)),
    ]


def test_gpu_matches_cpu_twin(gpu, cpu, simulated):
    for name, req in _cases(simulated):
        g, c = gpu.render_values(req), cpu.render_values(req)
        assert g.values.shape == (req.size[1], req.size[0]) and g.values.dtype == np.float64, name
        np.testing.assert_array_equal(np.floor(g.values), np.floor(c.values), err_msg=name)
        np.testing.assert_allclose(g.values, c.values, rtol=0, atol=1e-9, err_msg=name)
        assert g.stats == c.stats, name                 # the same steps, BLA steps and rebases
        assert g.format == c.format


def test_rebasing_happens_on_the_gpu(gpu, cpu, simulated):
    """The reference sits 0.45 frame widths off c = i and escapes before the pixels nearer i:
    they carry on only by rebasing at the orbit's end."""
    size = (8, 6) if simulated else (64, 48)
    w = Decimal("1e-40")
    req = DeepRequest(str(w * Decimal("0.45")), add_decimal(1, w * Decimal("0.3")), "1e-40", size, 2000)
    gpu.period_stop = cpu.period_stop = False   # the orbit would stop at a period before it escapes
    res = gpu.render_values(req)
    assert res.reference.escaped
    outlived = int((np.floor(res.values) + 1 > res.reference.length).sum())
    assert outlived > 0 and res.stats["rebases"] >= outlived
    assert res.stats == cpu.render_values(req).stats


def test_orbit_and_table_are_uploaded_once(gpu, simulated):
    size = (8, 6) if simulated else (64, 48)
    req = DeepRequest(*near_i("1e-40"), "1e-40", size, 400)
    first = gpu.render_values(req)
    again = gpu.render_values(req)
    w, h = size
    assert first.timings.bytes["h2d"] > 0
    assert again.timings.bytes["h2d"] == 0 and again.reused and again.table_reused
    # the values, the counts, and the count of pixels handed back for an exact redo
    assert again.timings.bytes["d2h"] == w * h * 8 + N_STATS * 8 + 8
    np.testing.assert_array_equal(first.values, again.values)
    if not simulated:
        assert again.timings.phases_ms["kernel"] > 0


def test_values_can_stay_on_the_device(gpu, simulated):
    size = (8, 6) if simulated else (64, 48)
    req = DeepRequest(*near_i("1e-40"), "1e-40", size, 400)
    on_host = gpu.render_values(req).values.copy()
    res = gpu.render_values(req, to_host=False)
    assert not isinstance(res.values, np.ndarray)
    # only the counts crossed (and the count of pixels handed back for an exact redo)
    assert res.timings.bytes["d2h"] == N_STATS * 8 + 8
    np.testing.assert_array_equal(res.values.copy_to_host(), on_host)


def test_table_without_single_steps_matches_cpu_twin(gpu_backend, cpu_backend, simulated):
    """kmin > 0 (the table's shortest steps dropped): perturbation-format frames then run
    perturbation_loop.KMIN_CODE on both targets (deep_kernel_pert on the GPU), since
    perturbation_loop.py's own loop reads level 0."""
    gpu, cpu = DeepRenderer(gpu_backend, kmin=2), DeepRenderer(cpu_backend, kmin=2)
    wanted = ("perturbation 1e-20", "minibrot 4e-90")
    for name, req in (case for case in _cases(simulated) if case[0] in wanted):
        g, c = gpu.render_values(req), cpu.render_values(req)
        assert g.format == c.format == "perturbation", name
        np.testing.assert_array_equal(np.floor(g.values), np.floor(c.values), err_msg=name)
        assert g.stats == c.stats and g.stats["bla_steps"] > 0, name
