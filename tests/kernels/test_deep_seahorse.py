"""Deep zoom just past float64 in seahorse valley (the README movie's zoom, 1e-17 wide, counts
~8,000-8,600), where the bilinear approximation alone put 2-3 % of the counts off by more than one
iteration: those pixels are ill-conditioned (1e-9 of a pixel moves their count by tens to hundreds
of iterations), so the approximation's relative error ε per step ruins them. The kernels' accuracy
guard (loops/guard.py) bounds each pixel's error and redoes the doubtful ones with tighter radii, then
without BLA. Held here to brute force (gmpy2) on a window of that frame where the approximation
alone had 6 of 208 pixels off (97.1 %), and on the GPU to the CPU twin, pixels redone included.
"""
import dataclasses

import numpy as np
import pytest

from kernels.mandelbrot.requests.deep_request import DeepRequest

gmpy2 = pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.redo import exact
from kernels.mandelbrot.deep.renderer import DeepRenderer

# pixels (6..18, 48..63) of frame 15 of zoom_in(seahorse, "1e-17", 20000, 16) at 64x36 (the course
# of tools/bla_accuracy.py): the same pixel centres, as a 16x13 frame of its own
WINDOW = DeepRequest("-0.743643887037158701002191506114774", "0.131825904205311971352507056385139",
                     "2.5e-18", (16, 13), 10_000)
# pixels (7, 58..59) of that frame: one of them is redone
PAIR = DeepRequest("-0.743643887037158700533441506114774", "0.131825904205311972133757056385139",
                   "3.125e-19", (2, 1), 10_000)


def counts(values):
    return np.floor(values).astype(np.int64)


def test_ill_conditioned_pixels_match_brute_force(cpu_backend):
    res = DeepRenderer(cpu_backend).render_values(WINDOW)
    assert res.format == "perturbation"
    truth = exact.exact_values(WINDOW)
    close = np.abs(counts(res.values) - counts(truth)) <= 1
    assert close.mean() >= 0.995, f"only {close.mean():.2%} within ±1 of brute force"
    # the guard did the work: pixels were redone, and BLA still skipped most iterations
    assert res.stats["redone_pixels"] > 0
    assert res.stats["bla_iterations"] > 0.5 * counts(res.values).sum()


def test_plain_perturbation_needs_no_second_pass(cpu_backend):
    """Without BLA nothing is approximated: the guard has no error to bound."""
    res = DeepRenderer(cpu_backend).render_values(dataclasses.replace(PAIR, bla=False))
    assert res.stats["redone_pixels"] == 0 and res.stats["bla_steps"] == 0


@pytest.mark.gpu
def test_gpu_redoes_the_same_pixels_as_the_cpu(gpu_backend, cpu_backend, simulated):
    req = PAIR if simulated else WINDOW
    g = DeepRenderer(gpu_backend).render_values(req)
    c = DeepRenderer(cpu_backend).render_values(req)
    np.testing.assert_array_equal(counts(g.values), counts(c.values))
    np.testing.assert_allclose(g.values, c.values, rtol=0, atol=1e-9)
    assert g.stats == c.stats and g.stats["redone_pixels"] > 0
