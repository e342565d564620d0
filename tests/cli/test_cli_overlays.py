"""`--render mandelbrot --overlay NAME[,NAME]` through main: the overlays written as .npy beside
the picture (the picture unchanged), and unknown names or overlays without a meaning for the frame
refused in one line before any work."""
import numpy as np
import pytest

import main
from kernels.mandelbrot.colouring import overlays as ov

BASE = ["--render", "mandelbrot", "--size", "40x30", "--center", "-0.5,0", "--width", "3",
        "--iters", "50"]


def test_iterations_overlay_is_written_beside_the_picture(tmp_path, capsys):
    out = tmp_path / "m.npy"
    assert main.main(BASE + ["--backend", "cpu", "--out", str(out), "--overlay", "iterations"]) == 0
    printed = capsys.readouterr().out
    layer = np.load(tmp_path / "m.iterations.npy")
    values = np.load(out)                       # the picture itself, as without --overlay
    assert layer.shape == values.shape == (30, 40)
    escaped = values < 50
    np.testing.assert_array_equal(layer[escaped], np.floor(values[escaped]) + 1)
    assert set(np.unique(layer[~escaped])) <= {0.0, 50.0} and (layer == 0).any()   # shortcut
    assert "m.iterations.npy" in printed and "per pixel" in printed


def test_unknown_overlay_is_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:          # argparse's own exit, status 2
        main.main(BASE + ["--backend", "cpu", "--out", str(tmp_path / "m.png"),
                          "--overlay", "iterations,sparkle"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown overlay 'sparkle'" in err and "rebases" in err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name,words", [(ov.LANES, "no warps on the CPU"),
                                        (ov.BLA, "only deep frames")])
def test_overlays_without_meaning_are_refused_before_any_work(tmp_path, capsys, name, words):
    assert main.main(BASE + ["--backend", "cpu", "--out", str(tmp_path / "m.png"),
                             "--overlay", name]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and name in err
    assert not list(tmp_path.iterdir())         # nothing rendered, nothing written


def test_overlay_needs_render_and_the_mandelbrot_view(tmp_path, capsys):
    assert main.main(["--overlay", "iterations"]) == 2
    assert "only with --render" in capsys.readouterr().err
    assert main.main(["--render", "distance", "--backend", "cpu", "--out",
                      str(tmp_path / "d.png"), "--overlay", "iterations"]) == 2
    assert "only to --render mandelbrot" in capsys.readouterr().err
    assert main.main(BASE + ["--backend", "cpu", "--out", str(tmp_path / "m.png"), "--gpus",
                             "all", "--overlay", "iterations"]) == 2
    assert "--gpus" in capsys.readouterr().err


def test_deep_overlays_are_written_for_a_deep_frame(tmp_path, capsys):
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    out = tmp_path / "d.png"
    argv = ["--render", "mandelbrot", "--backend", "cpu", "--size", "12x8", "--center",
            "-0.743643887037151,0.131825904205330", "--width", "1e-20", "--iters", "300",
            "--out", str(out), "--overlay", "perturbation-steps,bla-steps,redone"]
    assert main.main(argv) == 0
    steps = np.load(tmp_path / "d.perturbation-steps.npy")
    bla = np.load(tmp_path / "d.bla-steps.npy")
    redone = np.load(tmp_path / "d.redone.npy")
    assert steps.shape == bla.shape == redone.shape == (8, 12)
    assert steps.min() >= 1 and bla.sum() > 0 and set(np.unique(redone)) <= {0.0, 1.0}
    assert "perturbation steps" in capsys.readouterr().out


@pytest.mark.gpu
def test_gpu_writes_lane_efficiency(tmp_path, capsys, gpu_backend, simulated):
    size = "16x8" if simulated else "64x48"
    out = tmp_path / "m.png"
    argv = ["--render", "mandelbrot", "--backend", "cuda", "--size", size, "--center",
            "-0.743643887037151,0.131825904205330", "--width", "0.01", "--iters", "40",
            "--out", str(out), "--overlay", "lane-efficiency,iterations",
            "--number-type", "float64"]       # float32 frames have no overlays
    assert main.main(argv) == 0
    eff = np.load(tmp_path / "m.lane-efficiency.npy")
    it = np.load(tmp_path / "m.iterations.npy")
    assert np.all((eff[it > 0] > 0) & (eff[it > 0] <= 100)) and np.isnan(eff[it == 0]).all()
    assert "lane efficiency" in capsys.readouterr().out


def test_an_overlay_on_a_device_that_prefers_float32_draws_float64(tmp_path, capsys, monkeypatch):
    """The overlays are drawn by the float64 kernels: where Auto would pick float32 (float64 at
    1/64 of float32's rate), asking for an overlay makes the frame float64 instead of refusing."""
    from kernels.mandelbrot.requests import number_type as nt
    monkeypatch.setattr(nt, "RATES_SOURCE", lambda backend: (64.0, 1.0))
    out = tmp_path / "m.png"
    assert main.main(BASE + ["--backend", "cpu", "--out", str(out), "--overlay", "iterations"]) == 0
    assert (tmp_path / "m.iterations.npy").exists()
    assert main.main(BASE + ["--backend", "cpu", "--out", str(tmp_path / "n.png")]) == 0
    assert "number type float32" in capsys.readouterr().err      # without an overlay: float32
