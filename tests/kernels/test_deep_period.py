"""Frames whose reference orbit stops at its period (period_stop.py) held to brute force: the
kernels rebase a pixel reaching the orbit's last point to Z_0, so a period-stopped orbit must give
the same counts as the whole orbit. Also the rule for reusing a periodic orbit: any iteration
count, a few zoom steps in, then it goes on past its period. Same acceptance as test_deep.py:
counts within ±1 of brute force at >= 99.5 % of the pixels."""
import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.redo import exact
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.reference.reference import PERIOD_SLACK_BITS
from kernels.mandelbrot.deep.renderer import DeepRenderer
from kernels.mandelbrot.requests.deep_request import DeepRequest

from test_deep import assert_matches_brute_force, counts, near


def renderer(period_stop=True):
    from kernels.backend import resolve
    r = DeepRenderer(resolve("cpu"))
    r.period_stop = period_stop
    return r


# (name, request, the longest stopped orbit expected): a minibrot's nucleus in view, a frame a
# little off one (its period's ball still holds the frame), the spirals around c = i below 1e-300
CASES = [
    ("minibrot 4e-90", DeepRequest(loc.MINIBROT_139.center_re, loc.MINIBROT_139.center_im,
                                   "4e-90", (24, 16), 3000), 139),
    ("off minibrot 3e-318", DeepRequest(*near(loc.MINIBROT_424, "3e-318"), "3e-318", (16, 10),
                                        6000), 424),
    ("spiral 1e-320", DeepRequest(*near(loc.MISIUREWICZ_I, "1e-320"), "1e-320", (24, 16), 2000),
     1000),
]


@pytest.mark.parametrize("name, req, longest", CASES, ids=[c[0] for c in CASES])
def test_period_stopped_frames_match_brute_force_and_the_whole_orbit(name, req, longest):
    stopped = renderer().render_values(req)
    ref = stopped.reference
    assert ref.period is not None and ref.length == ref.period + 1 <= longest + 1
    whole = renderer(period_stop=False).render_values(req)
    assert whole.reference.period is None and whole.reference.length > ref.length
    truth = exact.exact_values(req)
    assert_matches_brute_force(stopped.values, truth, req.max_iter)
    same = np.abs(counts(stopped.values) - counts(whole.values)) <= 1
    assert same.mean() >= 0.995
    assert stopped.stats["rebases"] > 0


def test_a_periodic_orbit_serves_any_count_and_a_few_zoom_steps_then_goes_on():
    r = renderer()
    cre, cim = near(loc.MISIUREWICZ_I, "1e-100")
    first = r.render_values(DeepRequest(cre, cim, "1e-100", (16, 12), 2000))
    orbit, version, period = first.reference, first.reference.version, first.reference.period
    assert period is not None and orbit.length == period + 1
    more = r.render_values(DeepRequest(cre, cim, "1e-100", (16, 12), 6000))
    assert more.reference is orbit and orbit.version == version and more.table_reused
    # zoomed in by less than the slack: the same orbit, not extended
    zoom = 2 ** (PERIOD_SLACK_BITS - 1)
    width_in = f"{1 / zoom}e-100"
    req_in = DeepRequest(cre, cim, width_in, (16, 12), 2000)
    zoomed = r.render_values(req_in)
    assert zoomed.reference is orbit and orbit.version == version and orbit.period == period
    assert_matches_brute_force(zoomed.values, exact.exact_values(req_in), 2000)
    # far deeper: the period's ball no longer vouches for the frame, the orbit goes on past it
    req_deep = DeepRequest(cre, cim, "1e-105", (16, 12), 3000)
    deeper = r.render_values(req_deep)
    assert deeper.reference is orbit and orbit.version > version
    assert orbit.length > period + 1 and (orbit.period is None or orbit.period > period)
    assert_matches_brute_force(deeper.values, exact.exact_values(req_deep), 3000)


@pytest.mark.gpu
def test_gpu_matches_cpu_twin_on_a_period_stopped_orbit(gpu_backend, cpu_backend, simulated):
    size = (8, 6) if simulated else (48, 32)
    req = DeepRequest(*near(loc.MINIBROT_424, "3e-318"), "3e-318", size, 6000)
    g, c = DeepRenderer(gpu_backend).render_values(req), DeepRenderer(cpu_backend).render_values(req)
    assert g.reference.period is not None and c.reference.period == g.reference.period
    np.testing.assert_array_equal(np.floor(g.values), np.floor(c.values))
    assert g.stats == c.stats and g.stats["rebases"] > 0
