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


def test_a_poster_counts_the_pixels_it_leaves_marked_and_resumes_with_them(tmp_path, capsys,
                                                                        stop_poster):
    """A poster's note sums its bands' counts, as the one piece's note counts its own; the
    counts of bands finished before an interruption come back from the parts folder."""
    pytest.importorskip("distributed", reason="the cluster extra (Dask) is not installed")

    def render(out, *extra):
        code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "16x16",
                          "--location", KF_5E227, "--out", str(out), "--marked-pixels", *extra])
        return code, capsys.readouterr()
    code, one = render(tmp_path / "one.npy")
    assert code == 0 and "5 pixels that float64 deltas cannot place" in one.err
    marked = stop_poster(9)            # as Ctrl+C would land after the ninth band
    out = tmp_path / "poster.npy"
    code, _ = render(out, "--scheduler", "local")
    assert code != 0 and len(marked) == 9
    stop_poster.release()
    code, again = render(out, "--scheduler", "local")
    assert code == 0, again.err
    assert "resuming" in again.err
    assert "5 pixels that float64 deltas cannot place" in again.err
    assert np.array_equal(np.load(out), np.load(tmp_path / "one.npy"))


def test_a_parts_record_whose_counts_do_not_read_says_so(tmp_path):
    """done.json's per-band counts are read only where they are whole numbers of finished bands;
    a picture with a band whose count is missing says it was not counted, never a smaller sum."""
    from services.poster import Parts, _counts_of
    assert _counts_of({"0": {"marked_pixels": 2}, "1": {"marked_pixels": -1}, "x": {},
                       "2": {"marked_pixels": True}, "5": {"marked_pixels": 3}}, {0, 1, 2}) \
        == {0: {"marked_pixels": 2}}
    assert _counts_of(["not", "a", "dict"], {0}) == {}
    parts = Parts(str(tmp_path / "p.npy"), {"version": 1}, (4, 4), np.float64)
    parts.done, parts.counts = {0, 1}, {0: {"marked_pixels": 2, "dd_pixels": 1}}
    assert parts.exact_counts() is None
    parts.counts[1] = {"marked_pixels": 1, "dd_pixels": 0}
    assert parts.exact_counts() == {"marked_pixels": 3, "dd_pixels": 1}
