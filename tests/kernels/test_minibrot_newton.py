"""Finding minibrots: a region's period by the ball test, the nucleus by Newton's method and the
minibrot's size, against known nuclei (the period-3 and period-4 minibrots on the real axis, the
deep tests' period-139 and period-424 minibrots at 1e-90 and 1e-318), each nucleus checked by
Z_p(c) ≈ 0 at twice its precision, and the failures (no period, an escaping centre, Newton
leaving the region or running out of steps, absurd input)."""
import pathlib
from decimal import Decimal

import pytest

gmpy2 = pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.reference.newton import NewtonFailed, nucleus_steps, size_estimate
from kernels.mandelbrot.reference.orbit_scan import run, scan
from kernels.mandelbrot.reference.region_period import period_steps
from kernels.mandelbrot.requests.deep_request import add_decimal


def period_of(re_, im_, radius, limit=5000):
    return run(period_steps(re_, im_, radius, limit))


def newton_step_log2(re_, im_, period, bits):
    """log2 |Z_p(c) / Z_p'(c)| at c, by plain complex MPFR arithmetic (no floatexp, no three
    squarings): how far c is from the nucleus Newton's method would go to."""
    with gmpy2.context(precision=bits):
        c = gmpy2.mpc(gmpy2.mpfr(re_), gmpy2.mpfr(im_))
        z = dz = gmpy2.mpc(0)
        for _ in range(period):
            dz = 2 * z * dz + 1
            z = z * z + c
        if z == 0:
            return float("-inf")
        return float(gmpy2.log2(abs(z / dz)))


def _mpc_of(dz):
    """A scan's double-double floatexp dZ/dc as an mpc (at the current precision)."""
    rh, rl, ih, il, e = dz
    return gmpy2.mul_2exp(gmpy2.mpc(gmpy2.mpfr(rh) + rl, gmpy2.mpfr(ih) + il), e)


@pytest.mark.parametrize("re_, im_, steps", [
    ("-0.7436438870371587", "0.1318259042053119", 300),        # |dZ| far past float64's range
    ("-1.7548776662466927600495088963585286918946", "1e-40", 3000)])
def test_derivative_matches_plain_complex_arithmetic(re_, im_, steps):
    with gmpy2.context(precision=400):
        cx, cy = gmpy2.mpfr(re_), gmpy2.mpfr(im_)
        newton = run(scan(cx, cy, 400, steps, stop_on_escape=False))
        c = gmpy2.mpc(cx, cy)
        z = dz = gmpy2.mpc(0)
        for _ in range(steps):
            dz = 2 * z * dz + 1
            z = z * z + c
        # Newton's scans: double-double, ~1e-30 (float64 alone would give ~1e-16)
        assert abs(_mpc_of(newton.dz) / dz - 1) < 1e-27
        # three squarings round differently from a complex square: the same orbit to ~1e-100
        assert newton.n == steps and abs(gmpy2.mpc(*newton.z) - z) < 1e-45
        # a period scan (a radius too small to stop it) keeps float64's digits
        period = run(scan(cx, cy, 400, steps, radius=(0.5, -2000)))
        if not period.escaped:
            assert period.n == steps and abs(_mpc_of(period.dz) / dz - 1) < 1e-12


@pytest.mark.parametrize("re_, im_, radius, period", [
    ("-1.75", "0", "0.01", 3), ("-1.31", "0", "0.01", 4), ("-0.1", "0.75", "0.05", 3),
    ("0.25", "0", "0.3", 1), ("-1", "0.01", "0.02", 2)])
def test_period_of_shallow_regions(re_, im_, radius, period):
    assert period_of(re_, im_, radius).period == period


def test_period_grows_as_the_region_shrinks():
    # around the period-3 minibrot's nucleus, off it by 1e-3: a disc too small to hold it finds
    # nothing below the limit of a bounded orbit, a large one finds period 3
    assert period_of("-1.754", "0.0004", "0.01").period == 3
    small = period_of("-1.754", "0.0004", "1e-6", limit=200)
    assert small.period is None or small.period > 3


@pytest.mark.parametrize("location, offset, radius, period", [
    (loc.MINIBROT_139, "3e-91", "1e-88", 139), (loc.MINIBROT_424, "3e-320", "1e-317", 424)])
def test_period_of_deep_regions(location, offset, radius, period):
    got = period_of(add_decimal(location.center_re, offset), add_decimal(location.center_im, offset),
                    radius)
    assert got.period == period and not got.escaped


def test_no_period_escapes_or_runs_out():
    out = period_of("0.3", "0.6", "0.001", limit=1000)
    assert out.period is None and out.escaped and out.iterations < 1000
    inside = period_of("-0.1", "0.1", "1e-9", limit=50)     # the main cardioid's orbit, bounded
    assert inside.period is None and not inside.escaped and inside.iterations == 51


@pytest.mark.parametrize("radius, limit", [("0", 10), ("-1e-5", 10), ("1e-5", 0), ("abc", 10)])
def test_absurd_period_input(radius, limit):
    with pytest.raises(ValueError):
        period_of("-1.75", "0", radius, limit)


@pytest.mark.parametrize("start, period, radius, pixel, want", [
    (("-1.75", "0.001"), 3, "0.05", "1e-4", "-1.7548776662466927600495088963585286918946"),
    (("-1.31", "0"), 4, "0.05", "1e-4", "-1.3107026413368328836790047911999883787509")])
def test_newton_finds_known_shallow_nuclei(start, period, radius, pixel, want):
    n = run(nucleus_steps(start[0], start[1], period, radius, pixel))
    assert n.period == period and n.steps <= 12
    assert abs(Decimal(n.center_re) - Decimal(want)) < Decimal(2) ** int(n.size_log2 - 20)
    assert abs(Decimal(n.center_im)) < Decimal(2) ** int(n.size_log2 - 20)
    assert newton_step_log2(n.center_re, n.center_im, period, 2 * n.precision) < n.size_log2 - 20


def test_size_of_the_period_3_minibrot():
    # on the real axis it spans about -1.7864 .. -1.7443 (its cusp to its tip): 2.25 sizes
    n = run(nucleus_steps("-1.75", "0", 3, "0.05", "1e-4"))
    assert 0.0175 < 2 ** n.size_log2 < 0.0195
    # period 1: the whole set, size 1 (the sums start at L = B = 1)
    assert size_estimate((0.5, 0.0, 1), (0.5, 0.0, 1)) == (0.5, 1)


@pytest.mark.parametrize("location, offset, radius, pixel, period, size_log2", [
    (loc.MINIBROT_139, "3e-91", "1e-89", "1e-92", 139, -298.6),
    (loc.MINIBROT_424, "3e-320", "1e-318", "1e-321", 424, -1057.1)])
def test_newton_returns_to_deep_nuclei(location, offset, radius, pixel, period, size_log2):
    re_ = add_decimal(location.center_re, offset)
    im_ = add_decimal(location.center_im, "-" + offset)
    n = run(nucleus_steps(re_, im_, period, radius, pixel))
    assert abs(n.size_log2 - size_log2) < 1.0
    tol = Decimal(2) ** int(n.size_log2 - 20)
    assert abs(Decimal(n.center_re) - Decimal(location.center_re)) < tol
    assert abs(Decimal(n.center_im) - Decimal(location.center_im)) < tol
    assert newton_step_log2(n.center_re, n.center_im, period, 2 * n.precision) < n.size_log2 - 20


def test_newton_from_outside_still_reaches_a_nucleus_of_the_period():
    # the centre of a published deep dive lies 5e-68 outside the period-139 minibrot, where its
    # orbit escapes at 134 iterations: Newton's steps then shrink slowly, but converge
    n = run(nucleus_steps("-1.99999999913827011875827476290869498831683",
                          "0.00000000000001314895443507637575136247566806502", 139, "1e-40", "1e-43"))
    assert n.period == 139
    assert newton_step_log2(n.center_re, n.center_im, 139, 2 * n.precision) < n.size_log2 - 20


def test_newton_failures():
    with pytest.raises(NewtonFailed, match="left the region"):      # period 4 is not in this disc
        run(nucleus_steps("-1.75", "0", 4, "1e-3", "1e-6"))
    with pytest.raises(NewtonFailed, match="did not converge in 1 steps"):
        run(nucleus_steps("-1.75", "0.001", 3, "0.05", "1e-12", max_steps=1))
    with pytest.raises(NewtonFailed, match="period of at least 1"):
        run(nucleus_steps("-1.75", "0", 0, "0.05", "1e-4"))
    with pytest.raises(ValueError):
        run(nucleus_steps("-1.75", "zero", 3, "0.05", "1e-4"))


def test_steps_yield_progress_and_stop_on_cancel():
    class Stop(Exception):
        pass

    class CancelAt:
        def __init__(self):
            self.calls = 0

        def check(self):
            self.calls += 1
            if self.calls > 2:
                raise Stop

    seen = []
    run(period_steps("0.3", "0.6", "0.001", 20000), progress=seen.append)
    assert seen and all(0 <= f <= 1 for f in seen)
    cancel = CancelAt()
    with pytest.raises(Stop):           # a bounded orbit scanned chunk by chunk: stopped early
        run(period_steps("-0.1", "0.1", "1e-12", 1_000_000), cancel)
    assert cancel.calls == 3


# Kalles Fraktaler's benchmark locations, shipped in resources/ (resources/kf-benchmarks.txt)
KF_5E113 = pathlib.Path(__file__).resolve().parents[2] / "resources" / "kf-5e113.kfr"


def test_minibrot_of_a_kalles_fraktaler_benchmark_location():
    from services.kfr import parse_kfr
    from services.minibrot import find_minibrot, view_search
    k = parse_kfr(KF_5E113.read_text())
    found = find_minibrot(view_search(k.center_re, k.center_im, k.width(640, 360), (640, 360),
                                      k.iterations))
    n = found.nucleus
    assert n.period > 1000 and n.size_log2 < -400          # a deep minibrot, well below the view
    assert newton_step_log2(n.center_re, n.center_im, n.period, 2 * n.precision) < n.size_log2 - 20
