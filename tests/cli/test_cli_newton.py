"""Zoom to minibrot without a window: services.minibrot's search (view and box regions, the view
it chooses, its failures in plain words, the job through the scheduler with a cancel between
steps) and `--newton` through main for --render (the picture is drawn at the nucleus, the period
and nucleus printed; after --location too) and --movie (it ends on the minibrot); bad input is one
line and the CLI's exit status."""
import pathlib
from decimal import Decimal

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

import main
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.requests.deep_request import add_decimal
from kernels.scheduler import Delivered, Failed, Progress, Scheduler, Stopped
from services.minibrot import (
    HANDLERS,
    WIDTH_IN_SIZES,
    MinibrotFound,
    MinibrotNotFound,
    MinibrotProgress,
    box_search,
    find_minibrot,
    view_search,
)

P3 = Decimal("-1.7548776662466927600495088963585286918946")


def test_view_search_finds_the_period_3_minibrot():
    seen = []
    found = find_minibrot(view_search("-1.75", "0.001", "0.05", (800, 600), 1000),
                          progress=seen.append)
    assert found.period == 3
    assert abs(Decimal(found.center_re) - P3) < Decimal("1e-10")
    # the minibrot (about 0.042 across) fills about half of the view
    assert Decimal("0.08") < found.width < Decimal("0.11")
    assert found.iterations >= 60 and "period 3" in found.summary()
    assert seen and all(isinstance(p, MinibrotProgress) for p in seen)
    assert any(p.stage == "newton" and p.period == 3 for p in seen)


def test_view_search_region_is_the_inscribed_disc():
    s = view_search("-1.75", "0", "0.04", (800, 600), 100)
    assert Decimal(s.radius) == Decimal("0.015") and Decimal(s.pixel) == Decimal("0.00005")


def test_box_search_keeps_every_digit_of_a_deep_box():
    re_, im_ = loc.MINIBROT_424.center_re, loc.MINIBROT_424.center_im
    a = (Decimal(add_decimal(re_, "-1e-318")), Decimal(add_decimal(im_, "2e-318")))
    b = (Decimal(add_decimal(re_, "1e-318")), Decimal(add_decimal(im_, "-2e-318")))
    s = box_search(a, b, Decimal("1e-321"), 10_000)
    assert Decimal(s.center_re) == Decimal(loc.MINIBROT_424.center_re)
    assert Decimal(s.center_im) == Decimal(loc.MINIBROT_424.center_im)
    assert Decimal(s.radius) == Decimal("2e-318")
    found = find_minibrot(s)
    assert found.period == 424
    assert abs(Decimal(found.center_re) - Decimal(loc.MINIBROT_424.center_re)) < found.width / 1000
    assert found.width / WIDTH_IN_SIZES < Decimal("1e-318")
    with pytest.raises(MinibrotNotFound, match="no area"):
        box_search(a, a, Decimal("1e-321"), 100)


@pytest.mark.parametrize("centre, width, limit, words", [
    (("0.3", "0.6"), "0.002", 1000, "escapes after"),
    (("-0.1", "0.1"), "1e-9", 50, "inside the main cardioid, where every point stays bounded"),
    (("-1.01", "0.02"), "1e-9", 5000, "inside the period-2 bulb"),
    (("3", "3"), "0.01", 1000, "escapes at its first iteration"),
    (("0.2925", "0.015"), "1e-7", 20, "no minibrot period up to 20"),
])
def test_no_minibrot_is_a_plain_message(centre, width, limit, words):
    with pytest.raises(MinibrotNotFound, match=words):
        find_minibrot(view_search(centre[0], centre[1], width, (800, 600), limit))


def test_the_search_job_runs_between_other_jobs_and_stops_on_cancel():
    events = []
    sched = Scheduler(events.append, synchronous=True, autodrain=False, handlers=dict(HANDLERS))
    search = view_search(add_decimal(loc.MINIBROT_139.center_re, "3e-91"),
                         loc.MINIBROT_139.center_im, "4e-88", (800, 600), 10_000)
    gen = sched.submit("m", search)
    sched.drain()
    done = [e for e in events if isinstance(e, Delivered) and e.generation == gen]
    assert len(done) == 1 and isinstance(done[0].result, MinibrotFound)
    assert done[0].result.period == 139
    assert any(isinstance(e, Progress) for e in events)
    events.clear()
    gen = sched.submit("m", search)
    sched.drain(max_steps=2)            # started, a step or two in
    sched.cancel("m")
    sched.drain()
    assert not [e for e in events if isinstance(e, Delivered) and e.generation == gen]
    events.clear()
    sched.submit("m", view_search("0.3", "0.6", "0.002", (800, 600), 1000))
    sched.drain()
    failed = [e for e in events if isinstance(e, Failed)]
    assert failed and "escapes after" in failed[0].message
    assert not [e for e in events if isinstance(e, Stopped)]


def test_render_newton_draws_the_minibrot(tmp_path, capsys):
    out = tmp_path / "m.npy"
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "40x30",
                      "--center", "-1.75,0.001", "--width", "0.05", "--newton",
                      "--out", str(out)])
    text = capsys.readouterr()
    assert code == 0, text.err
    assert "period 3" in text.out
    nucleus = [ln for ln in text.out.splitlines() if ln.startswith("nucleus: ")][0]
    re_, im_ = (Decimal(v) for v in nucleus.split(": ")[1].split(","))
    assert abs(re_ - P3) < Decimal("1e-10") and abs(im_) < Decimal("1e-10")
    values = np.load(out)
    # centred on the nucleus: the middle pixels are inside (the limit), the corners outside
    h, w = values.shape
    limit = values.max()
    assert (values[h // 2 - 1:h // 2 + 1, w // 2 - 1:w // 2 + 1] == limit).all()
    assert values[0, 0] < limit and values[-1, -1] < limit


def test_newton_after_location_finds_the_minibrot_of_a_kf_file(tmp_path, capsys):
    out = tmp_path / "kf.npy"
    kfr = pathlib.Path(__file__).resolve().parents[2] / "resources" / "kf-5e113.kfr"
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "24x16",
                      "--location", str(kfr), "--newton", "--out", str(out)])
    text = capsys.readouterr()
    assert code == 0, text.err
    assert "period 11,380" in text.out
    values = np.load(out)
    # centred on the nucleus: the middle pixels are inside (the limit), the corners outside
    h, w = values.shape
    limit = 20 * 11_380      # the minibrot's iterations (--iters not given)
    assert values[h // 2, w // 2] == limit and values[0, 0] < limit


@pytest.mark.parametrize("argv, code, words", [
    (["--render", "mandelbrot", "--newton"], 2, "needs --center X,Y and --width W"),
    (["--render", "mandelbrot", "--newton", "--center", "abc,0", "--width", "0.1"], 2, "--center"),
    (["--render", "mandelbrot", "--newton", "--center", "0.3,0.6", "--width", "0.002",
      "--iters", "1000"], 1, "escapes after"),
    (["--render", "mandelbrot", "--newton", "--center", "-0.1,0.1", "--width", "1e-9",
      "--iters", "50"], 1, "inside the main cardioid"),
    (["--render", "distance", "--newton"], 2, "only to --render mandelbrot"),
    (["--newton"], 2, "--newton does not apply when opening the window"),
])
def test_newton_bad_input_is_one_line(tmp_path, capsys, argv, code, words):
    out = tmp_path / "x.png"
    assert main.main(argv + ["--out", str(out)] if "--render" in argv else argv) == code
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_movie_newton_refuses_a_place_without_a_minibrot(tmp_path, capsys):
    out = tmp_path / "m.mp4"
    code = main.main(["--movie", str(out), "--center", "0.3,0.6", "--width", "0.002",
                      "--iters", "1000", "--newton", "--backend", "cpu"])
    assert code == 1 and "escapes after" in capsys.readouterr().err
    assert not out.exists()


def test_movie_newton_zooms_to_the_nucleus(tmp_path, capsys):
    frames = tmp_path / "frames"
    frames.mkdir()
    code = main.main(["--movie", str(frames / "frame%05d.png"), "--center", "-1.75,0.001",
                      "--width", "0.05", "--newton", "--size", "32x18", "--seconds", "1",
                      "--fps", "4", "--backend", "cpu"])
    text = capsys.readouterr()
    assert code == 0, text.err
    assert "period 3" in text.out
    last = sorted(frames.iterdir())[-1]
    rgba = np.asarray(Image.open(last).convert("RGBA"))
    # the movie ends on the minibrot: its nucleus, in the middle, is inside (black interior)
    h, w = rgba.shape[:2]
    assert tuple(rgba[h // 2, w // 2][:3]) == (0, 0, 0)
    assert tuple(rgba[0, 0][:3]) != (0, 0, 0)
