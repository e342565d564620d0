"""The Mandelbrot camera and location text: pure arithmetic, no Qt, no rendering."""
from decimal import Decimal

import pytest

from explorer.models.camera import Camera, CameraState
from explorer.models.location import format_location, parse_location
from kernels.mandelbrot.requests import request as km

W, H = 160, 120


def close(a, b, tol):
    return abs(float(Decimal(a) - Decimal(b))) <= tol


@pytest.fixture
def cam():
    return Camera(CameraState.of("-0.75", "0", 3.5), precision=km.precision_state)


def test_pixel_mapping_matches_the_kernels_grid(cam):
    req = km.MandelbrotRequest(-0.75, 0.0, 3.5, (W, H), 50)
    for row, col in ((0, 0), (119, 159), (37, 81)):
        re, im = cam.state.to_complex(col + 0.5, row + 0.5, W, H)
        want = req.pixel_to_complex(row, col)
        assert close(re, want[0], 1e-15) and close(im, want[1], 1e-15)
    # row 0 is the top: larger imaginary part than the bottom row
    assert cam.state.to_complex(0, 0, W, H)[1] > cam.state.to_complex(0, H, W, H)[1]
    x, y = cam.state.to_pixel(*cam.state.to_complex(12.25, 99.5, W, H), W, H)
    assert x == pytest.approx(12.25) and y == pytest.approx(99.5)


@pytest.mark.parametrize("factor", [1.25, 0.8, 7.0])
def test_wheel_zoom_keeps_the_point_under_the_cursor(cam, factor):
    px, py = 23.0, 101.0
    before = cam.state.to_complex(px, py, W, H)
    assert cam.zoom_about(factor, px, py, W, H)
    after = cam.state.to_complex(px, py, W, H)
    assert float(cam.width) == pytest.approx(3.5 / factor)
    assert close(before[0], after[0], 1e-14) and close(before[1], after[1], 1e-14)


def test_drag_pans_by_the_dragged_pixels(cam):
    p = cam.state.to_complex(50, 40, W, H)
    assert cam.pan_pixels(17, -9, W)
    x, y = cam.state.to_pixel(*p, W, H)
    assert x == pytest.approx(67) and y == pytest.approx(31)
    assert cam.width == Decimal("3.5")


def test_zoom_box_fits_the_box_and_centres_it(cam):
    x0, y0, x1, y1 = 100, 20, 40, 50        # any corner order
    mid = cam.state.to_complex(70, 35, W, H)
    corners = [cam.state.to_complex(x, y, W, H) for x, y in ((x0, y0), (x1, y1))]
    assert cam.zoom_to_box(x0, y0, x1, y1, W, H)
    assert close(cam.center[0], mid[0], 1e-14) and close(cam.center[1], mid[1], 1e-14)
    assert float(cam.width) == pytest.approx(3.5 * max(60 / W, 30 / H))
    for c in corners:   # the whole box is still in view
        x, y = cam.state.to_pixel(*c, W, H)
        assert -1e-9 <= x <= W + 1e-9 and -1e-9 <= y <= H + 1e-9
    assert not cam.zoom_to_box(10, 10, 10.5, 10.2, W, H)   # a click is not a box


def test_history_has_one_entry_per_gesture(cam):
    home = cam.state
    cam.begin_gesture()
    for _ in range(25):          # one drag made of many mouse moves
        cam.pan_pixels(2, 1, W)
    cam.end_gesture()
    dragged = cam.state
    assert cam.history_depth == 1
    cam.zoom_centre(2.0, W, H)   # a one-shot move outside a gesture is its own entry
    cam.centre_on(10, 10, W, H)
    assert cam.history_depth == 3
    assert cam.back() and cam.back()
    assert cam.state == dragged
    assert cam.back() and cam.state == home
    assert not cam.back()


def test_keys_steps_and_reset(cam):
    cam.pan_fraction(0.10, 0, W, H)      # right arrow: look right by 10% of the width
    assert close(cam.center[0], Decimal("-0.75") + Decimal("0.35"), 1e-15)
    cam.pan_fraction(0, 0.10, W, H)      # up arrow: look up by 10% of the height
    assert close(cam.center[1], Decimal(3.5 * H / W * 0.1), 1e-15)
    cam.zoom_centre(2.0, W, H)
    assert float(cam.width) == pytest.approx(1.75)
    cam.reset()
    assert cam.state == cam.home
    assert cam.back() and float(cam.width) == pytest.approx(1.75)


def test_precision_limit_refuses_zoom_in_but_not_out(cam):
    cam.go_to(CameraState.of("-0.743643887037151", "0.131825904205330", 1e-9), W)
    refused = False
    for _ in range(200):
        if not cam.zoom_centre(2.0, W, H):
            refused = True
            break
    assert refused
    assert "limit" in cam.refusal or "precision" in cam.refusal
    stuck = cam.state
    assert not cam.zoom_about(1.5, 3, 3, W, H) and cam.state == stuck
    assert km.precision_state(float(stuck.center_re), float(stuck.center_im), float(stuck.width), W)[0] != "limit"
    assert cam.zoom_centre(0.5, W, H) and float(cam.width) == pytest.approx(float(stuck.width) * 2)
    assert cam.pan_pixels(5, 5, W)


def test_centre_keeps_more_digits_than_float64():
    cam = Camera(CameraState.of("0.3", "0", 1e-25))      # no precision check: the camera alone
    for _ in range(10):
        cam.pan_pixels(-1, 0, W)
    moved = cam.center[0] - Decimal("0.3")
    assert moved > 0 and float(cam.center[0]) == 0.3      # invisible in float64, kept in Decimal
    assert abs(float(moved) - 10 * 1e-25 / W) < 1e-40


def test_location_text_round_trip():
    text = format_location(Decimal("-0.7436438870371"), Decimal("0.1318259043"), 0.01, 2000)
    loc = parse_location(text)
    assert loc.width == Decimal("0.01") and loc.iterations == 2000
    assert close(loc.center_re, "-0.7436438870371", 1e-9)
    loc = parse_location("center=-0.7436438870371,0.1318259043 width=0.01 iters=2000")
    assert loc.center_re == Decimal("-0.7436438870371") and loc.center_im == Decimal("0.1318259043")
    assert parse_location("  centre = (0.25, -0.5)  width: 1e-3  iters=auto").iterations is None


@pytest.mark.parametrize("text, words", [
    ("", "nothing to paste"),
    ("garbage", "no centre"),
    ("center=nan,0 width=1", "finite"),
    ("center=0,inf width=1", "finite"),
    ("center=0,0 width=-2", "positive"),
    ("center=0,0 width=0", "positive"),
    ("center=0,0 width=nan", "finite"),
    ("center=0,0", "no width"),
    ("center=1,2,3 width=1", "two numbers"),
    ("center=0,0 width=1 iters=0", "iters"),
    ("center=0,0 width=1 iters=2.5", "iters"),
    ("center=0,0 width=1 iters=99999999", "iters"),
])
def test_bad_location_text_is_refused_in_plain_words(text, words):
    with pytest.raises(ValueError, match=words):
        parse_location(text)


def test_deep_zoom_keeps_the_digits_the_depth_needs():
    """Zooming to 1e-1000 at the wheel: the width is a Decimal far below float64's range and the
    centre carries the digits that keep the point under the cursor fixed."""
    cam = Camera(CameraState.of("0", "1", "1e-990"))
    under = cam.state.to_complex(10, 20, W, H)
    for _ in range(10):
        assert cam.zoom_about(10.0, 10, 20, W, H)
    assert cam.width == Decimal("1e-1000")
    after = cam.state.to_complex(10, 20, W, H)
    assert abs(after[0] - under[0]) < Decimal("1e-1030") and abs(after[1] - under[1]) < Decimal("1e-1030")
    x, y = cam.state.to_pixel(*under, W, H)
    assert x == pytest.approx(10) and y == pytest.approx(20)
    assert cam.pan_pixels(3, -2, W) and cam.center[0] != under[0]


def test_zooming_stops_at_the_deepest_width():
    cam = Camera(CameraState.of("0", "1", "2e-10000"))
    assert not cam.zoom_centre(10.0, W, H)
    assert "1e-10000" in cam.refusal and cam.width == Decimal("2e-10000")
    assert not cam.go_to(CameraState.of("0", "1", "1e-10001"), W) and "deepest" in cam.refusal
    assert cam.zoom_centre(0.5, W, H)
