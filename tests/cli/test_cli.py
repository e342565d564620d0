"""The command line: one-line usage errors (exit 2), unusable backends (exit 1), --render end to end,
argument helpers and the bench report layout."""
import pytest

import main
from cli import args as cli_args
from cli import bench as cli_bench
from kernels import backend


def run(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main.main(list(argv))
    return exc.value.code, capsys.readouterr().err


def test_unknown_backend_one_line_with_choices(capsys):
    code, err = run(capsys, "--backend", "tpu")
    assert code == 2 and err.count("\n") == 1 and "choose one of: auto, cpu, cuda" in err


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
    assert cli_args.parse_size("640x480") == (640, 480)
    for bad in ("640", "0x10", "axb", "-3x4"):
        with pytest.raises(ValueError):
            cli_args.parse_size(bad)


def test_negative_values_need_no_equals_sign():
    assert cli_args.join_negative_values(["--center", "-0.75,0.1", "--ref", "-33.9,151.2", "--iters", "5"]) == \
        ["--center=-0.75,0.1", "--ref=-33.9,151.2", "--iters", "5"]
    assert cli_args.join_negative_values(["--center", "--bench"]) == ["--center", "--bench"]


def test_render_mandelbrot_png_and_npy(tmp_path, capsys):
    import numpy as np
    from PIL import Image
    png, npy = tmp_path / "m.png", tmp_path / "m.npy"
    base = ["--render", "mandelbrot", "--backend", "cpu", "--size", "40x30", "--center", "-0.5,0",
            "--width", "3", "--iters", "50"]
    assert main.main(base + ["--out", str(png)]) == 0
    assert Image.open(png).size == (40, 30)
    assert main.main(base + ["--out", str(npy)]) == 0
    v = np.load(npy)
    assert v.shape == (30, 40) and v.dtype == np.float64
    assert v.max() == 50  # points inside the set hold the iteration limit


def test_render_rejects_options_of_another_view(capsys):
    assert main.main(["--render", "mandelbrot", "--ref", "1,2", "--out", "x.png"]) == 2
    assert "--ref does not apply" in capsys.readouterr().err


def test_render_bad_values_exit_2(tmp_path, capsys):
    for extra in (["--center", "nan,0"], ["--iters", "0"], ["--iters", "20000000"], ["--width", "abc"]):
        assert main.main(["--render", "mandelbrot", "--backend", "cpu", "--out", str(tmp_path / "x.png")] + extra) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err


def test_ui_bench_result_has_the_bench_layout():
    res = {"frames": 10, "fps": 125.0, "per_frame_ms": {"compute": 1.0, "copy": 0.2, "display": 3.0},
           "backend": "cuda", "size": "1920x1080", "iterations": 2000, "seconds": 5.0}
    r = cli_bench.ui_result(res)
    assert set(r) == {"workload", "backend", "variant", "size", "phases_ms", "bytes", "metrics"}
    assert r["phases_ms"]["total"] == 8.0 and r["phases_ms"]["host"] == 3.0
    assert r["metrics"]["frames/s"] == 125.0


def test_bench_table_names_its_units():
    report = {"device": "test", "results": [
        {"workload": "w", "variant": "v", "size": "1", "metrics": {"GB/s": 1.5},
         "phases_ms": {"compile": None, "h2d": 0.25, "kernel": 1.0, "d2h": None, "host": None,
                       "total": 1.25}}]}
    lines = cli_bench.table(report).splitlines()
    assert "kernel ms" in lines[1] and "total ms" in lines[1]
    assert "1.000" in lines[3] and "GB/s=1.5" in lines[3] and lines[3].count(" - ") >= 1


def test_view_ids_are_defined_once_for_the_command_line():
    from services.views import VIEW_IDS, VIEWS
    assert VIEW_IDS == ("mandelbrot", "distance", "throughput", "random")
    choices = next(a for a in cli_args.build_parser()._actions if a.dest == "view").choices
    assert tuple(choices) == VIEW_IDS and all(title for _, title in VIEWS)


def test_ui_applies_only_with_bench(capsys):
    assert main.main(["--ui"]) == 2
    assert "--ui applies only with --bench" in capsys.readouterr().err


# ---------------------------------------------------------------- output files checked before any work

@pytest.fixture
def nothing_may_run(monkeypatch):
    """Fails the test if a bench, a window bench or a backend is started."""
    import cli.bench
    import cli.render
    from kernels import bench

    def forbidden(*a, **k):
        raise AssertionError("work started before the output path was checked")
    monkeypatch.setattr(bench, "run", forbidden)
    monkeypatch.setattr(main, "_window_bench", forbidden)
    monkeypatch.setattr(cli.render, "resolve_backend", forbidden)
    monkeypatch.setattr(cli.bench, "resolve_backend", forbidden)


@pytest.mark.parametrize("argv", [
    ["--bench", "--backend", "cpu", "--json", "/nonexistent/dir/b.json"],
    ["--bench", "--ui", "--backend", "cpu", "--json", "/nonexistent/dir/b.json"],
    ["--render", "mandelbrot", "--backend", "cpu", "--out", "/nonexistent/x.png"],
    ["--render", "distance", "--backend", "cpu", "--out", "/nonexistent/x.npy"],
])
def test_unwritable_output_is_a_usage_error_before_any_work(argv, capsys, nothing_may_run):
    assert main.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/nonexistent" in err and "does not exist" in err


def test_output_that_is_a_folder_is_a_usage_error(tmp_path, capsys, nothing_may_run):
    folder = tmp_path / "out.png"
    folder.mkdir()
    for argv in (["--bench", "--json", str(tmp_path)], ["--render", "mandelbrot", "--out", str(folder)]):
        assert main.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is a folder" in err


def test_render_distance_png_and_npy(tmp_path, capsys):
    import numpy as np
    from PIL import Image
    base = ["--render", "distance", "--backend", "cpu", "--size", "20x10", "--unit", "km"]
    assert main.main(base + ["--out", str(tmp_path / "d.png")]) == 0
    assert Image.open(tmp_path / "d.png").size == (20, 10)
    assert main.main(base + ["--out", str(tmp_path / "d.npy")]) == 0
    v = np.load(tmp_path / "d.npy")
    assert v.shape == (10, 20) and v.dtype == np.float64 and 0 <= v.min() and v.max() <= 20038
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npy", "d.png"]   # no temp files left


def test_a_home_relative_path_means_the_home_folder(monkeypatch, tmp_path):
    """--out, --movie and --json take "~" as the dialogs do (the shell does not expand it in
    --out=~/pic.png)."""
    from cli.args import parse
    monkeypatch.setenv("HOME", str(tmp_path))
    args = parse(["--render", "mandelbrot", "--out=~/pic.png"])
    assert args.out == str(tmp_path / "pic.png")
    assert parse(["--bench", "--json=~/b.json"]).json == str(tmp_path / "b.json")
    assert parse(["--movie=~/m.mp4"]).movie == str(tmp_path / "m.mp4")
