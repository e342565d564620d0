"""A deep `--render`'s bar moves within a strip (issue 24): the strips pass their deep frames a
progress callback, whose stages (reference orbit, table, pixels) map to fixed shares of one
fraction that only goes forward and ends at 1; the bar names the stage under way."""
import io

import pytest

import main
from cli import render as cli_render
from kernels import backend
from kernels.mandelbrot.deep_frames import PIXELS_SHARE, REFERENCE_SHARE, PictureProgress
from kernels.mandelbrot.requests.request import DeepFrameRequest
from services.render import view_renderer, write_frame

CENTRE = ("-0.743643887037158704752191506114774", "0.131825904205311970493132056385139")


@pytest.mark.parametrize("out, mapping", [("d.npy", "log"), ("d.png", "sqrt"), ("d.png", "log")])
def test_deep_strips_report_forward_within_each_strip(tmp_path, out, mapping):
    req = DeepFrameRequest(*CENTRE, "1e-20", (48, 40), 300, mapping=mapping,
                           want_values=out.endswith(".npy"))
    renderer = view_renderer("mandelbrot", req, backend.resolve("cpu"))
    reports, stages = [], []
    write_frame(renderer, req, str(tmp_path / out), progress=reports.append,
                stages=stages.append, rows=10)                # 4 strips of 10 rows
    assert reports == sorted(reports) and reports[-1] == 1.0
    # more reports than strips: the bar moves inside a strip (pixel bands, the stages)
    assert len(set(reports)) > 4
    assert stages[:3] == ["reference", "table", "pixels"] or stages[1:4] == ["reference", "table", "pixels"]
    assert "compile" not in stages[1:]                       # said first if at all
    assert (tmp_path / out).stat().st_size > 0


def test_picture_progress_only_goes_forward():
    got, said = [], []
    p = PictureProgress(100, got.append, said.append)
    first, second = p.strip(0, 50), p.strip(50, 50)
    first(0.0, "compile")
    first(0.5, "reference")
    first(1.0, "reference")
    first(1.0, "table")
    first(0.5, "pixels")
    p.rows_done(0.5)
    second(1.0, "reference")            # the reused orbit, again: counted already
    second(0.5, "pixels")
    second(1.0, "pixels")
    assert got == sorted(got) and got[-1] == 1.0
    assert got[0] == pytest.approx(REFERENCE_SHARE[0] + 0.5 * (REFERENCE_SHARE[1] - REFERENCE_SHARE[0]))
    lo, hi = PIXELS_SHARE
    assert lo + 0.25 * (hi - lo) in got and lo + 0.75 * (hi - lo) in got
    assert said == ["compile", "reference", "table", "pixels"]


def test_the_bar_names_the_stage(monkeypatch):
    term = io.StringIO()
    term.isatty = lambda: True
    bar = cli_render.StagedProgress("mandelbrot 48×40 on the CPU", stream=term, mininterval=0.0)
    bar._bar.delay = 0                   # shown at once, not after a second
    bar.stage("reference")
    bar.report(0.1)
    bar.tick()
    bar._bar.refresh()
    assert "mandelbrot 48×40 on the CPU, reference orbit" in term.getvalue()
    bar.stage("pixels")
    bar.report(0.6)
    bar.tick()
    bar._bar.refresh()
    assert "on the CPU, pixels" in term.getvalue().rsplit("\r", 1)[-1]
    bar.close()


def test_deep_render_from_the_command_line(tmp_path, capsys, monkeypatch):
    seen = []
    plain = cli_render.StagedProgress.report
    monkeypatch.setattr(cli_render.StagedProgress, "report",
                        lambda self, f: (seen.append(f), plain(self, f)))
    out = tmp_path / "deep.png"
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "48x40",
                      "--iters", "300", "--center", ",".join(CENTRE), "--width", "1e-20",
                      "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) > 2
