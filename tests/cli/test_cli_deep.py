"""Deep zoom from the command line: `--center` and `--width` as decimal strings of any length,
widths below float64's reach rendered by perturbation (PNG and NPY), bad places refused in one
line with status 2, and Kalles Fraktaler .kfr location files read and written (services/kfr.py)."""
from decimal import Decimal

import numpy as np
import pytest

import main
from services import kfr
from services.requests import check_location, mandelbrot_request
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.requests.request import DeepFrameRequest, MandelbrotRequest

CENTRE_60 = (loc.KORMANYOS_VERY_DEEP.center_re[:62], loc.KORMANYOS_VERY_DEEP.center_im[:62])


def test_a_float64_width_gives_a_float64_request():
    req = mandelbrot_request({"center": "-0.75,0.1", "width": "0.5"}, 64, 48, False)
    assert isinstance(req, MandelbrotRequest) and req.width == 0.5


@pytest.mark.parametrize("width", ["1e-17", "1e-50", "3.25e-400"])
def test_a_deep_width_gives_a_deep_request_keeping_every_digit(width):
    req = mandelbrot_request({"center": ",".join(CENTRE_60), "width": width}, 64, 48, True)
    assert isinstance(req, DeepFrameRequest) and req.want_values
    assert Decimal(req.center_re) == Decimal(CENTRE_60[0])     # all 60 digits
    assert Decimal(req.width) == Decimal(width)
    assert req.max_iter > 28_000                              # automatic, from the depth


def test_render_60_digit_centre_at_1e_50_to_npy_on_the_cpu(tmp_path, capsys):
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    out = tmp_path / "x.npy"
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "48x27",
                      "--center", ",".join(CENTRE_60), "--width", "1e-50", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    values = np.load(out)
    assert values.shape == (27, 48) and values.dtype == np.float64
    # a frame of structure, not one flat count: the deep renderer drew it
    assert values.min() > 1000 and values.max() - values.min() > 10
    png = tmp_path / "x.png"
    assert main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "48x27",
                      "--center", ",".join(CENTRE_60), "--width", "1e-50", "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("center, width, iters, words", [
    ("abc,0", "1e-50", None, "not 'abc'"),
    ("nan,0", "1e-50", None, "finite"),
    ("0," + "1" * 1_000_000, "1e-50", None, "1,000,000 characters"),
    ("0,1", "0", None, "above 0"),
    ("0,1", "-1e-30", None, "above 0"),
    ("0,1", "garbage", None, "--width"),
    ("0,1", "1e-20000", None, "deepest supported, 1e-10000"),
    ("0,1", "1e-30", "20000000", "10,000,000"),
])
def test_bad_places_are_one_line_and_status_2(tmp_path, capsys, center, width, iters, words):
    argv = ["--render", "mandelbrot", "--backend", "cpu", "--size", "16x12", "--center", center,
            "--width", width, "--out", str(tmp_path / "x.png")]
    if iters:
        argv += ["--iters", iters]
    assert main.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1 and len(err) < 400
    assert not list(tmp_path.iterdir())


def test_check_location_takes_decimal_strings_of_any_length():
    check_location(CENTRE_60[0], CENTRE_60[1], "1e-1000", 100)
    check_location(loc.KORMANYOS_VERY_DEEP.center_re, loc.KORMANYOS_VERY_DEEP.center_im, "1e-1091")
    with pytest.raises(ValueError, match="characters"):
        check_location("0." + "1" * 30_000, "0", "1e-10")


# ---------------------------------------------------------------- Kalles Fraktaler locations

KF_TEXT = ("Re: -1.768779934023606700744353014879016\r\nIm: -0.001738827424523438462575757806\r\n"
           "Zoom: 1.2E30\r\nIterations: 12000\r\nIterDiv: 1.000000\r\nColors: 0,0,0,255,255,255,\r\n"
           "Smooth: 1\r\n")


def test_kfr_is_read():
    k = kfr.parse_kfr(KF_TEXT)
    assert k.center_re == "-1.768779934023606700744353014879016"
    assert k.center_im == "-0.001738827424523438462575757806"
    assert k.zoom == Decimal("1.2E30") and k.iterations == 12000
    # KF's Zoom sets the height: 4/Zoom tall; our width is across, by the aspect
    assert abs(k.height() * k.zoom - 4) < Decimal("1e-35")
    assert float(k.width(1600, 900)) == pytest.approx(float(Decimal(4) / Decimal("1.2E30") * 16 / 9), rel=1e-15)
    assert kfr.looks_like_kfr(KF_TEXT) and not kfr.looks_like_kfr("center=0,0 width=1")


def test_kfr_round_trip_keeps_every_digit():
    re_, im_ = loc.KORMANYOS_VERY_DEEP.center_re, loc.KORMANYOS_VERY_DEEP.center_im
    width = Decimal("3.7e-1000")
    text = kfr.format_kfr(re_, im_, width, (1920, 1080), 600_000,
                          colours=np.array([[0, 0, 0, 255], [255, 128, 0, 255], [255, 255, 255, 255]]))
    assert text.endswith("\r\n") and "Colors: " in text and "Iterations: 600000" in text
    back = kfr.parse_kfr(text)
    assert Decimal(back.center_re) == Decimal(re_) and Decimal(back.center_im) == Decimal(im_)
    assert back.iterations == 600_000
    assert abs(back.width(1920, 1080) / width - 1) < Decimal("1e-30")


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("Re: 0\nIm: 0\n", "no Zoom line"),
    ("Re: abc\nIm: 0\nZoom: 1", "Re must be a number"),
    ("Re: 0\nIm: nan\nZoom: 1", "finite"),
    ("Re: 0\nIm: 0\nZoom: 0", "positive magnification"),
    ("Re: 0\nIm: 0\nZoom: 1\nIterations: 2.5", "whole number"),
    ("Re: " + "1" * 30_000 + "\nIm: 0\nZoom: 1", "characters"),
])
def test_bad_kfr_is_refused_in_plain_words(text, words):
    with pytest.raises(ValueError, match=words):
        kfr.parse_kfr(text)
