"""Burning Ship on the GPU (real, or numba's simulator with tiny sizes): its warp launch and its
sliced kernel give the CPU twin's values, its work count has no shortcut, and the launches and
number types that have no Burning Ship twin refuse it in plain words."""
from dataclasses import replace

import numpy as np
import pytest

from kernels.mandelbrot.requests import formulas
from kernels.mandelbrot import renderer as m

pytestmark = pytest.mark.gpu

SHIP = formulas.BURNING_SHIP


def _req(simulated, **kw):
    size, iters = ((14, 9), 60) if simulated else ((160, 120), 1000)
    return m.MandelbrotRequest(-1.7557, -0.0284, 0.09, size, iters, want_values=True,
                               formula=SHIP, **kw)


def _same(gpu_frame, cpu_frame, max_iter):
    np.testing.assert_array_equal(m.iteration_counts(gpu_frame.values, max_iter),
                                  m.iteration_counts(cpu_frame.values, max_iter))
    np.testing.assert_allclose(gpu_frame.values, cpu_frame.values, rtol=0, atol=1e-9)


def test_the_ship_on_the_gpu_is_its_cpu_twin(gpu_backend, cpu_backend, simulated):
    req = _req(simulated)
    gpu = m.Renderer(gpu_backend).render(req)
    cpu = m.Renderer(cpu_backend).render(req)
    _same(gpu, cpu, req.max_iter)
    counts = m.iteration_counts(cpu.values, req.max_iter)
    assert 0 < (counts == req.max_iter).mean() < 1        # inside and outside both
    # the Mandelbrot frame of the same place differs: another kernel ran
    mandelbrot = m.Renderer(gpu_backend).render(replace(req, formula=formulas.MANDELBROT))
    assert not np.array_equal(m.iteration_counts(mandelbrot.values, req.max_iter), counts)


def test_the_ships_sliced_kernel_is_its_cpu_twin(gpu_backend, cpu_backend, monkeypatch,
                                                 simulated):
    req = _req(simulated)
    w, _ = req.size
    monkeypatch.setattr(m, "GPU_BAND_WORK", w * req.max_iter - 1 if simulated else 1)
    monkeypatch.setattr(m, "GPU_MIN_BAND_PIXELS", 1)
    sliced = m.Renderer(gpu_backend).render(req)
    _same(sliced, m.Renderer(cpu_backend).render(req), req.max_iter)


def test_the_ships_work_count_on_the_gpu_counts_every_pixel(gpu_backend, simulated):
    req = _req(simulated)
    r = m.Renderer(gpu_backend)
    frame = r.render(req)
    useful = [w for w in frame.timings.work if w.name == "escape, useful iterations"]
    assert useful and useful[0].ops == 8 * m.executed_iterations(req, frame.values)
    assert m.executed_iterations(req, frame.values) == \
        int(m.iteration_counts(frame.values, req.max_iter).sum())


def test_launches_without_a_ship_twin_refuse_it(gpu_backend):
    from kernels.mandelbrot.benches.escape_variants import variant
    with pytest.raises(ValueError, match="Mandelbrot set only"):
        m.Renderer(gpu_backend, launch=variant("grid")).render(_req(True))
    with pytest.raises(ValueError, match="Mandelbrot set only"):
        m.Renderer(gpu_backend, launch=variant("sorted")).render(_req(True))
    f32 = m.Renderer(gpu_backend, number_type="float32")
    with pytest.raises(ValueError, match="float64 only"):
        f32.render(_req(True, number_type="float32"))
    with pytest.raises(ValueError, match="Mandelbrot set only"):
        f32.target.escape(np.zeros((2, 2)), (0, 0, -1.0, 0.0, 0.1, 1.0, 1.0, 10), None, None,
                          None, formula=SHIP)
