"""Distance heatmap compute: the formula, the grid convention, the CPU twin, validation and CLI."""
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from services import requests as cli_requests
from kernels.distance import bench as dbench
from kernels.distance import renderer as Dr
from kernels.distance import request as D
from kernels import palettes

ROOT = Path(__file__).resolve().parents[2]
RTOL = 1e-9
ATOL_KM = 1e-9  # next to the reference point distances are ~0, where only absolute error means anything


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL_KM)


# ---- the formula -----------------------------------------------------------------------------------
def test_london_to_new_york():
    d = D.distance_km(51.5074, -0.1278, 40.7128, -74.0060)
    assert d == pytest.approx(5570.2, rel=1e-3)


def test_equator_antipodes_are_half_the_circumference():
    assert D.distance_km(0, 0, 0, 180) == pytest.approx(20015.1, rel=1e-3)
    assert D.distance_km(0, 0, 0, 180) == pytest.approx(math.pi * D.EARTH_RADIUS_KM, rel=1e-12)


def test_pole_to_pole_is_half_the_circumference():
    assert D.distance_km(90, 0, -90, 0) == pytest.approx(math.pi * D.EARTH_RADIUS_KM, rel=1e-12)
    # the longitude of a pole does not matter
    assert D.distance_km(90, 17, -90, -123) == pytest.approx(math.pi * D.EARTH_RADIUS_KM, rel=1e-12)


def test_a_point_to_itself_is_zero():
    assert D.distance_km(51.5074, -0.1278, 51.5074, -0.1278) == 0.0
    assert D.distance_km(-90, 0, -90, 45) == pytest.approx(0.0, abs=1e-9)


def test_symmetric_across_the_antimeridian():
    east, west = D.distance_km(10, 179.5, 10, -179.5), D.distance_km(10, -179.5, 10, 179.5)
    assert east == west
    # one degree of longitude apart, not 359
    assert east == pytest.approx(D.distance_km(10, 0, 10, 1), rel=1e-12)
    assert D.distance_km(0, 190, 0, -170) == pytest.approx(0.0, abs=1e-9)


def test_near_antipodes_stays_finite_and_below_half_circumference():
    d = D.distance_km(0.0, 0.0, -1e-12, 180.0 - 1e-12)
    assert np.isfinite(d) and d <= math.pi * D.EARTH_RADIUS_KM
    assert d == pytest.approx(math.pi * D.EARTH_RADIUS_KM, rel=1e-9)


# ---- grid convention and reference -----------------------------------------------------------------
def test_grid_row_zero_is_the_northern_edge_at_pixel_centres():
    req = D.DistanceRequest(bounds=(-10.0, 10.0, 100.0, 140.0), size=(4, 2))
    lats, lons = D.grid_axes(req)
    np.testing.assert_allclose(lats, [5.0, -5.0])
    np.testing.assert_allclose(lons, [105.0, 115.0, 125.0, 135.0])
    assert D.pixel_lat_lon(req, 0, 3) == pytest.approx((5.0, 135.0))


def test_reference_grid_matches_the_scalar_formula_in_every_unit():
    for unit, km in (("km", 1.0), ("nm", 1.852), ("mi", 1.609344)):
        req = D.DistanceRequest(size=(7, 5), unit=unit, ref=(12.0, 34.0))
        grid = D.reference_grid(req)
        lat, lon = D.pixel_lat_lon(req, 3, 6)
        assert grid[3, 6] == pytest.approx(D.distance_km(12.0, 34.0, lat, lon) / km, rel=1e-12)
        assert req.radius == pytest.approx(D.EARTH_RADIUS_KM / km)


# ---- the CPU twin ------------------------------------------------------------------------------------
CASES = [
    dict(),                                                                        # world, London
    dict(bounds=D.SEED_BOUNDS, ref=D.SEED_REF),                                    # the seed's mesh
    dict(bounds=(-30.0, 30.0, 150.0, 210.0), ref=(0.0, 180.0)),                   # over the antimeridian
    dict(bounds=(60.0, 90.0, -180.0, 180.0), ref=(90.0, 0.0), unit="nm"),         # the north pole
    dict(bounds=(-90.0, -60.0, -180.0, 180.0), ref=(45.0, 10.0), unit="mi"),      # far from the ref
    dict(ref=(-51.5074, 179.8722)),                                                # London's antipode
]


@pytest.mark.parametrize("case", CASES, ids=["world", "seed", "antimeridian", "pole", "south", "antipode"])
@pytest.mark.parametrize("size", [(16, 12), (33, 1), (1, 9)])
def test_cpu_twin_matches_reference(cpu_backend, case, size):
    req = D.DistanceRequest(size=size, want_values=True, **case)
    frame = Dr.Renderer(cpu_backend).render(req)
    assert frame.values.shape == (size[1], size[0]) and frame.values.dtype == np.float64
    close(frame.values, D.reference_grid(req))
    assert frame.rgba.shape == (size[1], size[0], 4) and frame.rgba.dtype == np.uint8
    assert frame.rgba.flags.c_contiguous


def expected_rgba(req, values, vmax):
    lut = palettes.lut(req.palette, D.LUT_SIZE)
    idx = np.clip(np.floor(values * ((D.LUT_SIZE - 1) / vmax) + 0.5), 0, D.LUT_SIZE - 1).astype(int)
    return lut[idx]


def test_cpu_colours_are_the_palette_over_zero_to_vmax(cpu_backend):
    req = D.DistanceRequest(size=(40, 20), want_values=True, palette="inferno")
    frame = Dr.Renderer(cpu_backend).render(req)
    assert frame.meta["vmax"] == pytest.approx(math.pi * D.EARTH_RADIUS_KM)
    np.testing.assert_array_equal(frame.rgba, expected_rgba(req, frame.values, frame.meta["vmax"]))
    assert frame.meta["unit"] == "km"


def test_units_scale_values_and_vmax(cpu_backend):
    r = Dr.Renderer(cpu_backend)
    km = r.render(D.DistanceRequest(size=(8, 4), want_values=True))
    nm = r.render(D.DistanceRequest(size=(8, 4), want_values=True, unit="nm"))
    close(nm.values * 1.852, km.values)
    assert nm.meta["vmax"] == pytest.approx(km.meta["vmax"] / 1.852)
    assert nm.meta["unit"] == "nm"


def test_longitudes_wrap(cpu_backend):
    r = Dr.Renderer(cpu_backend)
    a = r.render(D.DistanceRequest(size=(12, 6), ref=(20.0, -170.0), want_values=True)).values.copy()
    b = r.render(D.DistanceRequest(size=(12, 6), ref=(20.0, 190.0), want_values=True)).values.copy()
    c = r.render(D.DistanceRequest(size=(12, 6), ref=(20.0, 190.0), want_values=True,
                                   bounds=(-90.0, 90.0, 180.0, 540.0))).values
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(a, c, rtol=1e-9, atol=1e-6)


def test_fetch_value_agrees_with_values(cpu_backend):
    frame = Dr.Renderer(cpu_backend).render(D.DistanceRequest(size=(9, 7), want_values=True, unit="mi"))
    for row, col in ((0, 0), (6, 8), (3, 4)):
        assert frame.fetch_value(row, col) == pytest.approx(frame.values[row, col], rel=1e-9)


def test_buffers_are_reused_and_frames_rotate(cpu_backend):
    r = Dr.Renderer(cpu_backend)
    req = D.DistanceRequest(size=(16, 12))
    f1 = r.render(req)
    allocations = r.pool.allocations
    f2, f3, f4 = r.render(req), r.render(req), r.render(req)
    assert r.pool.allocations == allocations
    assert f1.rgba is not f2.rgba and f1.rgba is f4.rgba  # a ring of three
    assert f1.values is None
    assert f2.timings.phases_ms["compile"] is None and f2.timings.phases_ms["kernel"] is not None
    assert f2.timings.bytes == {"h2d": 0, "d2h": 0}
    assert f2.meta["strategy"] == "cpu-twin" and "CPU" in f2.meta["strategy_note"]


def test_cancelled_before_start(cpu_backend):
    class Token:
        def check(self):
            raise RuntimeError("cancelled")
    with pytest.raises(RuntimeError, match="cancelled"):
        Dr.Renderer(cpu_backend).render(D.DistanceRequest(size=(4, 4)), cancel=Token())


# ---- colour scale ------------------------------------------------------------------------------------
def test_colour_scale_is_stable_while_the_point_moves_inside():
    b = (35.0, 60.0, -10.0, 30.0)
    tops = {D.colour_max_km(b, ref) for ref in ((40.0, 0.0), (55.0, 25.0), (50.0, -5.0))}
    assert len(tops) == 1
    top = tops.pop()
    # at least the box's diagonal, at most half the circumference
    assert D.distance_km(35.0, -10.0, 60.0, 30.0) <= top + 1e-9 < math.pi * D.EARTH_RADIUS_KM
    assert D.colour_max_km(b, (-40.0, 120.0)) > top  # a far point widens it
    assert D.colour_max_km(D.WORLD, D.LONDON) == pytest.approx(math.pi * D.EARTH_RADIUS_KM)


# ---- rings -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ref", [(51.5074, -0.1278), (89.0, 30.0), (-10.0, 179.0), (0.0, 0.0)])
@pytest.mark.parametrize("radius", [100.0, 1000.0, 5000.0, 15000.0])
def test_ring_points_lie_at_the_radius(ref, radius):
    lats, lons = D.ring_polyline(ref[0], ref[1], radius, n=90)
    assert lats.shape == lons.shape == (90,)
    np.testing.assert_allclose(D.distance_km(ref[0], ref[1], lats, lons), radius, rtol=1e-9)
    # closed; around a pole the longitude comes back a full turn away
    assert lats[0] == pytest.approx(lats[-1])
    assert min((lons[0] - lons[-1]) % 360.0, (lons[-1] - lons[0]) % 360.0) == pytest.approx(0.0, abs=1e-9)
    assert np.all(np.abs(lons - ref[1]) <= 180.0 + 1e-9)


# ---- validation and CLI --------------------------------------------------------------------------
BAD = [
    (dict(ref=(91.0, 0.0)), "outside the valid latitudes"),
    (dict(ref=(-90.5, 0.0)), "outside the valid latitudes"),
    (dict(ref=(float("nan"), 0.0)), "finite"),
    (dict(ref=(0.0, float("inf"))), "finite"),
    (dict(bounds=(-95.0, 90.0, -180.0, 180.0)), "outside the valid latitudes"),
    (dict(bounds=(0.0, float("nan"), -180.0, 180.0)), "finite"),
    (dict(bounds=(10.0, 10.0, -180.0, 180.0)), "lat0 < lat1"),
    (dict(bounds=(20.0, 10.0, -180.0, 180.0)), "lat0 < lat1"),
    (dict(bounds=(-10.0, 10.0, 5.0, 5.0)), "zero width"),
    (dict(size=(1, 1)), "fewer than 2 points"),
    (dict(size=(0, 10)), "fewer than 2 points"),
    (dict(size=(5, 0)), "fewer than 2 points"),
    (dict(unit="furlong"), "km, nm, mi"),
    (dict(strategy="teleport"), "host-mesh, broadcast, device-mesh"),
    (dict(palette="no-such-map"), "unknown palette"),
]


@pytest.mark.parametrize("kwargs,message", BAD)
def test_bad_requests_are_rejected_in_plain_words(kwargs, message):
    with pytest.raises(ValueError, match=message):
        D.DistanceRequest(**kwargs).validate()


def test_the_request_is_frozen():
    req = D.DistanceRequest()
    with pytest.raises(Exception):
        req.unit = "nm"


def test_cli_defaults():
    req = cli_requests.distance_request({k: None for k in cli_requests.DISTANCE_OPTIONS}, 64, 32, False)
    assert req.bounds == (-90.0, 90.0, -180.0, 180.0) and req.ref == (51.5074, -0.1278)
    assert (req.unit, req.strategy, req.size, req.want_values) == ("km", "device-mesh", (64, 32), False)
    assert set(cli_requests.DISTANCE_OPTIONS) == {"bounds", "ref", "unit", "strategy", "palette"}


def test_cli_parses_options():
    req = cli_requests.distance_request({"bounds": "29,31,99,101", "ref": " 30, 101", "unit": "nm",
                              "strategy": "host-mesh", "palette": "magma"}, 10, 10, True)
    assert req.bounds == (29.0, 31.0, 99.0, 101.0) and req.ref == (30.0, 101.0)
    assert (req.unit, req.strategy, req.palette, req.want_values) == ("nm", "host-mesh", "magma", True)


@pytest.mark.parametrize("opts,message", [
    ({"bounds": "1,2,3"}, "LAT0,LAT1,LON0,LON1"),
    ({"bounds": "a,b,c,d"}, "LAT0,LAT1,LON0,LON1"),
    ({"ref": "100,0"}, "outside the valid latitudes"),
    ({"ref": "nan,0"}, "finite"),
    ({"ref": "51.5"}, "LAT,LON"),
    ({"unit": "parsec"}, "km, nm, mi"),
    ({"strategy": "x"}, "device-mesh"),
])
def test_cli_rejects_bad_input_with_one_line(opts, message):
    with pytest.raises(ValueError, match=message) as info:
        cli_requests.distance_request(opts, 10, 10, False)
    assert "\n" not in str(info.value)


def test_cli_rejects_a_single_pixel():
    with pytest.raises(ValueError, match="fewer than 2 points"):
        cli_requests.distance_request({}, 1, 1, False)


def test_workloads_are_registered():
    names = [w.name for w in dbench.workloads()]
    assert names == ["distance-seed", "distance-world"]


def test_kernels_import_no_qt():
    code = ("import sys, kernels.distance.renderer, kernels.distance.haversine; "
            "bad = [m for m in sys.modules if m.startswith(('PyQt6', 'pyqtgraph'))]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
