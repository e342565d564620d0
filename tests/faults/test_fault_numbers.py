"""Absurd numbers in a place (pasted, in a .kfr, on the command line) are refused at once with one
message naming the limit: no decimal.Overflow, no minutes spent turning 1e999999999 into an int,
no Python "Exceeds the limit (4300 digits)"; and a saved .kfr's Zoom has the digits its width has."""
import time
from decimal import Decimal

import pytest
from faultkit import run_python

import main
from explorer.models.location import parse_location
from services import kfr

MANY = "9" * 5000


@pytest.mark.parametrize("args, words", [
    (["--center", "1e999999999"], "--center must be two numbers"),
    (["--center", "1e1000000,0"], "far out of range: a centre lies within ±1e+06"),
    (["--center", "0,-1e1000000"], "far out of range: a centre lies within ±1e+06"),
    (["--center", "1e-99999999999,0"], "far out of range"),
    (["--width", "1e999999"], "far out of range"),
    (["--width", "1e-99999999999"], "far out of range: the deepest width supported is 1e-10000"),
    (["--width", "1e-999999"], "the deepest width supported is 1e-10000"),
    (["--width", "1e-30000"], "deeper than the deepest supported, 1e-10000"),
    (["--width", "5e3"], "the width 5000 is too large (at most 1000)"),
    (["--iters", "1e999999999"], "--iters must be from 1 to 10,000,000"),
    (["--iters", MANY], "got a number of 5,000 characters"),
])
def test_absurd_numbers_on_the_command_line_are_one_line(capsys, tmp_path, args, words):
    t0 = time.perf_counter()
    code = main.main(["--render", "mandelbrot", "--size", "8x8", "--out",
                      str(tmp_path / "x.png"), *args])
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert "Exceeds the limit" not in err and time.perf_counter() - t0 < 5
    assert not (tmp_path / "x.png").exists()


def test_an_overflowing_centre_is_no_traceback_in_a_real_process(tmp_path):
    r = run_python("import main, sys; sys.exit(main.main(sys.argv[1:]))",
                   args=["--render", "mandelbrot", "--out", str(tmp_path / "x.png"),
                         "--center", "1e999999999,0"])
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and "far out of range" in r.stderr


@pytest.mark.parametrize("line, words", [
    ("Zoom: 1E-1000001", "Zoom 1E-1000001 is out of range: from 1e-5"),
    ("Zoom: 1e-999999", "out of range"),
    ("Zoom: 1E-999999", "out of range"),
    ("Zoom: 1e999999999", "out of range"),
    ("Zoom: 1\nIterations: 1e999999999", "Iterations must be from 1 to 10,000,000"),
    ("Zoom: 1\nIterations: 1e1000000", "Iterations must be from 1 to 10,000,000"),
    ("Zoom: 1\nIterations: " + MANY, "a number of 5,000 characters"),
])
def test_absurd_kfr_numbers_are_refused_at_once(line, words):
    text = f"Re: -0.75\nIm: 0\n{line}\n"
    for read in (kfr.parse_kfr, parse_location):
        t0 = time.perf_counter()
        with pytest.raises(ValueError, match=words):
            read(text)
        assert time.perf_counter() - t0 < 1


@pytest.mark.parametrize("text", ["center=1e1000000,0 width=1", "center=0,0 width=1e999999",
                                  "center=0,0 width=1 iters=1e999999999",
                                  "center=0,0 width=1 iters=" + MANY])
def test_absurd_pasted_text_is_refused_at_once(text):
    with pytest.raises(ValueError, match="out of range|from 1 to|characters"):
        parse_location(text)


def test_a_saved_zoom_has_the_digits_of_its_width():
    k = kfr.parse_kfr("Re: -0.75\r\nIm: 0\r\nZoom: 1000\r\n")
    text = kfr.format_kfr("-0.75", "0", k.width(1920, 1080), (1920, 1080), 100)
    assert "\r\nZoom: 1E+3\r\n" in text
    # pasted as the window does (the aspect as a float) and saved again at that size
    loc = parse_location("Re: -0.75\nIm: 0\nZoom: 1000", aspect=800 / 450)
    assert "\r\nZoom: 1E+3\r\n" in kfr.format_kfr(loc.center_re, loc.center_im, loc.width,
                                                  (800, 450), 100)
    # a width of a few digits keeps its zoom exact to 38 digits
    zoom = Decimal(kfr.format_kfr("0", "0", "0.01", (1920, 1080), 100).split("Zoom: ")[1]
                   .split("\r")[0])
    assert abs(zoom / (Decimal(4 * 1920) / Decimal("10.8")) - 1) < Decimal("1e-36")


@pytest.fixture
def view(small_mandelbrot_view):
    return small_mandelbrot_view(80, 45)


@pytest.mark.parametrize("body", ["Zoom: 1E-1000001", "Zoom: 1e-999999",
                                  "Zoom: 1\nIterations: 1e999999999",
                                  "Zoom: 1\nIterations: " + MANY])
def test_the_window_refuses_absurd_kfr_at_once(qtbot, view, tmp_path, body):
    text = f"Re: -0.75\r\nIm: 0\r\n{body}\r\n"
    before = view.camera.state
    (tmp_path / "bad.kfr").write_text(text)
    for act in (lambda: view.places.paste(text),
                lambda: view.places.open_kfr(str(tmp_path / "bad.kfr"))):
        t0 = time.perf_counter()
        with qtbot.waitSignal(view.status_message) as sig:
            assert not act()
        assert time.perf_counter() - t0 < 1
        assert "out of range" in sig.args[0] or "from 1 to 10,000,000" in sig.args[0] \
            or "5,000 characters" in sig.args[0], sig.args[0]
        assert view.camera.state == before
