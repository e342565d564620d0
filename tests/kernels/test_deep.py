"""Deep zoom on the CPU: the request's validation, the reference orbit, and frames held to brute
force — every pixel iterated on its own in arbitrary precision (gmpy2) — at depths either side of
float64's range (1e-20 to 1e-320), with interior points, rebasing, and both number formats.

Acceptance (issue #10): escape counts within ±1 of brute force for >= 99.5 % of the pixels and the
inside/outside decision everywhere but a handful of boundary pixels. Grids stay small (brute force
costs microseconds per iteration in Python)."""
from decimal import Decimal

import numpy as np
import pytest

from kernels.cpu_chunks import control
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.requests.deep_request import DeepRequest, add_decimal, deep_format

gmpy2 = pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.redo import exact
from kernels.mandelbrot.tables.bla import build_table, level_counts
from kernels.mandelbrot.numbers.orbit_format import EZERO
from kernels.mandelbrot.reference.reference import ReferenceOrbit
from kernels.mandelbrot.deep.renderer import DeepRenderer


@pytest.fixture(scope="module")
def cpu():
    from kernels.backend import resolve
    return DeepRenderer(resolve("cpu"))


def near(location, width, frac=("0.1234567", "-0.0765432")):
    """A centre a fraction of a frame off the location, so no pixel sits exactly on it."""
    w = Decimal(width)
    return (add_decimal(location.center_re, w * Decimal(frac[0])),
            add_decimal(location.center_im, w * Decimal(frac[1])))


def counts(values):
    return np.floor(values).astype(np.int64)


def assert_matches_brute_force(values, truth, max_iter, boundary_pixels=3):
    assert values.shape == truth.shape and values.dtype == np.float64
    close = np.abs(counts(values) - counts(truth)) <= 1
    assert close.mean() >= 0.995, f"only {close.mean():.2%} within ±1 of brute force"
    inside_differs = int(np.sum((values >= max_iter) != (truth >= max_iter)))
    assert inside_differs <= boundary_pixels, f"{inside_differs} pixels inside/outside differ"


# ---------------------------------------------------------------- request and formats

def test_deep_format_by_width():
    # whether float64 would do instead depends on the centre and the pixels too: that is
    # kernels/mandelbrot/requests/number_format.py's number_format, the one place that decides
    assert deep_format("1e-14") == "perturbation"
    assert deep_format((1.5, -200)) == "perturbation"
    assert deep_format("9.9e-291") == "extended"
    assert deep_format((1, -1000)) == "extended"
    assert deep_format("1e-100000") == "extended"


@pytest.mark.parametrize("kwargs, words", [
    ({"center_re": "abc"}, "not a decimal number"),
    ({"center_re": "nan"}, "finite"),
    ({"center_im": float("inf")}, "finite"),
    ({"center_re": "1" * 1_000_000}, "characters"),
    ({"center_re": "7.5"}, "between -4 and 4"),
    ({"width": "0"}, "greater than 0"),
    ({"width": "-1e-30"}, "greater than 0"),
    ({"width": (1, -20000)}, "deeper than the deepest"),
    ({"width": (1, -10 ** 9)}, "absurd"),
    ({"width": ""}, "empty"),
    ({"size": (0, 10)}, "at least 1×1"),
    ({"size": (100000, 10)}, "too large"),
    ({"max_iter": 0}, "between 1 and"),
    ({"max_iter": 2.5}, "whole number"),
    ({"number_format": "double"}, "unknown number format"),
    ({"number_format": "perturbation", "width": "1e-320"}, "extended format"),
])
def test_validate_explains_what_is_wrong(kwargs, words):
    base = {"center_re": "-0.75", "center_im": "0.1", "width": "1e-30", "size": (8, 6), "max_iter": 100}
    base.update(kwargs)
    with pytest.raises(ValueError, match=words):
        DeepRequest(**base).validate()


def test_validate_refuses_a_reference_that_would_not_fit():
    req = DeepRequest("-0.75", "0.1", "1e-300", (8, 6), 9_000_000)
    with pytest.raises(ValueError, match=r"9,000,000 iterations at [\d,]+ bits .* needs about [\d.]+ GiB"):
        req.check_reference_memory(available=2 * 2 ** 30)
    req.check_reference_memory(available=64 * 2 ** 30)  # fits in 64 GiB


def test_request_accepts_long_strings_numbers_and_pairs():
    req = DeepRequest(loc.KORMANYOS_VERY_DEEP.center_re, loc.KORMANYOS_VERY_DEEP.center_im,
                      (2.5, -1000), (16, 9), 1000).validate()
    assert req.format == "extended"
    assert 3300 < req.precision < 3500          # ~3322 bits for 1e-1000 / 16 + guard
    assert DeepRequest(-0.75, 0.1, 1e-20, (4, 4), 10).validate().format == "perturbation"


def test_add_decimal_moves_long_centres_without_rounding():
    k = loc.KORMANYOS_VERY_DEEP.center_re
    moved = add_decimal(k, "1e-1000")
    assert len(moved) >= len(k) and moved != k
    assert add_decimal(moved, "-1e-1000").rstrip("0") == k.rstrip("0")
    assert add_decimal("1", Decimal("-7.6543e-321")).startswith("0.99999999999999999999999")


# ---------------------------------------------------------------- reference orbit

def test_reference_orbit_matches_direct_iteration_and_stops_at_escape():
    orbit = ReferenceOrbit("0.5", "0.5", 128).extend(1000)
    z, c = 0j, complex(0.5, 0.5)
    direct = [0j]
    while abs(direct[-1]) ** 2 <= 65536.0 and len(direct) <= 1000:
        z = z * z + c
        direct.append(z)
    assert orbit.escaped and orbit.length == len(direct)
    np.testing.assert_allclose(orbit.z, direct, rtol=1e-12)
    arr, e = orbit.arrays()
    np.testing.assert_array_equal(np.ldexp(arr[:, 2], e) + 1j * np.ldexp(arr[:, 3], e), orbit.z)


def test_reference_orbit_keeps_exact_zeros_and_tiny_values():
    orbit = ReferenceOrbit("-1", "0", 64).extend(10)       # 0, -1, 0, -1, ...
    arr, e = orbit.arrays()
    assert e[0] == EZERO and e[2] == EZERO and arr[2, 2] == 0.0
    # a centre 1e-400 off the origin: Z_1 = C underflows float64, the floatexp form keeps it
    orbit = ReferenceOrbit("1e-400", "-3e-401", 1500).extend(3)
    arr, e = orbit.arrays()
    assert arr[1, 0] == 0.0                                  # the plain float64 pair reads 0
    got = gmpy2.mpfr(arr[1, 2]) * gmpy2.mpfr(2) ** int(e[1])
    assert abs(got / gmpy2.mpfr("1e-400") - 1) < 1e-15
    assert 0.5 <= max(abs(arr[1, 2]), abs(arr[1, 3])) < 1.0


def test_extending_an_orbit_equals_computing_it_at_once():
    whole = ReferenceOrbit(loc.MISIUREWICZ_I.center_re, loc.MISIUREWICZ_I.center_im, 256).extend(3000)
    part = ReferenceOrbit(loc.MISIUREWICZ_I.center_re, loc.MISIUREWICZ_I.center_im, 256)
    part.extend(1000)
    v = part.version
    part.extend(3000)
    assert part.version > v and part.length == whole.length == 3001
    np.testing.assert_array_equal(part.z, whole.z)


def test_reference_orbit_reports_progress_and_can_be_cancelled():
    seen = []
    ReferenceOrbit("-0.1", "0.1", 200).extend(20000, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) >= 4

    class Stop(Exception):
        pass

    class CancelAfter:
        def __init__(self, n):
            self.n = n

        def check(self):
            self.n -= 1
            if self.n < 0:
                raise Stop

    orbit = ReferenceOrbit("-0.1", "0.1", 200)
    with pytest.raises(Stop):
        orbit.extend(50000, cancel=CancelAfter(2))
    assert orbit.length == 1 and orbit.iterations == 0     # left as it was


def test_bla_table_levels_and_radii():
    orbit = ReferenceOrbit(loc.MISIUREWICZ_I.center_re, loc.MISIUREWICZ_I.center_im, 256).extend(1000)
    arr, e = orbit.arrays()
    tab, tabe, levels = build_table(arr, e, (0.5, -60))
    counts_ = level_counts(orbit.length)
    assert counts_[0] == orbit.length - 2 and list(levels[:, 1]) == counts_
    assert tab.shape[0] == sum(counts_)
    # a merged step never reaches further than its first half: R(level k) <= R(level k-1) there
    for k in range(1, len(counts_)):
        for j in range(min(8, counts_[k])):
            hi = levels[k, 0] + j
            lo = levels[k - 1, 0] + 2 * j
            assert (tabe[hi, 2], tab[hi, 4]) <= (tabe[lo, 2], tab[lo, 4]) or tab[hi, 4] == 0.0
    # single step at m: A = 2 Z_m, B = 1
    m = 5
    a = np.ldexp(tab[m - 1, 0], tabe[m - 1, 0]) + 1j * np.ldexp(tab[m - 1, 1], tabe[m - 1, 0])
    assert a == 2 * orbit.z[m]
    assert np.ldexp(tab[m - 1, 2], tabe[m - 1, 1]) == 1.0


# ---------------------------------------------------------------- frames against brute force

# (name, location, width, size, max_iter): depths either side of float64's 1e-308
BRUTE_FORCE_CASES = [
    ("spiral 1e-20", loc.MISIUREWICZ_I, "1e-20", (48, 32), 2000),
    ("spiral 1e-60", loc.MISIUREWICZ_I, "1e-60", (48, 32), 2000),
    ("spiral 1e-300", loc.MISIUREWICZ_I, "1e-300", (24, 16), 2000),
    ("spiral 1e-320", loc.MISIUREWICZ_I, "1e-320", (24, 16), 2000),
    ("spiral 1e-1000", loc.MISIUREWICZ_I, "1e-1000", (8, 6), 4000),
    ("minibrot 4e-90", loc.MINIBROT_139, "4e-90", (24, 16), 3000),
    ("minibrot 3e-318", loc.MINIBROT_424, "3e-318", (16, 10), 6000),
]


@pytest.mark.parametrize("name, location, width, size, max_iter", BRUTE_FORCE_CASES,
                         ids=[c[0] for c in BRUTE_FORCE_CASES])
def test_frames_match_brute_force(cpu, name, location, width, size, max_iter):
    cre, cim = (location.center_re, location.center_im) if "minibrot" in name else near(location, width)
    req = DeepRequest(cre, cim, width, size, max_iter)
    res = cpu.render_values(req)
    assert res.format == deep_format(width)
    truth = exact.exact_values(req)
    assert_matches_brute_force(res.values, truth, max_iter)
    # structure in view, not a flat frame
    assert np.ptp(counts(truth)) >= 5
    if "minibrot" in name:
        inside = (truth >= max_iter).mean()
        assert 0.05 < inside < 0.6
        assert res.stats["rebases"] > 0


def test_published_deep_point_matches_brute_force(cpu):
    """The very deep published coordinate at 1e-30 (escapes after ~5,000-8,000 iterations)."""
    k = loc.KORMANYOS_VERY_DEEP
    req = DeepRequest(k.center_re, k.center_im, "1e-30", (12, 8), 9000)
    assert_matches_brute_force(cpu.render_values(req).values, exact.exact_values(req), 9000)


def test_rebasing_carries_pixels_past_the_end_of_an_escaping_reference(cpu):
    """The reference sits 0.45 frame widths off c = i and escapes first; the pixels nearer i live
    longer than it, which only rebasing (at the orbit's end, back to Z_0) lets them do."""
    width = "1e-40"
    cre, cim = near(loc.MISIUREWICZ_I, width, frac=("0.45", "0.3"))
    req = DeepRequest(cre, cim, width, (32, 24), 2000)
    from kernels.backend import resolve
    r = DeepRenderer(resolve("cpu"))
    r.period_stop = False       # the orbit would stop at a period before it escapes
    res = r.render_values(req)
    assert res.reference.escaped
    assert counts(res.values).max() + 1 > res.reference.length   # pixels outlived the reference
    assert res.stats["rebases"] >= int((counts(res.values) + 1 >= res.reference.length).sum())
    assert_matches_brute_force(res.values, exact.exact_values(req), 2000)


def test_bla_agrees_with_plain_perturbation_and_skips_most_iterations(cpu):
    cre, cim = near(loc.MISIUREWICZ_I, "1e-200")
    with_bla = cpu.render_values(DeepRequest(cre, cim, "1e-200", (32, 24), 2000))
    plain = cpu.render_values(DeepRequest(cre, cim, "1e-200", (32, 24), 2000, bla=False))
    assert plain.stats["bla_steps"] == 0
    assert with_bla.stats["bla_iterations"] > 0.5 * counts(with_bla.values).sum()
    assert with_bla.stats["perturbation_steps"] < 0.5 * plain.stats["perturbation_steps"]
    assert np.mean(np.abs(counts(with_bla.values) - counts(plain.values)) <= 1) >= 0.995


SHARED_LOOP_CASES = [
    ("published 1e-30", loc.KORMANYOS_VERY_DEEP, "1e-30", 9000, True),
    ("spiral 1e-60", loc.MISIUREWICZ_I, "1e-60", 2000, True),
    ("minibrot 4e-90", loc.MINIBROT_139, "4e-90", 3000, True),
    ("spiral 1e-40 plain", loc.MISIUREWICZ_I, "1e-40", 2000, False),
    ("spiral 1e-290 forced", loc.MISIUREWICZ_I, "1e-295", 2000, True),
]


@pytest.mark.parametrize("name, location, width, max_iter, bla", SHARED_LOOP_CASES,
                         ids=[c[0] for c in SHARED_LOOP_CASES])
def test_cpu_perturbation_loop_equals_the_shared_loop(cpu, name, location, width, max_iter, bla):
    """perturbation_loop.py's loop (the perturbation format's) against the extended loop compiled
    for the perturbation format (perturbation_loop.KMIN_CODE): the same values and the same counts
    bit for bit, BLA on and off, with rebasing."""
    from kernels.mandelbrot.loops import perturbation_loop
    from kernels.mandelbrot.tables.layout import N_STATS
    from kernels.mandelbrot.deep.renderer import FrameGeometry
    cre, cim = near(location, width)
    size = (24, 16)
    fmt = "perturbation" if "forced" in name else "auto"
    req = DeepRequest(cre, cim, width, size, max_iter, bla=bla, number_format=fmt)
    res = cpu.render_values(req)
    assert res.format == "perturbation"
    assert res.stats["perturbation_steps"] > 0 and (res.stats["bla_steps"] > 0) == bla
    orb, oexp = res.reference.arrays()
    key, tab, tabe, levels = cpu._table
    if tab is None:     # only its layout kept (built with the orbit, table_ahead.py): the table
        tab, tabe, levels = build_table(orb, oexp, (0.5, key[5] + 1), cpu.eps_bits)
    geo = FrameGeometry.of(req, res.reference)
    values = np.zeros(size[::-1])
    stats = np.zeros((size[1], N_STATS), dtype=np.int64)
    perturbation_loop.deep_rows_shared_cpu(values, stats, 0, size[1], 1, geo.d0r, geo.d0i,
                                           geo.step, geo.cexp, geo.half_w, geo.half_h, orb, oexp,
                                           tab, tabe, levels, 0, 2.0 ** -cpu.eps_bits, max_iter,
                                           control())
    np.testing.assert_array_equal(res.values, values)
    shared = stats.sum(axis=0)
    assert [res.stats[k] for k in ("perturbation_steps", "bla_steps", "bla_iterations",
                                   "rebases", "redone_pixels")] == shared.tolist()


# ---------------------------------------------------------------- number-format switches

@pytest.mark.parametrize("width, forced", [("1.0001e-290", "extended"), ("0.9999e-290", "perturbation")])
def test_frames_either_side_of_the_extended_switch_agree(cpu, width, forced):
    cre, cim = near(loc.MISIUREWICZ_I, "1e-290")
    auto = cpu.render_values(DeepRequest(cre, cim, width, (32, 24), 2000))
    other = cpu.render_values(DeepRequest(cre, cim, width, (32, 24), 2000, number_format=forced))
    assert {auto.format, other.format} == {"perturbation", "extended"}
    assert auto.format == deep_format(width)
    assert np.mean(counts(auto.values) == counts(other.values)) >= 0.995


def test_frames_just_above_and_below_the_extended_switch_agree(cpu):
    cre, cim = near(loc.MISIUREWICZ_I, "1e-290")
    above = cpu.render_values(DeepRequest(cre, cim, "1.000001e-290", (32, 24), 2000))
    below = cpu.render_values(DeepRequest(cre, cim, "0.999999e-290", (32, 24), 2000))
    assert (above.format, below.format) == ("perturbation", "extended")
    # the same view to a millionth of its width: pixels move by < 2e-5 of a pixel
    assert np.mean(np.abs(counts(above.values) - counts(below.values)) <= 1) >= 0.995


def test_deep_renderer_gives_escape_py_values_where_float64_works(cpu):
    """Same value convention as the float64 kernels (escape.py): where float64 is exact (a shallow
    frame, few iterations) the smooth values agree to round-off, inside points = max_iter."""
    from kernels.mandelbrot.loops.escape import escape_value
    cx, cy, width, (w, h), it = -0.75, 0.05, 0.1, (32, 24), 300
    from kernels.mandelbrot.requests.number_format import number_format
    assert number_format(repr(cx), repr(cy), repr(width), w) == "float64"
    deep = cpu.render_values(DeepRequest(repr(cx), repr(cy), repr(width), (w, h), it)).values
    step = width / w
    plain = np.array([[escape_value(cx + (c + 0.5 - w / 2) * step, cy - (r + 0.5 - h / 2) * step, it)
                       for c in range(w)] for r in range(h)])
    assert (plain >= it).any() and (plain < it).any()
    assert np.mean(np.abs(deep - plain) < 1e-6) >= 0.995
    np.testing.assert_array_equal(deep >= it, plain >= it)


# ---------------------------------------------------------------- reuse and timings

def test_reference_and_table_are_reused_across_pans_and_rerenders():
    from kernels.backend import resolve
    r = DeepRenderer(resolve("cpu"))
    # whole orbits: a period-stopped one takes well under a millisecond, too little to compare
    # times with, and serves any iteration count (test_deep_period.py)
    r.period_stop = False
    cre, cim = near(loc.MISIUREWICZ_I, "1e-100")
    first = r.render_values(DeepRequest(cre, cim, "1e-100", (16, 12), 2000))
    again = r.render_values(DeepRequest(cre, cim, "1e-100", (16, 12), 2000))
    assert not first.reused and again.reused and again.table_reused
    np.testing.assert_array_equal(first.values, again.values)
    assert again.timings.detail["reference"] < first.timings.detail["reference"]
    # a pan by two widths keeps the reference; one far away replaces it
    pan = add_decimal(cre, "2e-100")
    assert r.render_values(DeepRequest(pan, cim, "1e-100", (16, 12), 2000)).reused
    far = add_decimal(cre, "1e-90")
    assert not r.render_values(DeepRequest(far, cim, "1e-100", (16, 12), 2000)).reused
    # more iterations extend the same orbit (c = i never escapes)
    first = r.render_values(DeepRequest("0", "1", "1e-100", (16, 12), 2000))
    more = r.render_values(DeepRequest("0", "1", "1e-100", (16, 12), 4000))
    assert not first.reused and more.reused and more.reference is first.reference
    assert more.reference.length == 4001 and not more.table_reused


def test_table_serves_a_few_zoom_steps_then_is_rebuilt():
    from kernels.backend import resolve
    from kernels.mandelbrot.deep.renderer import TABLE_SLACK_BITS
    r = DeepRenderer(resolve("cpu"))
    r.period_stop = False     # one orbit throughout (a period-stopped one extends deeper)
    cre, cim = near(loc.MISIUREWICZ_I, "1e-100")
    rebuilt, zoomed = 0, []
    for step in range(12):                  # 2x in per step
        width = str(Decimal("1e-100") / 2 ** step)
        res = r.render_values(DeepRequest(cre, cim, width, (16, 12), 2000))
        assert res.reused or step == 0
        rebuilt += not res.table_reused
        zoomed.append((width, res))
        res.values = res.values.copy()      # a ring of 3 buffers
    # a table serves TABLE_SLACK_BITS halvings (the first frame's may serve fewer)
    pattern = "".join("r" if res.table_reused else "B" for _, res in zoomed)
    assert 12 // TABLE_SLACK_BITS <= rebuilt <= 12 // TABLE_SLACK_BITS + 1, pattern
    assert "B" + "r" * (TABLE_SLACK_BITS - 1) + "B" in pattern, pattern
    # the same frame again keeps it; a reused table is the one a fresh renderer builds
    width, last = zoomed[-1]
    assert r.render_values(DeepRequest(cre, cim, width, (16, 12), 2000)).table_reused
    shared = next((w, res) for w, res in zoomed[1:] if res.table_reused)
    fresh = DeepRenderer(resolve("cpu"))
    fresh.period_stop = False
    fresh.orbit = r.orbit                   # the same reference: only the table may differ
    again = fresh.render_values(DeepRequest(cre, cim, shared[0], (16, 12), 2000))
    np.testing.assert_array_equal(again.values, shared[1].values)


def test_timings_name_the_phases():
    from kernels.backend import resolve
    r = DeepRenderer(resolve("cpu"))
    res = r.render_values(DeepRequest("0", "1", "1e-30", (8, 6), 500))
    ph = res.timings.phases_ms
    assert ph["host"] > 0 and ph["kernel"] > 0 and ph["total"] >= ph["host"]
    assert ph["h2d"] is None and ph["d2h"] is None                # nothing crosses a bus on the CPU
    assert {"reference", "table"} <= set(res.timings.detail)


def test_cancel_inside_the_pixels_stops_the_frame():
    from kernels.backend import resolve

    class Stop(Exception):
        pass

    class StopAtPixels:
        def check(self):
            if stage[-1:] == ["pixels"]:
                raise Stop

    stage = []
    r = DeepRenderer(resolve("cpu"))
    with pytest.raises(Stop):
        r.render_values(DeepRequest("0", "1", "1e-30", (64, 4096), 200), cancel=StopAtPixels(),
                        progress=lambda f, s: stage.append(s))
    assert stage.count("pixels") == 1                               # stopped after the first band
