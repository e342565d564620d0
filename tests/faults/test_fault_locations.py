"""Faults in the places the Mandelbrot view is sent: the same limits for every way a location
enters (pasted text, a bookmark, the command line), a refusal that leaves the view working, and
places past float64's precision rendered deep wherever a jump lands."""
from decimal import Decimal

import pytest
from PyQt6.QtWidgets import QApplication

import main
from services.requests import check_location, mandelbrot_request
from explorer.models.bookmarks import Bookmark
from explorer.models.location import location_from_values, parse_location

W, H = 120, 90


@pytest.fixture
def view(small_mandelbrot_view):
    return small_mandelbrot_view(W, H, settle=True)


def wait_frame_with(qtbot, v, **want):
    def ok():
        assert not v.in_flight and v.last_frame is not None
        for k, value in want.items():
            assert getattr(v.last_frame.request, k) == value
    qtbot.waitUntil(ok, timeout=60000)


# (re, im, width, iterations) that no way in may accept, and the words saying why
BAD = [
    ("nan", "0", 1.0, None, "finite"),
    ("0", "inf", 1.0, None, "finite"),
    ("1e7", "0", 1.0, None, "too far out"),
    ("0", "-2e6", 1.0, None, "too far out"),
    ("0", "0", 5e3, None, "too large"),
    ("0", "0", -1.0, None, "positive"),
    ("0", "0", 1.0, 10 ** 12, "iteration"),
    ("0", "0", 1.0, 0, "iteration"),
]


@pytest.mark.parametrize("re_, im_, width, iters, words", BAD)
def test_every_way_in_has_the_same_limits(re_, im_, width, iters, words):
    with pytest.raises(ValueError, match=words):
        check_location(re_, im_, width, iters)
    with pytest.raises(ValueError, match=words):
        location_from_values(Decimal(re_), Decimal(im_), width, iters)
    text = f"center={re_},{im_} width={width} iters={iters if iters is not None else 'auto'}"
    with pytest.raises(ValueError):
        parse_location(text)
    opts = {"center": f"{re_},{im_}", "width": str(width),
            "iters": str(iters) if iters is not None else None}
    with pytest.raises(ValueError):
        mandelbrot_request(opts, 64, 48, False)


def test_the_command_line_draws_a_place_past_float64_precision_deep(capsys, tmp_path):
    """Past float64's digits the picture used to be refused (it would come out flat); it now
    renders by perturbation, and only absurd places are refused."""
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    out = tmp_path / "deep.png"
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "64x48",
                      "--center", "-0.743643887037151,0.131825904205330", "--width", "1e-17",
                      "--out", str(out)])
    assert code == 0 and out.exists()
    assert "reference orbit:" in capsys.readouterr().err     # the deep render's note
    code = main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "64x48",
                      "--center", "0,1", "--width", "1e-20000", "--out", str(tmp_path / "no.png")])
    err = capsys.readouterr().err
    assert code == 2 and "deeper than the deepest supported" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "no.png").exists()


def test_a_bookmark_with_too_many_iterations_leaves_the_panel_working(qtbot, view):
    """Iterations of 1e12 used to raise while the side panel's signals were blocked, and they
    stayed blocked: palette and iteration changes silently stopped re-rendering."""
    before = view.camera.state
    huge = Bookmark("Too deep", Decimal("-0.5"), Decimal("0"), 1.0, 10 ** 12)
    msgs = []
    view.status_message.connect(lambda t, ms: msgs.append(t))
    view.go_to_bookmark(huge)
    assert view.camera.state == before and any("Cannot go there" in m for m in msgs)
    assert not view.controls.signalsBlocked()
    view.controls.palette.setCurrentText("viridis")
    wait_frame_with(qtbot, view, palette="viridis")
    view.controls.set_iterations(44)
    wait_frame_with(qtbot, view, max_iter=44)


def test_a_nan_centre_is_refused_and_copy_location_still_works(qtbot, view):
    before = view.camera.state
    assert not view.go_to(Decimal("NaN"), Decimal("0"), 1.0, 100)
    assert not view.go_to(float("nan"), 0.0, 1.0)
    assert view.camera.state == before
    view.copy_location()
    assert QApplication.clipboard().text().startswith("center=-0.75,0 width=3.5")


def test_a_pasted_place_past_float64_precision_renders_deep(qtbot, view):
    """A jump to a tiny width where float64 has run out of digits used to be refused (the picture
    would have come out flat); it now renders by perturbation, wherever it lands."""
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    assert view.paste_location("center=0.000001,0.000001 width=1e-18 iters=100")   # float64 near 0
    wait_frame_with(qtbot, view, width=1e-18)
    assert view.paste_location("center=-1.5,0.5 width=1e-18 iters=100")
    qtbot.waitUntil(lambda: not view.in_flight and view.last_frame.meta.get("format") == "perturbation",
                    timeout=60000)
    assert view.last_frame.request.center_re == "-1.5"


def test_a_bookmark_deeper_than_the_deepest_width_is_refused(qtbot, view):
    before = view.camera.state
    deep = Bookmark("Too deep", Decimal("-0.743643887037151"), Decimal("0.131825904205330"),
                    Decimal("1e-20000"), None)
    msgs = []
    view.status_message.connect(lambda t, ms: msgs.append(t))
    view.go_to_bookmark(deep)
    assert view.camera.state == before and "1e-10000" in msgs[-1]


# ---- a named pipe as the location file (issue 35) ------------------------------------------------
def test_a_named_pipe_nothing_writes_to_is_refused_at_once(tmp_path):
    """`--location FIFO` with no writer waited for one for good; the command now says why, exit
    status 2, and the pipe is left as it was."""
    import os
    import stat

    from faultkit import run_python
    fifo = tmp_path / "place.kfr"
    os.mkfifo(fifo)
    r = run_python("import main, sys; sys.exit(main.main(sys.argv[1:]))",
                   args=["--render", "mandelbrot", "--size", "16x12", "--backend", "cpu",
                         "--location", str(fifo), "--out", str(tmp_path / "x.png")], timeout=60)
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and "pipe" in r.stderr and "nothing" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not (tmp_path / "x.png").exists()


def test_a_pipe_with_a_place_in_it_is_still_read(tmp_path):
    """What a shell's <(…) gives: a pipe whose writer is there; its text is the location."""
    import os

    from services.location_file import load_location_file
    r, w = os.pipe()
    try:
        os.write(w, b"center=-0.75,0.1 width=0.01 iters=300\n")
        os.close(w)
        found = load_location_file(f"/dev/fd/{r}")
    finally:
        os.close(r)
    loc = found.place((4, 3))
    assert (str(loc.center_re), str(loc.width), loc.iterations) == ("-0.75", "0.01", 300)
