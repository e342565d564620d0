"""The Burning Ship deep (issue 36's second formula): its reference orbit, and frames on the CPU
held to MPFR brute force (every pixel iterated on its own, exact.ship_value) at two mini-ships
past 1e-100 (float64 deltas) and past 1e-300 (floatexp deltas), centred on the nucleus and a
fraction of a frame off it (the reference then leaves the real axis, where the folds matter)."""
from decimal import Decimal

import numpy as np
import pytest

from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.requests.deep_request import DeepRequest, add_decimal

gmpy2 = pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.redo import exact  # noqa: E402
from kernels.mandelbrot.reference.reference import ReferenceOrbit  # noqa: E402
from kernels.mandelbrot.deep.renderer import DeepRenderer  # noqa: E402

SHIP = "burning-ship"
# (place, width, size, iterations, deltas' format)
PLACES = {"1e-100": (loc.SHIP_85, "1e-100", (32, 24), 3000, "perturbation"),
          "8e-302": (loc.SHIP_252, "8e-302", (24, 16), 6000, "extended")}


@pytest.fixture(scope="module")
def cpu():
    from kernels.backend import resolve
    return DeepRenderer(resolve("cpu"))


def ship_request(depth, off=True, size=None, formula=SHIP):
    place, width, own_size, it, _ = PLACES[depth]
    w = Decimal(width)
    cre, cim = place.center_re, place.center_im
    if off:
        cre = add_decimal(cre, w * Decimal("0.1234567"))
        cim = add_decimal(cim, w * Decimal("-0.0765432"))
    return DeepRequest(cre, cim, width, size or own_size, it, formula=formula)


def counts(values):
    return np.floor(values).astype(np.int64)


def assert_exact(values, truth, max_iter):
    close = np.abs(counts(values) - counts(truth)) <= 1
    assert close.mean() >= 0.995, f"only {close.mean():.2%} within ±1 of MPFR"
    assert int(np.sum((values >= max_iter) != (truth >= max_iter))) <= 3


def test_the_orbit_is_the_ship_s_and_no_other():
    o = ReferenceOrbit("-1.75", "-0.03", 128, formula=SHIP).extend(200)
    with gmpy2.context(precision=128):
        x = y = gmpy2.mpfr(0)
        cx, cy = gmpy2.mpfr("-1.75"), gmpy2.mpfr("-0.03")
        for n in range(1, o.length):
            x, y = x * x - y * y + cx, 2 * abs(x * y) + cy
            assert o.z[n] == complex(float(x), float(y))
    assert o.escaped and o.formula == SHIP
    mandel = ReferenceOrbit("-1.75", "-0.03", 128).extend(200)
    assert not np.array_equal(mandel.z[:5], o.z[:5])
    with pytest.raises(ValueError, match="unknown formula"):
        ReferenceOrbit("0", "0", 64, formula="tricorn")


@pytest.mark.parametrize("off", [False, True], ids=["nucleus", "off-centre"])
@pytest.mark.parametrize("depth", list(PLACES))
def test_frames_match_mpfr(cpu, depth, off):
    req = ship_request(depth, off)
    res = cpu.render_values(req)
    assert res.format == PLACES[depth][4]
    truth = exact.exact_values(req)
    assert_exact(res.values, truth, req.max_iter)
    # a mini-ship in view: structure, interior, and pixels that outlive the reference's use
    assert np.ptp(counts(truth)) >= 1000
    assert 0.05 < (truth >= req.max_iter).mean() < 0.6
    assert res.stats["rebases"] > 0 and res.stats["bla_steps"] == 0


def test_the_ship_is_not_the_mandelbrot_at_the_same_place(cpu):
    ship = cpu.render_values(ship_request("1e-100", size=(16, 12))).values.copy()
    mandel = cpu.render_values(ship_request("1e-100", size=(16, 12), formula="mandelbrot"))
    assert mandel.reference.formula == "mandelbrot"     # a new orbit, not the ship's
    assert np.mean(counts(ship) != counts(mandel.values)) > 0.5
    again = cpu.render_values(ship_request("1e-100", size=(16, 12)))
    assert again.reference.formula == SHIP and np.array_equal(again.values, ship)


def test_overlays_are_refused_in_plain_words(cpu):
    with pytest.raises(ValueError, match="Burning Ship"):
        cpu.render_values(ship_request("1e-100", size=(4, 3)), layers=np.zeros((5, 3, 4), np.int32))


def test_the_ship_s_compiled_functions_have_names_of_their_own():
    """numba's CPU JIT links same-named functions of two cached libraries to one (targets.named):
    with the Mandelbrot's names, a ship frame drawn first turned later Mandelbrot frames into
    ships. Every factory-made function whose code depends on the formula is named apart."""
    from kernels.mandelbrot.loops import extended_loop, perturbation_loop
    pairs = [(perturbation_loop._passes_cpu, perturbation_loop._ship_passes_cpu),
             (extended_loop._pixel_ext_cpu, extended_loop._pixel_ship_cpu),
             (perturbation_loop.pert_row, perturbation_loop.ship_row),
             (extended_loop.ext_row, extended_loop.ship_row)]
    for mandel, ship in pairs:
        assert mandel.py_func.__qualname__ != ship.py_func.__qualname__


def test_the_mandelbrot_s_frames_stay_exact_after_ship_frames(cpu):
    """The module's ship frames came first in this process (the order that went wrong)."""
    from kernels.backend import resolve
    cpu.render_values(ship_request("8e-302", size=(6, 4)))
    for width, fmt in (("1e-200", "perturbation"), ("1e-300", "extended")):
        mandel = DeepRequest(add_decimal("0", Decimal(width) * Decimal("0.1234567")),
                             add_decimal("1", Decimal(width) * Decimal("-0.0765432")),
                             width, (12, 8), 2000)
        got = DeepRenderer(resolve("cpu")).render_values(mandel)
        assert got.format == fmt
        truth = exact.exact_values(mandel)
        assert_exact(got.values, truth, 2000)
        assert np.ptp(counts(truth)) >= 5


SEA = (loc.SHIP_SEA.center_re, loc.SHIP_SEA.center_im)


@pytest.fixture
def handed_back(monkeypatch):
    """{"mask": the pixels the CPU loop handed back for exact_redo} once a frame is drawn."""
    from kernels.mandelbrot.deep import cpu_pixels
    seen = {}
    settle = cpu_pixels.exact_redo.settle

    def spy(request, values, *args, **kwargs):
        seen["mask"] = values < 0
        return settle(request, values, *args, **kwargs)
    monkeypatch.setattr(cpu_pixels.exact_redo, "settle", spy)
    return seen


def test_pixels_float64_cannot_place_are_marked_not_drawn_wrong(cpu, handed_back):
    req = DeepRequest(*SEA, "1e-100", (8, 6), 4000, formula=SHIP)
    res = cpu.render_values(req)
    marked = handed_back["mask"]
    assert res.stats["marked_pixels"] == marked.sum() > 0
    truth = exact.exact_values(req, precision=3000)
    right = np.abs(counts(res.values) - counts(truth)) <= 1
    assert right[~marked].all(), f"{int((~right[~marked]).sum())} unmarked pixels are wrong"


def test_exact_pixels_settle_the_ship_s_handed_back_pixels_in_mpfr():
    """Off the axis (locations.SHIP_447, 1e-100) about 9 % of the pixels are handed back; with
    exact_redo on, each gets MPFR's settled count (exact_ship.py) and the frame is MPFR's."""
    from kernels.backend import resolve
    r = DeepRenderer(resolve("cpu"))
    r.exact_redo = True
    req = DeepRequest(loc.SHIP_447.center_re, loc.SHIP_447.center_im, "1e-100", (16, 12), 6000,
                      formula=SHIP)
    res = r.render_values(req)
    assert res.stats["exact_pixels"] > 0 and res.stats["marked_pixels"] == 0
    assert res.stats["dd_pixels"] == 0          # no double-double tier for the ship
    truth = exact.exact_values(req, precision=1200)
    assert np.array_equal(counts(res.values), counts(truth))


# Past 1e-300 off the axis (floatexp deltas, the folds at every step): the period-662 mini-ship
OFF_AXIS_DEEP = (loc.SHIP_662, "1e-301", (24, 16), 20000)


def off_axis_deep_request(size=None, max_iter=None):
    place, width, own_size, it = OFF_AXIS_DEEP
    return DeepRequest(place.center_re, place.center_im, width, size or own_size,
                       max_iter or it, formula=SHIP)


def test_off_axis_past_1e300_every_pixel_is_mpfr_s_or_marked_and_exact_pixels_settle_them(
        cpu, handed_back):
    """locations.SHIP_662 at 1e-301: the unmarked pixels have MPFR's counts, and with exact_redo
    (--exact-pixels) the handed-back ones do too, so the whole frame is MPFR's."""
    from kernels.backend import resolve
    req = off_axis_deep_request()
    res = cpu.render_values(req)
    assert res.format == "extended" and res.stats["rebases"] > 0
    truth = exact.exact_values(req)
    # the mini-ship in view, and pixels far past the period
    assert np.ptp(counts(truth)) >= 5000
    assert 0.02 < (truth >= req.max_iter).mean() < 0.6
    marked = handed_back["mask"]
    assert res.stats["marked_pixels"] == marked.sum() > 0
    right = np.abs(counts(res.values) - counts(truth)) <= 1
    assert right[~marked].all(), f"{int((~right[~marked]).sum())} unmarked pixels are wrong"
    # the extended loop's ship BLA (bla_ship.ext_ship_tables): without it every pixel paid a
    # perturbation step per iteration (about 10,000 a pixel here)
    st = res.stats
    assert st["bla_steps"] > 0 and st["perturbation_steps"] < 0.05 * st["bla_iterations"]
    assert st["perturbation_steps"] < 1000 * marked.size

    r = DeepRenderer(resolve("cpu"))
    r.exact_redo = True
    settled = r.render_values(req)
    assert settled.stats["exact_pixels"] == marked.sum() and settled.stats["marked_pixels"] == 0
    assert_exact(settled.values, truth, req.max_iter)
    assert np.array_equal(counts(settled.values), counts(truth))
