"""A deep frame's pixels that float64 deltas cannot place (issue 34): a render iterates them in
double-double by default (--proved-pixels), then in MPFR where that cannot prove them with
--exact-pixels; --marked-pixels keeps the loop's value and marks them (counted in a note). The
choice travels with the picture, so a poster's bands make the same one."""
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


def test_marked_when_asked_and_exact_when_asked(tmp_path, capsys):
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    plain, err = _render(tmp_path, capsys, "--marked-pixels")
    assert "cannot place: kept at the loop's value and marked" in err
    assert "without --marked-pixels they are iterated in double-double" in err
    exact, err = _render(tmp_path, capsys, "--exact-pixels")
    assert "cannot place: 5 proved in double-double" in err
    assert int((np.abs(np.floor(exact).astype(np.int64) - truth) > 1).sum()) == 0
    assert int((np.abs(np.floor(plain).astype(np.int64) - truth) > 1).sum()) > 0


@pytest.mark.parametrize("extra", [(), ("--proved-pixels",)])
def test_proved_by_default_the_double_double_pass_alone(tmp_path, capsys, extra):
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    proved, err = _render(tmp_path, capsys, *extra)
    assert "cannot place: 5 proved in double-double" in err and "MPFR" not in err
    assert int((np.abs(np.floor(proved).astype(np.int64) - truth) > 1).sum()) == 0


def test_the_three_choices_are_alternatives(tmp_path, capsys):
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "16x16",
                      "--location", KF_5E227, "--out", str(tmp_path / "x.npy"),
                      "--marked-pixels", "--exact-pixels"])
    assert code == 2
    assert "alternatives" in capsys.readouterr().err
    assert not (tmp_path / "x.npy").exists()


def test_a_poster_proves_the_same_pixels_as_the_picture_whole(tmp_path, capsys):
    """The bands of a poster carry the picture's choice: the default render in bands on a local
    Dask cluster equals the one piece, both within ±1 of MPFR at every pixel (with the loop's
    values kept, 5 pixels would be off by up to 903)."""
    pytest.importorskip("distributed", reason="the cluster extra (Dask) is not installed")
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    whole, _ = _render(tmp_path, capsys)
    out = tmp_path / "bands.npy"
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "16x16",
                      "--location", KF_5E227, "--out", str(out), "--scheduler", "local"])
    err = capsys.readouterr()
    assert code == 0, err.err
    assert "bands on a local Dask cluster" in err.out
    banded = np.load(out)
    assert np.array_equal(whole, banded)
    assert int((np.abs(np.floor(banded).astype(np.int64) - truth) > 1).sum()) == 0


def test_proved_pixels_only_with_render(capsys):
    assert main.main(["--proved-pixels"]) == 2
    assert "--proved-pixels" in capsys.readouterr().err
