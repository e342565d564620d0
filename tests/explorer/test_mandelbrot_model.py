"""The Mandelbrot view's model without Qt: camera commands and their observers, the iteration
policy, the number format around float64's limit, the requests it builds, locations as text and
.kfr, bookmarks, exports and where the last frame lies on the canvas."""
import json
import sys
from decimal import Decimal
from types import SimpleNamespace

import pytest

from explorer.models import mandelbrot as mm
from explorer.models.bookmarks import BadBookmarkFile, load_bookmarks, read_bookmark_files
from explorer.models.camera import HOME_WIDTH, KEY_ZOOM
from explorer.models.mandelbrot import (CAMERA, COLOURING, ITERATIONS, Colouring, MandelbrotModel,
                                        Ticket)
from kernels.backend import resolve
from kernels.mandelbrot.requests import request as km
from kernels.mandelbrot.requests.request import MAX_ITER_LIMIT

W, H = 160, 120
SEAHORSE = ("-0.743643887037151", "0.131825904205330")


@pytest.fixture
def model():
    return MandelbrotModel(resolve("cpu"), canvas_size=lambda: (W, H))


def events(model):
    seen = []
    for name in (CAMERA, ITERATIONS, COLOURING):
        model.observe(name, lambda *args, name=name: seen.append((name, *args)))
    return seen


def test_the_model_loads_no_gui_toolkit():
    import subprocess
    code = ("import sys, explorer.models.mandelbrot, explorer.models.bookmarks; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PyQt6', 'pyqtgraph')]; "
            "assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_camera_commands_move_the_camera_and_tell_the_observers(model):
    seen = events(model)
    assert model.pan_fraction(0.1, 0)
    assert float(model.camera.center[0]) == pytest.approx(-0.75 + 0.35)
    assert model.zoom_centre(KEY_ZOOM)
    assert float(model.camera.width) == pytest.approx(HOME_WIDTH / 2)
    under = model.camera.state.to_complex(40, 90, W, H)
    assert model.wheel_zoom(1.25, 40, 90) and model.camera.in_gesture
    model.end_gesture()
    after = model.camera.state.to_complex(40, 90, W, H)
    assert abs(float(after[0] - under[0])) < 1e-12 and abs(float(after[1] - under[1])) < 1e-12
    assert model.centre_on(W / 2, H / 2)          # the centre itself: no move, still fine
    assert seen == [(CAMERA, True)] * 4
    assert model.camera.history_depth == 3
    assert model.back() and model.back() and model.back()
    assert model.camera.state == model.camera.home
    seen.clear()
    assert not model.back() and seen == []        # nothing to go back to: no notice


def test_a_zoom_box_of_a_few_pixels_is_a_slip(model):
    seen = events(model)
    before = model.camera.state
    assert not model.zoom_box(10, 10, 12, 11)
    assert model.camera.state == before and seen == []
    assert model.zoom_box(40, 40, 100, 80)
    assert float(model.camera.width) == pytest.approx(3.5 * max(60 / W, 40 / H))


def test_a_refused_jump_says_why_and_leaves_the_camera(model):
    seen = events(model)
    before = model.camera.state
    assert not model.go_to("nan", "0", 1.0, 100)
    assert model.camera.state == before and seen == [(CAMERA, False)]
    assert "Cannot go there" in model.camera.refusal and "finite" in model.camera.refusal
    assert not model.go_to("0", "1", "1e-20000")
    assert "deepest" in model.camera.refusal


def test_iterations_are_automatic_from_the_width_until_fixed(model):
    assert model.fixed_iterations is None
    assert model.iterations() == km.auto_iterations(model.camera.width)
    seen = events(model)
    model.set_colouring(Colouring(), 500)
    assert model.iterations() == 500 and seen == [(COLOURING,)]
    model.set_colouring(Colouring(), 10 ** 12)          # clamped as the side panel clamps
    assert model.fixed_iterations == MAX_ITER_LIMIT
    model.set_colouring(Colouring(), 0)
    assert model.fixed_iterations == 1
    model.set_colouring(Colouring(), None)
    model.zoom_centre(1000.0)
    assert model.iterations() == km.auto_iterations(model.camera.width) > 256


def test_a_jump_sets_the_iterations_unless_told_to_keep_them(model):
    model.set_colouring(Colouring(), 77)
    seen = events(model)
    assert model.go_to(*SEAHORSE, 1e-6, 900)
    assert model.fixed_iterations == 900
    assert seen == [(ITERATIONS, 900), (CAMERA, True)]       # the panel follows before the redraw
    seen.clear()
    assert model.go_to("-0.5", "0", 1.0, 10 ** 12, keep_iterations=True)   # not even checked
    assert model.fixed_iterations == 900 and seen == [(CAMERA, True)]
    assert model.go_to("-0.5", "0", 1.0)
    assert model.fixed_iterations is None


@pytest.mark.parametrize("width, fmt", [
    ("1e-11", "float64"), ("5e-13", "float64"), ("2e-13", "perturbation"),
    ("1e-17", "perturbation"), ("1e-289", "perturbation"), ("3e-318", "extended"),
])
def test_number_format_around_the_float64_limit(model, width, fmt):
    assert model.go_to(*SEAHORSE, width)
    assert model.number_format() == fmt


def test_number_format_depends_on_the_pixels_across(model):
    # near float64's limit a picture with more pixels needs finer steps: deep sooner
    assert model.go_to(*SEAHORSE, "1e-12")
    formats = {model.number_format(w) for w in (16, 100_000)}
    assert formats == {"float64", "perturbation"}
    assert model.number_format() == model.number_format(W)


def test_refresh_format_returns_the_one_before(model):
    assert model.refresh_format() == "float64" and model.format == "float64"
    model.go_to(*SEAHORSE, "1e-20")
    assert model.refresh_format() == "float64" and model.format == "perturbation"


def test_a_float64_request_carries_the_camera_colouring_and_backend(model):
    model.set_colouring(Colouring("viridis", 2.5, 0.25, (0, 255, 0, 255), "auto"), 300)
    req = model.build_request(W, H)
    assert isinstance(req, km.MandelbrotRequest)
    assert (req.center_re, req.center_im, req.width) == (-0.75, 0.0, 3.5)
    assert req.size == (W, H) and req.max_iter == 300
    assert (req.palette, req.density, req.offset, req.interior) == ("viridis", 2.5, 0.25, (0, 255, 0, 255))
    assert req.mapping == "sqrt" and not req.want_values and req.backend is model.backend
    req.validate()


def test_a_deep_request_keeps_every_digit(model):
    re_ = "-0.74364388703715100000000000000000000001"
    assert model.go_to(re_, SEAHORSE[1], "1e-30", 2000)
    req = model.build_request(W, H)
    assert isinstance(req, km.DeepFrameRequest)
    assert Decimal(req.center_re) == Decimal(re_) and req.max_iter == 2000
    assert req.mapping == "log"                        # "auto" colours deep frames by log
    model.set_colouring(Colouring(mapping="histogram"), 2000)
    assert model.build_request(W, H).mapping == "histogram"


def test_frame_jobs_come_coarse_first_on_the_cpu(model):
    model.dirty = True
    req, ticket = model.frame_job(W, H)
    assert not model.dirty
    assert isinstance(req, km.ProgressiveRequest) and req.coarse.size == (W // 4, H // 4)
    assert ticket == Ticket(model.camera.state, W, H)
    req, _ = model.frame_job(40, 30)                   # small: no coarse pass
    assert isinstance(req, km.MandelbrotRequest)
    model.progressive = False
    assert isinstance(model.frame_job(W, H)[0], km.MandelbrotRequest)


def test_a_frame_job_that_cannot_render_raises_and_is_no_longer_dirty(model):
    model.dirty = True
    with pytest.raises(ValueError):
        model.frame_job(0, H)
    assert not model.dirty


def test_slow_deep_frames_are_noted(model):
    slow = SimpleNamespace(meta={"format": "perturbation"},
                           timings=SimpleNamespace(phases_ms={"total": mm.DEEP_PROGRESSIVE_MS + 1}))
    assert model.frame_arrived(slow) == "perturbation" and model.deep_slow
    plain = SimpleNamespace(meta={}, timings=SimpleNamespace(phases_ms={"total": 1e6}))
    assert model.frame_arrived(plain) == "float64" and model.deep_slow      # float64: unchanged


def test_the_shown_frame_moves_with_the_camera(model):
    frame = SimpleNamespace(fetch_value=object())
    ticket = Ticket(model.camera.state, W, H)
    model.submitted(7, ticket)
    assert model.current_ticket() == ticket and model.current_ticket(coarse=True).coarse
    assert model.frame is None and model.image_rect(W, H) is None
    model.displayed(ticket, frame)
    assert model.frame is frame and model.shown is ticket
    assert model.image_rect(W, H) == pytest.approx((0, 0, W, H))
    assert model.frame_at(W, H) is frame and model.frame_at(W + 1, H) is None
    model.pan(35, 20)
    assert model.image_rect(W, H) == pytest.approx((35, 20, W, H))
    assert model.frame_at(W, H) is None                # it no longer shows the camera's place
    model.zoom_centre(2.0)
    x, y, w, h = model.image_rect(W, H)
    assert (w, h) == (pytest.approx(2 * W), pytest.approx(2 * H))


def test_location_text_round_trip(model):
    assert model.go_to("-0.7436438870371", "0.1318259043", "0.01", 77)
    text = model.location_text()
    assert text == "center=-0.7436438870371,0.1318259043 width=0.01 iters=77"
    other = MandelbrotModel(model.backend, canvas_size=lambda: (W, H))
    loc = other.place_from_text(text)
    assert other.go_to(loc.center_re, loc.center_im, loc.width, loc.iterations)
    assert other.camera.state == model.camera.state and other.fixed_iterations == 77
    with pytest.raises(ValueError, match="no centre"):
        model.place_from_text("garbage")


def test_kfr_text_round_trip_at_depth(model):
    re_ = "-1.76877851023" + "1" * 150
    assert model.go_to(re_, "0.00173889", "1e-120", 30_000)
    text = model.kfr_text()
    assert text.startswith("Re: ") and "Iterations: 30000" in text
    c_re, c_im, width, iters, formula = model.place_from_kfr(text)
    assert Decimal(c_re) == Decimal(re_) and iters == 30_000 and formula == "mandelbrot"
    assert abs(width / model.camera.width - 1) < Decimal("1e-20")
    with pytest.raises(ValueError):
        model.place_from_kfr("")


def test_an_export_job_is_built_from_the_model(model, tmp_path):
    model.set_colouring(Colouring(palette="viridis"), 123)
    job = model.export_job(str(tmp_path / "pic.npy"), 400, 300, gpus=[0, 1])
    assert job.request.size == (400, 300) and job.request.want_values
    assert job.request.palette == "viridis" and job.request.max_iter == 123
    assert job.gpus == (0, 1) and job.backend is model.backend and job.path.endswith("pic.npy")
    png = model.export_job(str(tmp_path / "pic.png"), 40, 30)
    assert not png.request.want_values and png.gpus is None


def test_an_export_to_a_bad_path_is_refused_before_any_request(model, tmp_path, monkeypatch):
    monkeypatch.setattr(model, "build_request", lambda *a: pytest.fail("built a request"))
    with pytest.raises(ValueError, match="does not exist"):
        model.export_job(str(tmp_path / "missing" / "pic.png"), 40, 30)
    with pytest.raises(ValueError, match="must end in .png"):
        model.export_job(str(tmp_path / "pic.jpg"), 40, 30)


def test_the_movie_place_names_the_chosen_colouring(model):
    model.go_to("-0.5", "0.25", "0.01", 400)
    model.set_colouring(Colouring("viridis", 2.0, 0.5, (1, 2, 3, 255), "auto"), 400)
    place = model.movie_place()
    assert (place.center_re, place.center_im, place.width, place.iters) == ("-0.5", "0.25", "0.01",
                                                                             400)
    assert place.palette == "viridis" and place.mapping is None
    assert dict(place.colouring) == {"density": 2.0, "offset": 0.5, "interior": (1, 2, 3, 255)}
    spec = place.spec("z.mp4", fps=4)      # MovieSpec's strings, made in one place
    assert (spec.center, spec.width, spec.iters, spec.fps) == ("-0.5,0.25", "0.01", "400", 4)
    model.set_colouring(Colouring(mapping="log"), None)
    place = model.movie_place()
    assert place.iters is None and place.mapping == "log"
    assert place.spec("z.mp4").iters is None


def _write(path, data):
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return str(path)


def test_bookmarks_skip_bad_entries_and_name_them(tmp_path):
    path = _write(tmp_path / "b.json", {"bookmarks": [
        {"name": "Good", "center": [-0.75, 0], "width": 3.5, "iterations": "auto"},
        {"name": "No width", "center": [0, 0]},
        {"name": "Too many", "center": [0, 0], "width": 1, "iterations": 10 ** 12},
        {"center": [0, 0], "width": 1},
        "text",
    ]})
    marks, problems = load_bookmarks(path)
    assert [b.name for b in marks] == ["Good"] and marks[0].iterations is None
    assert isinstance(marks[0].width, Decimal)
    assert problems[0] == "bookmark 'No width' skipped: it has no width"
    assert "'Too many'" in problems[1] and "iteration" in problems[1]
    assert problems[2].startswith("bookmark entry 4 skipped: it has no name")
    assert problems[3].startswith("bookmark entry 5 skipped")


def test_a_bad_user_bookmark_file_is_set_aside(tmp_path):
    shipped = _write(tmp_path / "shipped.json", {"bookmarks": [
        {"name": "Home", "center": [-0.75, 0], "width": 3.5}, {"name": "Bad"}]})
    user = _write(tmp_path / "user.json", "{not json")
    with pytest.raises(BadBookmarkFile, match="not valid JSON"):
        load_bookmarks(user)
    put_aside = []
    got = read_bookmark_files(shipped, user, lambda p: put_aside.append(p) or p + ".bad")
    assert [b.name for b in got.items] == ["Home"] and len(got.skipped) == 1
    assert put_aside == [user]
    assert got.notes[0].startswith("Your bookmarks were not loaded") and "user.json.bad" in got.notes[0]
    assert got.notes[1] == got.skipped[0]
    missing = read_bookmark_files(str(tmp_path / "gone.json"), None)
    assert missing.items == [] and missing.notes[0].startswith("Bookmarks unavailable: cannot read")


def test_home_goes_back_to_the_automatic_iterations(model):
    assert model.go_to(*SEAHORSE, "1e-6", 50_000)
    assert model.fixed_iterations == 50_000
    seen = events(model)
    assert model.reset()
    assert model.fixed_iterations is None and model.iterations() == model.auto_iterations()
    assert (ITERATIONS, None) in seen and (CAMERA, True) in seen
    model.set_colouring(model.colouring, 777)       # set by hand at home: Home undoes it too
    seen.clear()
    assert model.reset() and model.fixed_iterations is None and (ITERATIONS, None) in seen


def test_an_export_holds_everything_the_canvas_shows_whatever_its_shape(model, tmp_path):
    assert model.go_to(*SEAHORSE, "0.01")
    width = model.camera.state.width
    same = model.export_job(str(tmp_path / "a.png"), 4 * W, 4 * H).request
    assert Decimal(repr(same.width)) == width                # the canvas's shape: its framing
    wide = model.export_job(str(tmp_path / "b.png"), 1600, 900).request
    # 16:9 from 4:3: as tall in the plane as the canvas, so wider than it
    assert float(wide.width) * 900 / 1600 >= float(width) * H / W * (1 - 1e-6)
    assert float(wide.width) > float(width)
    tall = model.export_job(str(tmp_path / "c.png"), 300, 400).request
    assert Decimal(repr(tall.width)) == width                # taller: more above and below
