"""Places keep their formula: a .kfr file written for Burning Ship says FractalType 1 and reads
back as it; our location text says formula=… (and only where it is not the Mandelbrot set's, so
older text and files read as before); bookmarks keep it, entries without one are Mandelbrot
places; a zoom movie of Burning Ship starts from its whole set and every frame draws it."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

from explorer.models.bookmarks import UserBookmarks, bookmark_from_entry, load_bookmarks
from kernels.mandelbrot.requests import formulas
from services import kfr
from services.location_text import format_location, location_from_values, parse_location
from services.movie import MovieError, MovieSpec, formula_field, prepare

SHIP = formulas.BURNING_SHIP


def test_a_kfr_file_says_its_formulas_fractal_type():
    for formula, kf in formulas.KF_TYPES.items():
        text = kfr.format_kfr("-1.7557", "-0.0284", "0.05", (1920, 1080), 500, formula=formula)
        assert f"\r\nFractalType: {kf}\r\nPower: 2\r\n" in text
        assert kfr.parse_kfr(text).formula == formula
        assert parse_location(text, aspect=16 / 9).formula == formula
    assert kfr.parse_kfr("Re: 0\nIm: 0\nZoom: 1\n").formula == formulas.MANDELBROT
    with pytest.raises(ValueError, match="fractal type 9 is not one this app draws"):
        kfr.parse_kfr("Re: 0\nIm: 0\nZoom: 1\nFractalType: 9\n")
    with pytest.raises(ValueError, match="FractalType must be a whole number"):
        kfr.parse_kfr("Re: 0\nIm: 0\nZoom: 1\nFractalType: " + "9" * 5000 + "\n")


def test_location_text_names_a_formula_other_than_mandelbrots():
    plain = format_location("-0.75", "0.1", "0.01", 500)
    assert "formula" not in plain and parse_location(plain).formula == formulas.MANDELBROT
    ship = format_location("-1.7557", "-0.0284", "0.05", None, SHIP)
    assert ship.endswith(" formula=burning-ship")
    loc = parse_location(ship)
    assert loc.formula == SHIP and loc.center_re == Decimal("-1.7557") and loc.iterations is None
    assert parse_location("center=0,0 width=1 Formula: Burning-Ship").formula == SHIP
    with pytest.raises(ValueError, match="unknown formula 'julia'"):
        parse_location("center=0,0 width=1 formula=julia")
    with pytest.raises(ValueError, match="formula"):
        location_from_values(0, 0, 1, None, "julia")


def test_bookmarks_keep_their_formula(tmp_path):
    old = bookmark_from_entry({"name": "old", "center": [-0.75, 0.1], "width": 0.01})
    assert old.formula == formulas.MANDELBROT
    ship = bookmark_from_entry({"name": "ship", "center": [-1.7557, -0.0284], "width": 0.05,
                                "formula": SHIP})
    assert ship.formula == SHIP
    path = tmp_path / "bookmarks.json"
    store = UserBookmarks(str(path))
    store.add("mine", "-0.75", "0.1", "0.01", None)
    store.add("the ship", "-1.7557", "-0.0284", "0.05", 800, formula=SHIP)
    entries = json.loads(path.read_text())["bookmarks"]
    assert "formula" not in entries[0] and entries[1]["formula"] == SHIP
    found, problems = load_bookmarks(str(path))
    assert [b.formula for b in found] == [formulas.MANDELBROT, SHIP] and not problems
    assert store.rename(found[1], "renamed") == 1          # found again by what it holds
    entries.append({"name": "odd", "center": [0, 0], "width": 1, "formula": "julia"})
    path.write_text(json.dumps({"bookmarks": entries}))
    found, problems = load_bookmarks(str(path))
    assert len(found) == 2 and "'odd' skipped" in problems[0] and "julia" in problems[0]


def test_a_ship_movie_zooms_from_its_whole_set(tmp_path):
    assert formula_field(formulas.MANDELBROT) == formula_field(None) == ()
    spec = MovieSpec(out=str(tmp_path / "f%03d.png"), size=(32, 18), fps=2, seconds=2,
                     center="-1.7557,-0.0284", width="0.05",
                     colouring=(("mapping", "sqrt"),) + formula_field(SHIP))
    movie = prepare(spec, open_encoder=False)
    start = movie.path.keyframes[0]
    assert (start.center_re, start.center_im, start.width) == formulas.WHOLE_SETS[SHIP]
    assert {movie.request(k).formula for k in range(movie.frames)} == {SHIP}
    assert movie.plan()["colouring"]["formula"] == SHIP       # another movie than Mandelbrot's
    with pytest.raises(MovieError, match="--keyframes draws the Mandelbrot set only"):
        prepare(MovieSpec(**{**spec.__dict__, "keyframes": True}), open_encoder=False)
