"""Deep pixels exact however a picture is cut (issue 34): a band's pixels are its picture's (the same
δc, the same reference), and the pixels float64 deltas cannot place are iterated in double-double
with a sound bound (dd_pixels.py), and those it cannot prove in MPFR (exact_redo.py), so KF's 5e227
matches brute force at every pixel."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.redo import audit, dd_pixels, exact_redo, mpfr_escape  # noqa: E402
from kernels.mandelbrot.redo.exact import exact_values  # noqa: E402
from kernels.mandelbrot.reference.reference_store import ReferenceStore  # noqa: E402
from kernels.mandelbrot.deep.renderer import DeepRenderer  # noqa: E402
from kernels.mandelbrot.requests.deep_request import DeepRequest  # noqa: E402
from kernels.mandelbrot.requests.deep_request import add_decimal as add_decimal_  # noqa: E402
from kernels.mandelbrot.deep_frames import DeepFrameRenderer, band_request  # noqa: E402
from kernels.mandelbrot.requests.request import DeepFrameRequest  # noqa: E402

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
TRUTH = Path(__file__).with_name("data") / "kf_5e227_16x16_mpfr.txt"
# a cheap deep place whose bands, drawn around their own centres, differed from the one piece (1e-25
# wide, 24x17, 20,000 iterations, bands of 3 rows from the bottom: 406 values, 3 counts)
CRE, CIM = "-0.743643887037158704752191506114774", "0.131825904205311970493132056385139"


def kf(name, size):
    from services.kfr import parse_kfr
    loc = parse_kfr((RESOURCES / f"kf-{name}.kfr").read_text(errors="replace"))
    return DeepRequest(loc.center_re, loc.center_im, str(loc.width(*size)), size, loc.iterations)


def _frames(backend, exact=True):
    r = DeepFrameRenderer(backend)
    r.deep.references = ReferenceStore(cache=None)
    r.deep.exact_redo = exact
    return r


def _banded(backend, req, cuts, order=1, exact=True):
    """`req`'s values drawn band by band (rows `cuts` apart, the last band what is left), in
    `order` (-1: bottom band first, so the worker's first orbit is another band's)."""
    r = _frames(backend, exact)
    h = int(req.size[1])
    out = np.full((h, int(req.size[0])), np.nan)
    starts = list(range(0, h, cuts))[::order]
    for r0 in starts:
        n = min(cuts, h - r0)
        out[r0:r0 + n] = r.band(req, r0, n, True)
    return out


def test_kf_5e227_every_pixel_within_one_of_mpfr(cpu_backend):
    req = kf("5e227", (16, 16))
    r = DeepRenderer(cpu_backend)
    r.precision_headroom = 0
    r.exact_redo = True
    res = r.render_values(req)
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    off = np.abs(np.floor(res.values).astype(np.int64) - truth)
    assert int((off > 1).sum()) == 0, np.argwhere(off > 1).tolist()
    # the pixels float64 got wrong (5 of them, by 74 to 903 iterations) were proved in
    # double-double or iterated in MPFR
    handed = res.stats["dd_pixels"] + res.stats["exact_pixels"]
    assert handed >= 5 and res.stats["marked_pixels"] == 0, res.stats
    assert handed <= 16       # a few per cent at most


@pytest.mark.parametrize("cuts,order", [(5, 1), (3, -1)])
def test_one_piece_and_bands_give_the_same_values(cpu_backend, cuts, order):
    req = DeepFrameRequest(CRE, CIM, "1e-25", (24, 17), 20000, want_values=True)
    whole = _frames(cpu_backend).render(req).values.copy()
    banded = _banded(cpu_backend, req, cuts, order)
    assert np.array_equal(whole, banded), int((whole != banded).sum())


def test_one_piece_and_bands_of_kf_5e227_give_the_same_values(cpu_backend):
    """Bands of 4 rows drawn bottom first, the pixels float64 cannot place left to the loop (the
    MPFR redo, a function of the pixel's place alone, is the test above's): before, 7 of
    256 counts and 217 values differed from the one piece."""
    base = kf("5e227", (16, 16))
    req = DeepFrameRequest(base.center_re, base.center_im, base.width, base.size, base.max_iter,
                           want_values=True)
    whole = _frames(cpu_backend, exact=False).render(req).values.copy()
    banded = _banded(cpu_backend, req, 4, -1, exact=False)
    differ = np.floor(whole) != np.floor(banded)
    assert np.array_equal(whole, banded), (int(differ.sum()), int((whole != banded).sum()))


def test_a_band_gives_its_picture_back_to_the_last_digit():
    req = DeepFrameRequest(CRE, CIM, "1e-30", (48, 7), 100)     # 1e-30 / 48: no exact decimal
    for r0, n in ((0, 3), (2, 5), (6, 1)):
        whole = band_request(req, r0, n, False).picture()
        assert Decimal(whole.center_im) == Decimal(CIM) and tuple(whole.size) == (48, 7)


def test_the_loop_hands_back_what_it_cannot_place_and_settle_iterates_it():
    """exact_redo.settle: a pixel below 0 is one the loop's last pass still doubted; it is
    replaced by MPFR's value of that place of the whole picture (a band's row moved down)."""
    req = DeepRequest(CRE, CIM, "1e-30", (6, 4), 3000)
    truth = exact_values(req)
    band = DeepRequest(*_band_centre(req, 2, 2), "1e-30", (6, 2), 3000, within=(4, 2))
    values = truth[2:4].copy()
    values[1, 3] = -1.0 - 12.5          # handed back: the middle tier proves it
    got = exact_redo.settle(band, values)
    assert got == {"dd_pixels": 1, "exact_pixels": 0, "marked_pixels": 0}
    assert values[1, 3] == pytest.approx(truth[3, 3], abs=1e-6)
    values[0, 0] = -1.0 - 42.25         # the default: kept at the loop's value, marked
    assert exact_redo.settle(band, values, exact=False) == {"dd_pixels": 0, "exact_pixels": 0,
                                                            "marked_pixels": 1}
    assert values[0, 0] == 42.25


def test_what_the_middle_tier_cannot_prove_goes_to_mpfr_or_is_marked(monkeypatch):
    req = DeepRequest(CRE, CIM, "1e-30", (6, 4), 3000)
    truth = exact_values(req)
    real = dd_pixels.dd_at
    monkeypatch.setattr(dd_pixels, "dd_at", lambda *a, **k: (real(*a, **k)[0] + 0.5,
                                                              np.zeros(len(a[1]), bool)))
    values = truth.copy()
    values[1, 3] = -1.0 - 12.5
    assert exact_redo.settle(req, values) == {"dd_pixels": 0, "exact_pixels": 1, "marked_pixels": 0}
    assert values[1, 3] == pytest.approx(truth[1, 3], abs=1e-9)
    values[0, 0] = -1.0 - 42.25
    got = exact_redo.settle(req, values, exact=exact_redo.PROVED)
    assert got == {"dd_pixels": 0, "exact_pixels": 0, "marked_pixels": 1}
    assert values[0, 0] == pytest.approx(truth[0, 0] + 0.5, abs=1e-6)     # the tier's value
    # where the tier does not reach, the loop's own value stands
    monkeypatch.setattr(dd_pixels, "reaches", lambda whole: False)
    values[0, 0] = -1.0 - 42.25
    assert exact_redo.settle(req, values, exact=exact_redo.PROVED)["marked_pixels"] == 1
    assert values[0, 0] == 42.25


def test_a_pixel_iterated_once_is_not_iterated_again(monkeypatch):
    """ExactCache: a re-render (or the same pixel as part of a band) costs no second MPFR run."""
    req = DeepRequest(CRE, CIM, "1e-30", (6, 4), 3000)
    calls = []
    real = mpfr_escape.settled_values
    monkeypatch.setattr(mpfr_escape, "settled_values",
                        lambda whole, px, **kw: calls.append(list(px)) or real(whole, px, **kw))
    cache = exact_redo.ExactCache()
    first, _ = exact_redo.exact_at(req, [3], [2], cache=cache)
    band = DeepRequest(*_band_centre(req, 2, 2), "1e-30", (6, 2), 3000, within=(4, 2))
    again, _ = exact_redo.exact_at(band, [1, 0], [2, 2], cache=cache)
    assert calls == [[(3, 2)], [(2, 2)]] and again[0] == first[0]


def _band_centre(req, row0, rows):
    b = band_request(DeepFrameRequest(req.center_re, req.center_im, req.width, req.size,
                                      req.max_iter), row0, rows, False)
    return b.center_re, b.center_im


def test_mpfr_escape_matches_exact_py_and_the_audit_finds_a_wrong_pixel():
    req = DeepRequest(CRE, CIM, "1e-30", (5, 4), 3000)
    truth = exact_values(req)
    got = mpfr_escape.settled_values(req, [(r, c) for r in range(4) for c in range(5)])
    assert np.allclose([v for v, _, _ in got], truth.reshape(-1), atol=1e-9)
    wrong = truth.copy()
    wrong[2, 1] += 7
    pixels = audit.choose(truth, random=5, other=wrong)
    assert (2, 1, "disputed") in pixels and len(pixels) == 6
    res = audit.audit(req, wrong, pixels)
    assert res.worst == 7 and res.within_one == 5
    assert audit.audit(req, truth, pixels).within_one == 6


def test_an_exact_pixel_stops_when_cancelled():
    """A pixel's MPFR run checks the frame's cancel every CHUNK iterations (seconds a pixel at
    great depths: a cancelled frame must not wait for them)."""
    class Stop(Exception):
        pass

    class Cancel:
        checks = 0

        def check(self):
            Cancel.checks += 1
            raise Stop

    req = DeepRequest("-0.1", "0.05", "1e-20", (2, 2), 3 * mpfr_escape.CHUNK)   # inside: no escape
    with pytest.raises(Stop):
        mpfr_escape.settled_values(req, [(0, 0), (1, 1)], cancel=Cancel())
    assert Cancel.checks >= 1


def test_a_band_does_not_take_the_orbit_an_earlier_frame_left(cpu_backend):
    """A worker that drew a nearby frame (whose orbit serves this place, so the window would pan
    on it) draws a band on the picture's own orbit all the same."""
    req = DeepFrameRequest(CRE, CIM, "1e-25", (24, 17), 20000, want_values=True)
    fresh = _banded(cpu_backend, req, 6)
    r = _frames(cpu_backend)
    r.render(DeepFrameRequest(CRE, add_decimal_(CIM, "2e-25"), "1e-25", (24, 17), 20000))
    assert not r.deep.orbit.centred_at(CRE, CIM)
    out = np.vstack([r.band(req, r0, min(6, 17 - r0), True).copy() for r0 in range(0, 17, 6)])
    assert np.array_equal(out, fresh) and r.deep.orbit.centred_at(CRE, CIM)


def test_by_default_the_pixels_float64_cannot_place_are_marked_not_silently_wrong(cpu_backend):
    """Without --exact-pixels the doubtful pixels keep the loop's value, and are counted: every
    pixel off MPFR by more than one is among them."""
    req = kf("5e227", (16, 16))
    r = DeepRenderer(cpu_backend)
    r.precision_headroom = 0
    assert r.exact_redo is False
    res = r.render_values(req)
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    wrong = int((np.abs(np.floor(res.values).astype(np.int64) - truth) > 1).sum())
    assert res.stats["exact_pixels"] == 0 and res.stats["dd_pixels"] == 0
    assert 0 < wrong <= res.stats["marked_pixels"] < 0.1 * truth.size
    r.exact_redo = exact_redo.PROVED        # the middle tier proves them: none left marked
    res = r.render_values(req)
    wrong = int((np.abs(np.floor(res.values).astype(np.int64) - truth) > 1).sum())
    assert wrong == 0 and res.stats["dd_pixels"] >= 5 and res.stats["marked_pixels"] == 0



def test_the_middle_tier_gives_mpfrs_count_where_float64_fails(cpu_backend, monkeypatch):
    """KF's 5e227 at 16x16: of the pixels the loop hands back, float64 has 5 wrong by 74 to 903
    iterations (the tier turned off: what the default render drew before); the double-double
    tier proves every one of them, each within ±1 of MPFR's count."""
    req = kf("5e227", (16, 16))
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    monkeypatch.setattr(dd_pixels, "reaches", lambda whole: False)
    r = DeepRenderer(cpu_backend)
    r.precision_headroom = 0
    layers = np.zeros((5, 16, 16), np.int32)
    loop = r.render_values(req, layers=layers).values
    places = [(int(a), int(b)) for a, b in np.argwhere(layers[4] == 2)]
    at = tuple(np.array(places).T)
    assert int((np.abs(np.floor(loop[at]).astype(np.int64) - truth[at]) > 1).sum()) >= 5
    orbits = {}
    values, proved = dd_pixels.dd_at(req.picture(), places, orbits=orbits)
    assert proved.all(), [p for p, ok in zip(places, proved) if not ok]
    off = np.floor(values).astype(np.int64) - truth[at]
    assert np.abs(off).max() <= 1, off.tolist()
    # with BLA (long steps taken) as step by step
    from kernels.mandelbrot.tables import dd_bla
    from kernels.mandelbrot.redo.dd_orbit import EXTRA_BITS
    orbit, (tab, levels) = next(iter(orbits.values()))
    assert (tab[levels[10, 0]:levels[10, 0] + levels[10, 1], dd_bla.RAD] > 0).any()
    bits = req.picture().precision + EXTRA_BITS
    dcs = dd_pixels.deltas(req.picture(), places, bits)
    plain, ok = dd_pixels.dd_values(orbit, (tab, levels[:0]), dcs, req.max_iter, 2.0 ** -bits)
    assert ok.all() and np.abs(np.floor(plain) - np.floor(values)).max() <= 1


def test_the_middle_tier_leaves_few_of_kf_5e227_marked(cpu_backend):
    """32x32 of KF's 5e227: 26 pixels handed back (2.5 %, all marked without the middle tier);
    with it 2 (0.2 %: their bounds need more than double-double's 106 bits; 64x64 leaves
    4 of 4,096, 0.1 %)."""
    r = DeepRenderer(cpu_backend)
    r.precision_headroom = 0
    r.exact_redo = exact_redo.PROVED
    layers = np.zeros((5, 32, 32), np.int32)
    res = r.render_values(kf("5e227", (32, 32)), layers=layers)
    assert res.stats["dd_pixels"] >= 24 and res.stats["exact_pixels"] == 0
    assert res.stats["marked_pixels"] <= 2, res.stats
    # the redone overlay draws 2 where a pixel stays marked, 1 where it was settled
    assert int((layers[4] == 2).sum()) == res.stats["marked_pixels"]


def test_the_middle_tiers_bound_proves_only_what_its_precision_holds():
    """Every pixel of a 1e-25 frame proved and within ±1 of MPFR; an orbit said to be rounded at
    2^-60 (the bound's noise term) proves none of those that escape: the bound is what decides,
    not a constant."""
    from kernels.mandelbrot.redo.dd_orbit import EXTRA_BITS
    req = DeepRequest(CRE, CIM, "1e-25", (6, 4), 20000)
    truth = exact_values(req)
    whole = req.picture()
    bits = whole.precision + EXTRA_BITS
    places = [(r, c) for r in range(4) for c in range(6)]
    orbits = {}
    values, proved = dd_pixels.dd_at(whole, places, orbits=orbits)
    assert proved.all()
    assert np.abs(np.floor(values) - np.floor(truth.reshape(-1))).max() <= 1
    orbit, table = next(iter(orbits.values()))
    dcs = dd_pixels.deltas(whole, places, bits)
    _, ok = dd_pixels.dd_values(orbit, table, dcs, req.max_iter, 2.0 ** -60)
    escaping = truth.reshape(-1) < req.max_iter
    assert escaping.sum() >= 20 and not ok[escaping].any()


def test_an_orbit_cut_short_rebases_and_stays_right(monkeypatch):
    """The double-double orbit stops at MAX_ORBIT points: pixels past it rebase to Z_0, and what
    the bound proves is still within ±1 of MPFR."""
    monkeypatch.setattr(dd_pixels, "MAX_ORBIT", 5000)
    req = DeepRequest(CRE, CIM, "1e-25", (6, 4), 20000)
    truth = exact_values(req).reshape(-1)
    orbits = {}
    values, proved = dd_pixels.dd_at(req.picture(), [(r, c) for r in range(4) for c in range(6)],
                                     orbits=orbits)
    assert next(iter(orbits.values()))[0].shape[0] == 5001
    assert proved.sum() >= 12
    assert np.abs(np.floor(values[proved]) - np.floor(truth[proved])).max() <= 1


def test_the_middle_tiers_deltas_are_the_pixels_centres_to_106_bits():
    """dd_pixels.deltas (double-double products of the spacing) against exact.pixel_point less
    the centre in MPFR, at KF's 5e227 and 1024x1024: within 2^-104 of each δc."""
    from kernels.mandelbrot.redo.exact import pixel_point
    from kernels.mandelbrot.reference.reference import gmpy2_module
    gmpy2 = gmpy2_module()
    whole = kf("5e227", (1024, 1024)).picture()
    bits = whole.precision + 64
    places = [(0, 0), (1023, 1023), (511, 512), (10, 700), (777, 3)]
    got = dd_pixels.deltas(whole, places, bits)
    with gmpy2.context(precision=bits):
        cre, cim = gmpy2.mpfr(str(whole.center_re)), gmpy2.mpfr(str(whole.center_im))
        for (r, c), row in zip(places, got):
            pre, pim = pixel_point(whole, r, c)
            for want, hi, lo in ((pre - cre, row[0], row[1]), (pim - cim, row[2], row[3])):
                assert abs(want - gmpy2.mpfr(hi) - gmpy2.mpfr(lo)) <= abs(want) * 2.0 ** -104


@pytest.mark.parametrize("pixels, said", [("proved", True), ("marked", False)])
def test_iterating_doubtful_pixels_again_is_a_stage_of_its_own(cpu_backend, pixels, said):
    """A picture whose doubtful pixels are iterated again (seconds at the hardest places) says so
    as a progress stage after its pixels, so the bar's line is not left on 'pixels' meanwhile;
    one that marks them has no such stage."""
    from kernels.mandelbrot.requests.request import DOUBTFUL_STAGE
    r = DeepRenderer(cpu_backend)
    r.references = ReferenceStore(cache=None)
    req = kf("5e227", (16, 16))
    frame = DeepFrameRequest(req.center_re, req.center_im, req.width, req.size, req.max_iter,
                             pixels=pixels)
    stages = []
    got = r.render_values(frame, progress=lambda f, stage: stages.append(stage))
    assert (DOUBTFUL_STAGE in stages) is said, stages
    if said:
        assert stages.index(DOUBTFUL_STAGE) > stages.index("pixels")
        assert got.stats["dd_pixels"] == 5
