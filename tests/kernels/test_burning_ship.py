"""Burning Ship on the float64 escape-time path (CPU; the GPU's twin is test_burning_ship_gpu.py):
its values are the plain recurrence's, exactly, at points and in frames; the Mandelbrot kernels
are untouched by it; the requests carry and check the formula; and the two formulas' kernels,
each kept in numba's disk cache by another process, stay apart in a third."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from kernels.mandelbrot.loops import escape as mk
from kernels.mandelbrot.requests import formulas
from kernels.mandelbrot.frames import preview
from kernels.mandelbrot.loops.formula_twins import twin
from kernels.mandelbrot.requests.number_type import Rates, choose, resolve
from kernels.mandelbrot.renderer import Renderer, executed_iterations, iteration_counts
from kernels.mandelbrot.requests.request import DeepFrameRequest, MandelbrotRequest
from services.requests import place_request

SHIP = formulas.BURNING_SHIP
# the ship itself (upside down in this orientation), a mast, the set's body, outside, the origin
POINTS = [(-1.75, -0.03), (-1.7557, -0.0284), (-1.7, -0.02), (-0.4, -0.6), (-0.5, 0.5),
          (1.0, 1.0), (0.0, 0.0), (-1.8, 0.0), (-0.25, 0.0), (0.3, -0.2)]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ship_count(cx: float, cy: float, max_iter: int) -> int:
    """Burning Ship's escape count by its definition: z <- (|Re z| + i|Im z|)^2 + c from 0, the
    first n with |z_n|^2 > BAILOUT2 (max_iter when none is)."""
    x = y = 0.0
    for n in range(1, max_iter + 1):
        x, y = x * x - y * y + cx, 2.0 * abs(x * y) + cy
        if x * x + y * y > mk.BAILOUT2:
            return n
    return max_iter


def mandelbrot_count(cx: float, cy: float, max_iter: int) -> int:
    x = y = 0.0
    for n in range(1, max_iter + 1):
        x, y = x * x - y * y + cx, 2.0 * x * y + cy
        if x * x + y * y > mk.BAILOUT2:
            return n
    return max_iter


def count_of(value: float, max_iter: int) -> int:
    return int(iteration_counts(np.array([value]), max_iter)[0])


def test_ship_points_escape_when_the_plain_recurrence_does():
    seen = set()
    for cx, cy in POINTS:
        v = mk.value_kernel("float64", "burning-ship")(cx, cy, 500)
        assert count_of(v, 500) == ship_count(cx, cy, 500), (cx, cy)
        seen.add(v >= 500)
    assert seen == {True, False}            # points inside and outside both


def test_a_ship_frame_is_the_plain_recurrence_pixel_by_pixel(cpu_backend):
    req = MandelbrotRequest(-1.7557, -0.0284, 0.09, (23, 17), 300, want_values=True,
                            formula=SHIP)
    frame = Renderer(cpu_backend).render(req)
    counts = iteration_counts(frame.values, req.max_iter)
    want = np.array([[ship_count(*req.pixel_to_complex(r, c), req.max_iter)
                      for c in range(23)] for r in range(17)])
    np.testing.assert_array_equal(counts, want)
    assert 0 < (counts == req.max_iter).mean() < 1
    # every pixel iterated: no cardioid/bulb shortcut for this set
    assert executed_iterations(req, frame.values) == int(counts.sum())


def test_the_mandelbrot_kernels_are_unchanged(cpu_backend):
    for cx, cy in POINTS:
        assert count_of(mk.escape_value(cx, cy, 500), 500) == mandelbrot_count(cx, cy, 500)
    req = MandelbrotRequest(-0.75, 0.1, 2.6, (21, 13), 200, want_values=True)
    values = Renderer(cpu_backend).render(req).values.copy()
    want = np.array([[mandelbrot_count(*req.pixel_to_complex(r, c), 200) for c in range(21)]
                     for r in range(13)])
    np.testing.assert_array_equal(iteration_counts(values, 200), want)
    ship = Renderer(cpu_backend).render(dataclasses.replace(req, formula=SHIP)).values
    assert not np.array_equal(iteration_counts(ship, 200), want)


def test_another_formula_at_the_same_place_is_computed_not_recoloured(cpu_backend):
    r = Renderer(cpu_backend)
    req = MandelbrotRequest(-0.5, -0.3, 3.0, (16, 12), 100, want_values=True)
    a = r.render(req).values.copy()
    frame = r.render(dataclasses.replace(req, formula=SHIP))
    assert not frame.meta["recoloured"] and not np.array_equal(frame.values, a)
    assert r.render(dataclasses.replace(req, formula=SHIP, palette="viridis")).meta["recoloured"]


def test_the_work_count_has_no_shortcut_for_the_ship(cpu_backend):
    from kernels.buffers import BufferPool
    from kernels.mandelbrot.frames.frame_work import start_count
    from kernels.mandelbrot.renderer import PixelGrid
    from kernels.timing import JobTimer
    req = MandelbrotRequest(-0.5, 0.0, 3.0, (20, 14), 60, want_values=True)
    for formula in formulas.FORMULAS:
        one = dataclasses.replace(req, formula=formula)
        values = Renderer(cpu_backend).render(one).values.copy()
        timer = JobTimer(cpu_backend, None, "count")
        work = start_count(cpu_backend, BufferPool(cpu_backend), None, values,
                           PixelGrid.of(one).args(0, one.max_iter), timer, formula=formula)
        timer.finish()
        assert work.useful() == executed_iterations(one, values)
        full = int(iteration_counts(values, one.max_iter).sum())
        assert (work.useful() < full) == (formula == formulas.MANDELBROT)


def test_the_numpy_preview_counts_as_the_kernel(cpu_backend):
    req = MandelbrotRequest(-0.4, -0.6, 3.5, (24, 16), 200, want_values=True, formula=SHIP)
    values = Renderer(cpu_backend).render(req).values
    got = preview.escape_values(*preview.grid(req), req.max_iter, formula=SHIP)
    np.testing.assert_array_equal(iteration_counts(got, 200), iteration_counts(values, 200))
    assert preview.PreviewRequest(req).small.formula == SHIP


def test_requests_carry_and_check_the_formula():
    with pytest.raises(ValueError, match="unknown formula 'julia'"):
        MandelbrotRequest(-0.5, 0.0, 3.0, (8, 6), 50, formula="julia").validate()
    ship = MandelbrotRequest(-0.5, 0.0, 3.0, (8, 6), 50, formula=SHIP).validate()
    with pytest.raises(ValueError, match="overlays are drawn for the Mandelbrot set only"):
        dataclasses.replace(ship, overlay="iterations").validate()
    with pytest.raises(ValueError, match="float64 only"):
        dataclasses.replace(ship, number_type="float32").validate()
    shallow = place_request("-1.75", "-0.03", "0.1", (8, 6), 50, formula=SHIP)
    deep = place_request("-1.75", "-0.03", "1e-20", (8, 6), 50, formula=SHIP)
    assert isinstance(shallow, MandelbrotRequest) and shallow.formula == SHIP
    assert isinstance(deep, DeepFrameRequest) and deep.formula == SHIP
    with pytest.raises(ValueError, match="overlays"):
        dataclasses.replace(deep, overlay="iterations").validate()


def test_the_ship_stays_in_float64():
    fast32 = Rates(64.0, 1.0, "a consumer GPU")
    assert choose(-0.5, 0.0, 3.0, 800, fast32).number_type == "float32"
    auto = choose(-0.5, 0.0, 3.0, 800, fast32, formula=SHIP)
    asked = choose(-0.5, 0.0, 3.0, 800, fast32, "float32", formula=SHIP)
    assert auto.number_type == asked.number_type == "float64"
    assert "Mandelbrot set only" in auto.reason and "float32 asked" in asked.reason
    req, choice = resolve(MandelbrotRequest(-0.5, 0.0, 3.0, (800, 600), 50, formula=SHIP),
                          None, "float32")
    assert req.number_type == "float64" and choice.forced


def test_a_twin_swaps_only_globals_its_function_reads():
    def f(x):
        return helper(x)        # noqa: F821 (a global of the copy)

    g = twin(f, "g", helper=lambda x: x + 1)
    assert g(1) == 2 and g.__name__ == g.__qualname__ == "g"
    with pytest.raises(LookupError, match="no global other"):
        twin(f, "h", other=len)


_CACHED = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import numpy as np
    from kernels.cpu_chunks import control
    from kernels.mandelbrot.loops import escape as mk

    def frame(kernel):
        # the band kernels as the renderer calls them: 12 x 16 pixels over the ship's set
        values = np.zeros((12, 16))
        xs, ys = mk.pixel_axes((0, 0, -0.4, -0.6, 3.5 / 16, 8.0, 6.0), 12, 16, "float64")
        kernel(values, 0, 12, mk.row_stride(12), xs, ys, 300, control())
        return values.tolist()

    got = {{}}
    if sys.argv[1] in ("ship", "both"):
        got["ship"] = frame(mk.rows_kernel("float64", "burning-ship"))
    if sys.argv[1] in ("mandelbrot", "both"):
        got["mandelbrot"] = frame(mk.escape_rows_cpu)
    print(repr(got))
""")


def test_each_formulas_cached_kernels_stay_its_own(tmp_path):
    """numba names a compiled function by its qualified name and a number counted in the process
    that compiled it: the two formulas' helpers, cached by two processes, must not come back
    under one name in a third (which would run one formula's code for both)."""
    code = _CACHED.format(root=ROOT)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    for which in ("ship", "mandelbrot", "both"):
        done = subprocess.run([sys.executable, "-c", code, which], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    got = eval(done.stdout)
    step = 3.5 / 16
    for formula, count in (("ship", ship_count), ("mandelbrot", mandelbrot_count)):
        want = [[count(-0.4 + (c + 0.5 - 8.0) * step, -0.6 - (r + 0.5 - 6.0) * step, 300)
                 for c in range(16)] for r in range(12)]
        np.testing.assert_array_equal(iteration_counts(np.array(got[formula]), 300), want)
