import pytest

import main
from kernels import backend


def run(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main.main(list(argv))
    return exc.value.code, capsys.readouterr().err


def test_unknown_backend_one_line_with_choices(capsys):
    code, err = run(capsys, "--backend", "tpu")
    assert code == 2 and err.count("\n") == 1 and "'auto', 'cpu', 'cuda'" in err


def test_unknown_view(capsys):
    code, err = run(capsys, "--view", "fractal")
    assert code == 2 and "mandelbrot" in err and "throughput" in err


def test_unknown_option(capsys):
    code, err = run(capsys, "--colour", "red")
    assert code == 2 and err.count("\n") == 1


def test_options_need_a_headless_mode(capsys):
    assert main.main(["--center", "0,0"]) == 2
    assert "only with --render" in capsys.readouterr().err


def test_cuda_without_gpu_exits_1_with_reason(capsys, monkeypatch):
    monkeypatch.setattr(backend, "cuda_status", lambda: backend.CudaStatus(False, "no CUDA-capable GPU was found"))
    assert main.main(["--bench", "--backend", "cuda"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no CUDA-capable GPU was found" in err


def test_parse_size():
    assert main.parse_size("640x480") == (640, 480)
    for bad in ("640", "0x10", "axb", "-3x4"):
        with pytest.raises(ValueError):
            main.parse_size(bad)
