"""`--render`'s bar advances during a one-frame render (issue 24: it sat at 0 % for 14 s, then
jumped to 100 %): the picture comes in about PROGRESS_STRIPS strips, equal to the picture whole,
and a large output is announced before the poster path starts too."""
import numpy as np

import main
from cli import progress as cli_progress
from kernels import backend
from kernels.mandelbrot.requests.request import DeepFrameRequest, MandelbrotRequest
from services.render import view_renderer, write_frame


def test_a_one_frame_render_reports_progress_strip_by_strip(tmp_path, monkeypatch):
    monkeypatch.setitem(cli_progress.PROGRESS_MIN_WORK, "cpu", 0)    # a tiny picture, cut anyway
    req = MandelbrotRequest(-0.5, 0.0, 3.0, (96, 80), 30, want_values=True)
    renderer = view_renderer("mandelbrot", req, backend.resolve("cpu"))
    reports = []
    write_frame(renderer, req, str(tmp_path / "a.npy"), progress=reports.append,
                rows=cli_progress.progress_rows(req))
    assert len(reports) == cli_progress.PROGRESS_STRIPS
    assert reports == sorted(reports) and reports[0] <= 0.05 and reports[-1] == 1.0
    whole = tmp_path / "b.npy"
    write_frame(renderer, req, str(whole))
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.load(whole))


def test_pictures_too_quick_for_a_bar_keep_their_cut():
    """Each strip is a pass of its own: a 256² CPU picture's 20 strips took 0.23 s of a 1.3 s
    command (issue 38) for a bar that never shows under a second."""
    quick = MandelbrotRequest(-0.5, 0.0, 3.0, (256, 256), 256)
    assert cli_progress.progress_rows(quick) is None
    assert cli_progress.progress_rows(quick, gpu=True) is None
    slow = MandelbrotRequest(-0.5, 0.0, 3.0, (1920, 1080), 1000)
    assert cli_progress.progress_rows(slow) == -(-1080 // cli_progress.PROGRESS_STRIPS)


def test_deep_frames_keep_their_cut():
    req = DeepFrameRequest("-0.75", "0.1", "1e-20", (32, 18), 100)
    assert cli_progress.progress_rows(req) is None


def test_the_finer_cut_serves_every_mapping(tmp_path, capsys):
    """The progress cut goes through write_frame's own strips, so the mappings that colour the
    picture as one (log, histogram: kept values, two passes) take it too."""
    for mapping in ("log", "histogram"):
        out = tmp_path / f"{mapping}.png"
        code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "96x80",
                          "--iters", "30", "--mapping", mapping, "--out", str(out)])
        assert code == 0, capsys.readouterr().err
        assert out.stat().st_size > 0


def test_a_large_poster_is_announced_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli_progress, "LARGE_OUTPUT_BYTES", 1000)
    import services.poster as poster
    monkeypatch.setattr(poster, "POSTER_MIN_PIXELS", 100)       # 40×30 goes in bands
    out = tmp_path / "p.npy"
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "40x30",
                      "--iters", "20", "--out", str(out)])
    got = capsys.readouterr()
    assert code == 0, got.err
    assert got.out.splitlines()[0] == f"writing a 9.5 KiB .npy (40×30 float64 values) to {out}"
