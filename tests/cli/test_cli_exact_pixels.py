"""--exact-pixels: a deep frame's pixels that float64 deltas cannot place are iterated in
double-double, then MPFR where that cannot prove them, when asked; otherwise kept at the loop's
value, counted in a note and marked (issue 34)."""
import os

import numpy as np
import pytest

import main

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
KF_5E227 = os.path.join(os.path.dirname(__file__), "..", "..", "resources", "kf-5e227.kfr")
TRUTH = os.path.join(os.path.dirname(__file__), "..", "kernels", "data", "kf_5e227_16x16_mpfr.txt")


def _render(tmp_path, capsys, *extra):
    out = tmp_path / "x.npy"
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "16x16",
                      "--location", KF_5E227, "--out", str(out), *extra])
    err = capsys.readouterr().err
    assert code == 0, err
    return np.load(out), err


def test_marked_by_default_and_exact_when_asked(tmp_path, capsys):
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    plain, err = _render(tmp_path, capsys)
    assert "cannot place: kept at the loop's value and marked" in err
    exact, err = _render(tmp_path, capsys, "--exact-pixels")
    assert "cannot place: 5 proved in double-double" in err
    assert int((np.abs(np.floor(exact).astype(np.int64) - truth) > 1).sum()) == 0
    assert int((np.abs(np.floor(plain).astype(np.int64) - truth) > 1).sum()) > 0


def test_proved_pixels_runs_the_double_double_pass_alone(tmp_path, capsys):
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    proved, err = _render(tmp_path, capsys, "--proved-pixels")
    assert "cannot place: 5 proved in double-double" in err and "MPFR" not in err
    assert int((np.abs(np.floor(proved).astype(np.int64) - truth) > 1).sum()) == 0


def test_proved_pixels_only_with_render(capsys):
    assert main.main(["--proved-pixels"]) == 2
    assert "--proved-pixels" in capsys.readouterr().err
