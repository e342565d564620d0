"""--number-type through main: --render writes the chosen type's picture and says which type and
why; a bad value and a mode that takes no number type are one-line usage errors; --bench runs the
frame workloads in the type asked for."""
import json

import numpy as np
import pytest

import main
from kernels.backend import Backend
from kernels.mandelbrot.requests import number_type as nt
from kernels.mandelbrot import renderer as m

BASE = ["--render", "mandelbrot", "--backend", "cpu", "--size", "40x30", "--center", "-0.1,0.9",
        "--width", "0.05", "--iters", "200"]


def _values(number_type):
    req = m.MandelbrotRequest(-0.1, 0.9, 0.05, (40, 30), 200, want_values=True,
                              number_type=number_type)
    return m.Renderer(Backend("cpu"), number_type=number_type).render(req).values


def test_render_float32_writes_the_float32_picture(tmp_path, capsys):
    out = tmp_path / "f32.npy"
    assert main.main(BASE + ["--number-type", "float32", "--out", str(out)]) == 0
    assert "number type float32, as asked" in capsys.readouterr().err
    np.testing.assert_array_equal(np.load(out), _values("float32"))
    assert not np.array_equal(_values("float32"), _values("float64"))   # the types differ


def test_render_auto_follows_the_device(tmp_path, capsys, monkeypatch):
    out = tmp_path / "auto.npy"
    assert main.main(BASE + ["--out", str(out)]) == 0          # the CPU: float64, unsaid
    assert "number type" not in capsys.readouterr().err
    np.testing.assert_array_equal(np.load(out), _values("float64"))
    monkeypatch.setattr(nt, "RATES_SOURCE", lambda backend: (64.0, 1.0))   # a GeForce's ratio
    assert main.main(BASE + ["--number-type", "auto", "--out", str(out)]) == 0
    assert "number type float32: exact enough" in capsys.readouterr().err
    np.testing.assert_array_equal(np.load(out), _values("float32"))


def test_bad_number_type_and_wrong_mode_are_usage_errors(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main.main(BASE + ["--number-type", "half", "--out", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "auto, float32, float64" in err
    assert main.main(["--number-type", "float32"]) == 2
    assert "--number-type does not apply when opening the window" in capsys.readouterr().err


def test_bench_runs_frame_workloads_in_the_type_asked(tmp_path, monkeypatch, capsys):
    from kernels.mandelbrot import bench as mb
    monkeypatch.setattr(mb, "FULL_HD", (32, 18))
    monkeypatch.setattr(mb, "NUMBER_TYPE", "float64")      # restored after the test
    out = tmp_path / "b.json"
    assert main.main(["--bench", "--backend", "cpu", "--only", "mandelbrot-full",
                      "--number-type", "float32", "--repeats", "2", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["results"]
    assert [r["variant"] for r in rows] == ["256 iterations, float32"]
