"""The zoom movie's course (kernels.mandelbrot.keyframes.zoom_path): exponential widths, a zoom about one
fixed point, keyframes exactly as given, enough digits at any depth, iterations that follow the
depth without jumps."""
from __future__ import annotations

import math
from decimal import Decimal, localcontext

import pytest

from kernels.mandelbrot.requests.request import auto_iterations
from kernels.mandelbrot.keyframes.zoom_path import (
    CENTRE_DIGITS_BELOW_WIDTH,
    WHOLE_SET,
    Keyframe,
    ZoomPath,
    zoom_in,
    zoom_out,
)

SEAHORSE = ("-0.743643887037158704752191506114774", "0.131825904205311970493132056385139")


def widths(path):
    return [Decimal(f.width) for f in path]


def test_first_and_last_frames_are_the_keyframes_verbatim():
    path = zoom_in(*SEAHORSE, "1e-12", None, 30)
    first, last = path.frame(0), path.frame(29)
    assert (first.center_re, first.center_im, first.width) == ("-0.5", "0", "3")
    assert (last.center_re, last.center_im, last.width) == (*SEAHORSE, "1e-12")
    assert first.iters == auto_iterations("3") and last.iters == auto_iterations("1e-12")


def test_width_shrinks_by_one_factor_per_frame():
    path = zoom_in(*SEAHORSE, "1e-12", None, 50)
    ws = widths(path)
    ratios = [float(b / a) for a, b in zip(ws, ws[1:])]
    expected = (1e-12 / 3) ** (1 / 49)
    assert all(r == pytest.approx(expected, rel=1e-12) for r in ratios)


def test_the_zoom_is_about_one_fixed_point():
    # c(t) = p + (c0 - p) w(t)/w0: (p - c)/w is the same for every frame, p the fixed point
    path = zoom_in(*SEAHORSE, "1e-9", None, 40)
    c0 = Decimal("-0.5"), Decimal(0)
    c1 = Decimal(SEAHORSE[0]), Decimal(SEAHORSE[1])
    w0, w1 = Decimal(3), Decimal("1e-9")
    with localcontext() as ctx:
        ctx.prec = 60
        r = w1 / w0
        p = [(c1[i] - c0[i] * r) / (1 - r) for i in range(2)]
        screen = [[(p[i] - Decimal(v)) / Decimal(f.width) for i, v in
                   enumerate((f.center_re, f.center_im))] for f in path]
    for pos in screen:
        for i in range(2):
            assert float(pos[i]) == pytest.approx(float(screen[0][i]), abs=1e-9)


def test_deep_frames_keep_digits_below_their_width():
    centre = ("-1.74995768370609350360221450607069970727110579726252077930242837820286008082972804887218672784431700831100544507655659531379747541999999995",
              "0.00000000000000000278793706563379402178294753790944364927085054500163081379043930650189386849765202169477470552201325772332454726999999995")
    path = zoom_in(*centre, "1e-120", None, 200)
    c0 = Decimal("-0.5"), Decimal(0)
    c1 = Decimal(centre[0]), Decimal(centre[1])
    with localcontext() as ctx:
        ctx.prec = 400
        r = Decimal("1e-120") / 3
        for f in list(path)[1:-1]:
            w = Decimal(f.width)
            s = w / 3
            exact = [c0[i] + (c1[i] - c0[i]) * (1 - s) / (1 - r) for i in range(2)]
            got = Decimal(f.center_re), Decimal(f.center_im)
            # right to 1e-12 of the frame's own width (the width has 20 digits: its rounding
            # moves the exact centre by ~1e-20 of the width)
            for i in range(2):
                assert abs(got[i] - exact[i]) <= w.scaleb(-CENTRE_DIGITS_BELOW_WIDTH)


def test_centres_keep_every_digit_a_frame_needs_at_great_depth():
    # a 1e-1000 zoom: the frame before the last needs ~1010 digits after the point
    re_ = "0." + "3602404434376143632361252444495453084826078079585857504883758147" * 20
    path = zoom_in(re_[:1100], "-0.64", "1e-1000", None, 300)
    f = path.frame(298)
    digits = len(f.center_re.split(".")[1])
    assert Decimal(f.width).adjusted() - CENTRE_DIGITS_BELOW_WIDTH <= -digits + 2
    assert digits > 990
    assert abs(Decimal(f.center_re) - Decimal(re_[:1100])) < 2 * Decimal(f.width)


def test_zoom_out_is_zoom_in_backwards():
    n = 25
    a = zoom_in(*SEAHORSE, "1e-10", None, n)
    b = zoom_out(*SEAHORSE, "1e-10", None, n)
    for k in range(n):
        fa, fb = a.frame(k), b.frame(n - 1 - k)
        assert float(Decimal(fa.width)) == pytest.approx(float(Decimal(fb.width)), rel=1e-15)
        for x, y in ((fa.center_re, fb.center_re), (fa.center_im, fb.center_im)):
            assert abs(Decimal(x) - Decimal(y)) <= Decimal(fa.width) * Decimal("1e-11")


def test_iterations_follow_the_depth_and_only_grow_on_the_way_in():
    path = zoom_in(*SEAHORSE, "1e-12", None, 60)
    its = [f.iters for f in path]
    assert its == sorted(its)
    assert [auto_iterations(f.width) for f in path] == its


def test_a_given_count_scales_the_automatic_curve_steadily():
    path = zoom_in(*SEAHORSE, "1e-12", 100_000, 60)
    frames = list(path)
    assert frames[-1].iters == 100_000 and frames[0].iters == auto_iterations("3")
    ratios = [f.iters / auto_iterations(f.width) for f in frames]
    # the ratio to the automatic limit moves log-linearly from 1 to 100000/auto(1e-12)
    steps = [math.log(b) - math.log(a) for a, b in zip(ratios, ratios[1:])]
    assert max(steps) - min(steps) < 1e-2
    assert all(b >= a for a, b in zip(ratios, ratios[1:]))


def test_frames_spread_by_distance_over_several_keyframes():
    keys = [WHOLE_SET, Keyframe("-0.75", "0.1", "0.03"), Keyframe("-0.75", "0.1", "0.0003")]
    path = ZoomPath(keys, 21)
    ws = widths(path)
    ratios = [float(b / a) for a, b in zip(ws, ws[1:])]
    # both pairs zoom at about the same speed (the pan of the first pair adds a little time)
    assert max(ratios) / min(ratios) < 1.2


def test_a_pan_at_one_width_moves_in_a_straight_line():
    path = ZoomPath([Keyframe("0", "0", "1"), Keyframe("1", "0", "1")], 5)
    assert [f.center_re for f in path] == ["0", "0.25", "0.5", "0.75", "1"]
    assert {f.width for f in path} == {"1"}


@pytest.mark.parametrize("bad", [0, -3, 1.5, True])
def test_frame_counts_are_checked(bad):
    with pytest.raises(ValueError):
        zoom_in(*SEAHORSE, "1e-3", None, bad)


def test_bad_keyframes_are_refused_in_words():
    with pytest.raises(ValueError, match="width"):
        Keyframe("0", "0", "-1")
    with pytest.raises(ValueError, match="iteration"):
        Keyframe("0", "0", "1", iters=0)
    with pytest.raises(ValueError, match="two keyframes"):
        ZoomPath([WHOLE_SET], 10)
