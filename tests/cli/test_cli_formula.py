"""`--formula` with `--render mandelbrot` (CPU): Burning Ship renders as the renderer draws it, a
.kfr file's FractalType picks the formula (1: Burning Ship; another is refused naming the file),
--formula overrides a file's, and what only the Mandelbrot set has (overlays, --newton, float32
kernels) is refused or said in one line."""
from __future__ import annotations

import numpy as np
import pytest

import main
from kernels.backend import resolve
from kernels.mandelbrot.renderer import Renderer
from kernels.mandelbrot.requests.request import MandelbrotRequest

SHIP = "burning-ship"
PLACE = ("--center=-1.7557,-0.0284", "--width", "0.128", "--iters", "300")
KFR = "Re: -1.7557\r\nIm: -0.0284\r\nZoom: 50\r\nIterations: 300\r\nFractalType: {}\r\n"


def render(out, *extra, size="16x10"):
    return main.main(["--render", "mandelbrot", "--backend", "cpu", "--no-server", "--size", size,
                      "--out", str(out), *extra])


def test_formula_burning_ship_renders_the_ship(tmp_path, capsys):
    assert render(tmp_path / "ship.npy", *PLACE, "--formula", SHIP) == 0, capsys.readouterr().err
    assert "(16x10, burning-ship, CPU)" in capsys.readouterr().out     # the formula it drew, named
    got = np.load(tmp_path / "ship.npy")
    req = MandelbrotRequest(-1.7557, -0.0284, 0.128, (16, 10), 300, want_values=True,
                            formula=SHIP)
    np.testing.assert_array_equal(got, Renderer(resolve("cpu")).render(req).values)
    assert render(tmp_path / "m.npy", *PLACE, "--formula", "mandelbrot") == 0
    assert render(tmp_path / "default.npy", *PLACE) == 0
    mandelbrot = np.load(tmp_path / "m.npy")
    assert np.array_equal(mandelbrot, np.load(tmp_path / "default.npy"))
    assert not np.array_equal(mandelbrot, got)


def test_an_unknown_formula_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:        # argparse's refusal
        render(tmp_path / "x.png", "--formula", "julia")
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "--formula 'julia' is unknown; choose one of: mandelbrot, burning-ship" in err
    assert len(err.splitlines()) == 1
    assert main.main(["--render", "distance", "--formula", SHIP, "--out",
                      str(tmp_path / "d.png")]) == 2
    assert "--formula does not apply to --render distance" in capsys.readouterr().err


def test_a_kfr_file_of_fractal_type_1_renders_as_burning_ship(tmp_path, capsys):
    kfr = tmp_path / "ship.kfr"
    kfr.write_text(KFR.format(1), newline="")
    assert render(tmp_path / "kfr.npy", "--location", str(kfr)) == 0, capsys.readouterr().err
    assert render(tmp_path / "opt.npy", *PLACE, "--formula", SHIP) == 0
    assert np.array_equal(np.load(tmp_path / "kfr.npy"), np.load(tmp_path / "opt.npy"))
    # --formula overrides the file's, as --iters does
    assert render(tmp_path / "over.npy", "--location", str(kfr), "--formula", "mandelbrot") == 0
    assert render(tmp_path / "m.npy", *PLACE) == 0
    assert np.array_equal(np.load(tmp_path / "over.npy"), np.load(tmp_path / "m.npy"))
    plain = tmp_path / "plain.kfr"           # no FractalType: KF's 0, the Mandelbrot set
    plain.write_text(KFR.format(0).replace("FractalType: 0\r\n", ""), newline="")
    assert render(tmp_path / "plain.npy", "--location", str(plain)) == 0
    assert np.array_equal(np.load(tmp_path / "plain.npy"), np.load(tmp_path / "m.npy"))


def test_another_fractal_type_is_refused_naming_the_file(tmp_path, capsys):
    kfr = tmp_path / "tricorn.kfr"
    kfr.write_text(KFR.format(2), newline="")
    assert render(tmp_path / "x.png", "--location", str(kfr)) == 2
    err = capsys.readouterr().err
    assert str(kfr) in err and "fractal type 2 is not one this app draws" in err
    assert "0 (Mandelbrot), 1 (Burning Ship)" in err
    assert not (tmp_path / "x.png").exists()
    kfr.write_text(KFR.format("ship"), newline="")
    assert render(tmp_path / "x.png", "--location", str(kfr)) == 2
    assert "FractalType must be a whole number" in capsys.readouterr().err


def test_our_location_text_carries_the_formula(tmp_path, capsys):
    loc = tmp_path / "place.txt"
    loc.write_text("center=-1.7557,-0.0284 width=0.128 iters=300 formula=burning-ship\n")
    assert render(tmp_path / "loc.npy", "--location", str(loc)) == 0, capsys.readouterr().err
    assert render(tmp_path / "opt.npy", *PLACE, "--formula", SHIP) == 0
    assert np.array_equal(np.load(tmp_path / "loc.npy"), np.load(tmp_path / "opt.npy"))


def test_what_only_the_mandelbrot_set_has_is_refused_or_said(tmp_path, capsys):
    assert render(tmp_path / "o.npy", *PLACE, "--formula", SHIP, "--overlay", "iterations") == 2
    assert "overlays are drawn for the Mandelbrot set only" in capsys.readouterr().err
    assert render(tmp_path / "n.png", *PLACE, "--formula", SHIP, "--newton") == 2
    assert "--newton finds the Mandelbrot set's minibrots" in capsys.readouterr().err
    assert render(tmp_path / "f.npy", *PLACE, "--formula", SHIP, "--number-type", "float32") == 0
    err = capsys.readouterr().err
    assert "float32 kernels draw the Mandelbrot set only" in err and "float32 asked" in err
    assert render(tmp_path / "d.npy", *PLACE, "--formula", SHIP) == 0
    assert np.array_equal(np.load(tmp_path / "f.npy"), np.load(tmp_path / "d.npy"))


def test_a_deep_ship_s_marked_pixels_are_said_as_the_ship_s(tmp_path, capsys):
    """A deep Burning Ship render in its chaotic sea (locations.SHIP_SEA): its
    pixels float64 cannot place are marked, and the note offers MPFR, not double-double."""
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    from kernels.mandelbrot.benches.locations import SHIP_SEA as SEA
    assert render(tmp_path / "sea.npy", f"--center={SEA.center_re},{SEA.center_im}", "--width",
                  "1e-100", "--iters", "4000", "--formula", SHIP, size="8x6") == 0
    err = capsys.readouterr().err
    assert "marked; the Burning Ship has no double-double pass; --exact-pixels iterates" in err
    assert "redone overlay" not in err


def test_a_kfr_of_another_power_is_refused_and_a_ship_benches_as_the_ship(tmp_path, capsys):
    cube = tmp_path / "cube.kfr"
    cube.write_text(KFR.format(1) + "Power: 3\r\n")
    assert render(tmp_path / "x.png", "--location", str(cube)) == 2
    assert "Power 3 is not drawn here" in capsys.readouterr().err
    ship = tmp_path / "ship.kfr"
    ship.write_text(KFR.format(1) + "Power: 2\r\n")
    from services.kf_bench import location_workload
    assert "burning-ship" in location_workload(str(ship)).description
