"""The Mandelbrot view's formula: the side panel's combo box sets the model's formula and draws the
view again with it, Home goes to the formula's whole set, and places that name a formula (pasted
text, .kfr files, bookmarks) bring it with them (CPU backend, the synchronous scheduler)."""
from decimal import Decimal

import numpy as np

from kernels.mandelbrot.requests import formulas
from kernels.mandelbrot.loops.escape import BAILOUT2

from test_mandelbrot_view import make_view, wait_full_frame

SHIP = formulas.BURNING_SHIP


def _ship_count(cx: float, cy: float, max_iter: int) -> int:
    """Burning Ship's escape count by the plain recurrence (max_iter inside)."""
    x = y = 0.0
    for n in range(1, max_iter + 1):
        x, y = x * x - y * y + cx, abs((x + x) * y) + cy
        if x * x + y * y > BAILOUT2:
            return n
    return max_iter


def _choose(view, formula: str) -> None:
    combo = view.controls.formula_combo
    combo.setCurrentIndex(combo.findData(formula))


def test_the_combo_lists_the_formulas_with_their_equations(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    combo = v.controls.formula_combo
    assert [combo.itemData(i) for i in range(combo.count())] == list(formulas.FORMULAS)
    assert [combo.itemText(i) for i in range(combo.count())] == \
        [formulas.LABELS[f] for f in formulas.FORMULAS]
    assert all(formulas.EQUATIONS[f] in combo.toolTip() for f in formulas.FORMULAS)
    assert v.model.formula == formulas.MANDELBROT and v.controls.formula() == formulas.MANDELBROT


def test_choosing_burning_ship_draws_a_frame_of_it(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend)
    wait_full_frame(qtbot, v)
    mandelbrot = v.last_frame
    with qtbot.waitSignal(v.frame_displayed, timeout=60000):
        _choose(v, SHIP)
    wait_full_frame(qtbot, v)
    assert v.model.formula == SHIP
    frame = v.last_frame
    assert frame is not mandelbrot and frame.request.formula == SHIP
    assert not frame.meta["recoloured"]          # another formula is never a recolouring
    assert frame.timings.label.startswith(SHIP)   # the timing panel names what was drawn
    # the hover read-out's values are the new formula's: a pixel's count is the plain loop's
    req = frame.request
    for row, col in ((0, 0), (v.canvas_size()[1] // 2, v.canvas_size()[0] // 3)):
        value = v.model.frame_at(*v.canvas_size()).fetch_value(row, col)
        want = _ship_count(*req.pixel_to_complex(row, col), req.max_iter)
        got = req.max_iter if value >= req.max_iter else int(np.floor(value)) + 1
        assert got == want


def test_choosing_a_formula_at_the_whole_set_shows_the_new_ones(qtbot, scheduler, cpu_backend):
    """At Home the combo moves the view to the new formula's whole set (the ship's lies elsewhere);
    anywhere else the place stays, to compare the formulas there."""
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    _choose(v, SHIP)
    re_, im_, width = formulas.WHOLE_SETS[SHIP]
    assert v.camera.center == (Decimal(re_), Decimal(im_)) and v.camera.width == Decimal(width)
    _choose(v, formulas.MANDELBROT)
    assert v.camera.center == (Decimal("-0.75"), Decimal(0))


def test_home_goes_to_the_formulas_whole_set(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    v.model.zoom_centre(8.0)
    zoomed = (v.camera.center, v.camera.width)
    _choose(v, SHIP)
    assert (v.camera.center, v.camera.width) == zoomed      # away from Home the place stays
    assert v.model.reset()
    re_, im_, width = formulas.WHOLE_SETS[SHIP]
    assert v.camera.center == (Decimal(re_), Decimal(im_)) and v.camera.width == Decimal(width)
    _choose(v, formulas.MANDELBROT)
    assert v.model.reset()
    assert v.camera.center == (Decimal("-0.75"), Decimal(0))


def test_places_bring_their_formula(qtbot, scheduler, cpu_backend, tmp_path):
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    assert v.paste_location("center=-1.7557,-0.0284 width=0.05 iters=300 formula=burning-ship")
    assert v.model.formula == SHIP and v.controls.formula() == SHIP
    assert v.location_text().endswith("formula=burning-ship")
    kfr = tmp_path / "ship.kfr"
    assert v.save_kfr(str(kfr))
    assert "FractalType: 1" in kfr.read_text()
    assert v.paste_location("center=-0.75,0 width=3 iters=100")     # no formula: Mandelbrot's
    assert v.model.formula == formulas.MANDELBROT and v.controls.formula() == formulas.MANDELBROT
    assert v.open_kfr(str(kfr))
    assert v.model.formula == SHIP
    bad = tmp_path / "other.kfr"
    bad.write_text("Re: 0\r\nIm: 0\r\nZoom: 1\r\nFractalType: 4\r\n")
    assert not v.open_kfr(str(bad))
    assert v.model.formula == SHIP                       # refused: the view stays as it was


def test_overlays_and_float32_are_mandelbrots_only(qtbot, scheduler, cpu_backend):
    v = make_view(qtbot, scheduler, cpu_backend, show=False)
    v.model.overlay = "iterations"
    assert v.model.build_request(40, 30).overlay == "iterations"
    _choose(v, SHIP)
    req = v.model.build_request(40, 30)
    assert req.overlay == "" and req.formula == SHIP
    assert not v.overlays.panel.enabled("iterations")
    v.number_types.set_wanted("float32")
    assert v.model.build_request(40, 30).number_type == "float64"
