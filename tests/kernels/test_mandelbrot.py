"""Mandelbrot compute on the CPU: known points, orientation, the twin against a slow NumPy
reference, validation, CLI parsing, strips of any size, buffer reuse and recolouring."""
import math
from dataclasses import replace

import numpy as np
import pytest

from services import requests as cli_requests
from kernels.mandelbrot import renderer as m
from kernels.mandelbrot import bench as mbench
from kernels.mandelbrot.requests import request as mreq
from kernels.mandelbrot.loops import escape as mk
from kernels import palettes

SEAHORSE = (-0.743643887037151, 0.131825904205330)


def reference_values(req):
    """Slow, obvious NumPy escape-time: the same recurrence and smooth formula, no shortcuts."""
    w, h = req.size
    step = req.width / w
    col = np.arange(w, dtype=np.float64)
    row = np.arange(h, dtype=np.float64)
    cx = np.broadcast_to(req.center_re + (col[None, :] + 0.5 - w / 2) * step, (h, w))
    cy = np.broadcast_to(req.center_im - (row[:, None] + 0.5 - h / 2) * step, (h, w))
    x = np.zeros((h, w))
    y = np.zeros((h, w))
    out = np.full((h, w), float(req.max_iter))
    alive = np.ones((h, w), dtype=bool)
    for n in range(1, req.max_iter + 1):
        if not alive.any():
            break
        x2, y2 = x * x, y * y
        y = (x + x) * y + cy
        x = (x2 - y2) + cx
        r2 = x * x + y * y
        escaped = alive & (r2 > mk.BAILOUT2)
        if escaped.any():
            f = 1.0 - np.log2(np.log(r2[escaped]) / np.log(mk.BAILOUT2))
            out[escaped] = (n - 1) + np.clip(f, 0.0, 1.0 - 2.0 ** -20)
            alive &= ~escaped
        x[~alive] = y[~alive] = 0.0   # escaped points are done: keep them from overflowing
    return out


@pytest.fixture
def renderer(cpu_backend):
    return m.Renderer(cpu_backend)


def request(cx=-0.5, cy=0.0, width=3.0, size=(16, 12), iters=50, **kw):
    return m.MandelbrotRequest(cx, cy, width, size, iters, **kw)


# ---------------------------------------------------------------- known points and geometry

def test_known_points():
    assert mk.escape_value(0.0, 0.0, 100) == 100.0          # the origin never escapes
    assert mk.escape_value(-2.0, 0.0, 100) == 100.0         # the tip stays bounded (z = 2 forever)
    v = mk.escape_value(1.0, 1.0, 100)                      # escapes within a handful of steps
    assert 0.0 <= v < 5.0
    assert m.iteration_counts(np.array([v]), 100)[0] == 5   # |z_4|^2 = 9410, |z_5|^2 ~ 8.9e7
    assert mk.escape_value(300.0, 0.0, 100) < 1.0           # outside the bailout at once
    assert mk.escape_value(-0.75, 0.1, 50) < 50             # in the seahorse gap between the bulbs


def test_tiny_request_inside_and_outside(renderer):
    inside = renderer.render(request(0.0, 0.0, 1e-3, (4, 3), 40, want_values=True))
    assert np.all(inside.values == 40.0)
    outside = renderer.render(request(1.0, 1.0, 1e-3, (4, 3), 40, want_values=True))
    assert np.all(outside.values < 5.0)


def test_orientation_on_a_non_square_frame(renderer):
    # centred on 0+1i (a boundary point): the top rows lie further from the set and escape sooner
    req = request(0.0, 1.0, 0.5, (24, 10), 200, want_values=True)
    vals = renderer.render(req).values
    assert vals.shape == (10, 24)
    assert vals[0].mean() < vals[-1].mean()
    # and every pixel is exactly the point its documented centre formula names
    for row, col in [(0, 0), (0, 23), (9, 0), (9, 23), (4, 11)]:
        re, im = req.pixel_to_complex(row, col)
        assert vals[row, col] == mk.escape_value(re, im, 200)
    top_re, top_im = req.pixel_to_complex(0, 0)
    assert top_im > req.center_im and top_re < req.center_re
    assert math.isclose(top_im - req.pixel_to_complex(1, 0)[1], 0.5 / 24)   # square pixels


@pytest.mark.parametrize("req", [
    request(-0.5, 0.0, 3.0, (48, 32), 60),
    request(*SEAHORSE, 0.01, (40, 30), 300),
    request(-0.1, 0.9, 0.3, (33, 17), 120),
], ids=["full", "seahorse", "upper-boundary"])
def test_cpu_twin_matches_numpy_reference(renderer, req):
    got = renderer.render(replace(req, want_values=True)).values
    ref = reference_values(req)
    np.testing.assert_array_equal(m.iteration_counts(got, req.max_iter),
                                  m.iteration_counts(ref, req.max_iter))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)


# ---------------------------------------------------------------- validation and helpers

@pytest.mark.parametrize("kw, words", [
    (dict(cx=float("nan")), "center re"),
    (dict(cy=float("inf")), "center im"),
    (dict(width=0.0), "width must be greater than 0"),
    (dict(width=-1.0), "width must be greater than 0"),
    (dict(width=float("nan")), "width must be a finite"),
    (dict(size=(0, 10)), "at least 1×1"),
    (dict(size=(10, -2)), "at least 1×1"),
    (dict(size=(10.5, 2)), "whole numbers"),
    (dict(iters=0), "between 1 and"),
    (dict(iters=mreq.MAX_ITER_LIMIT + 1), "between 1 and"),
    (dict(iters=2.5), "whole number"),
    (dict(density=0.0), "density"),
    (dict(offset=float("nan")), "offset"),
    (dict(interior=(0, 0, 300, 255)), "interior colour"),
    (dict(palette="no-such-map"), "unknown palette"),
])
def test_validation_errors_say_what_is_wrong(kw, words):
    with pytest.raises(ValueError, match=words):
        request(**kw).validate()


def test_render_validates(renderer):
    with pytest.raises(ValueError, match="width"):
        renderer.render(request(width=0.0))


def test_auto_iterations_grow_with_zoom():
    assert mreq.auto_iterations(3.0) == 256
    assert mreq.auto_iterations(10.0) == 256
    assert 1500 <= mreq.auto_iterations(0.01) <= 2500
    widths = [3.0, 0.3, 1e-2, 1e-5, 1e-9, 1e-13, 1e-300]
    its = [mreq.auto_iterations(w) for w in widths]
    assert its == sorted(its) and its[-1] <= mreq.MAX_ITER_LIMIT
    assert its[-2] > 10_000


def test_precision_state():
    assert mreq.precision_state(-0.5, 0.0, 3.0, 1920)[0] == "ok"
    assert mreq.precision_state(*SEAHORSE, 1e-9, 1920)[0] == "ok"
    state, msg = mreq.precision_state(*SEAHORSE, 1e-11, 1920)
    assert state == "warn" and "precision" in msg
    state, msg = mreq.precision_state(*SEAHORSE, 1e-13, 1920)
    assert state == "limit" and msg
    assert mreq.precision_state(0.0, 0.0, 1e-20, 1920)[0] == "ok"   # tiny numbers near 0 are exact


# ---------------------------------------------------------------- CLI

def test_request_from_cli_defaults():
    req = cli_requests.mandelbrot_request({o: None for o in cli_requests.MANDELBROT_OPTIONS}, 320, 200, False)
    assert (req.center_re, req.center_im, req.width, req.size) == (-0.5, 0.0, 3.0, (320, 200))
    assert req.max_iter == mreq.auto_iterations(3.0) and req.palette == palettes.DEFAULT
    assert req.want_values is False


def test_request_from_cli_values():
    req = cli_requests.mandelbrot_request({"center": " -0.75 , 0.1", "width": "1e-3", "iters": "1e4",
                              "palette": "viridis"}, 64, 48, True)
    assert (req.center_re, req.center_im, req.width) == (-0.75, 0.1, 1e-3)
    assert req.max_iter == 10_000 and req.palette == "viridis" and req.want_values
    assert cli_requests.mandelbrot_request({"width": "0.01"}, 8, 8, False).max_iter == mreq.auto_iterations(0.01)


@pytest.mark.parametrize("opts, words", [
    ({"center": "abc"}, "--center must be two numbers"),
    ({"center": "1,2,3"}, "--center must be two numbers"),
    ({"center": "1"}, "--center must be two numbers"),
    ({"center": "nan,0"}, "--center must be two finite"),
    ({"center": "0,inf"}, "--center must be two finite"),
    ({"width": "wide"}, "--width must be a number"),
    ({"width": "0"}, "--width must be a finite number above 0"),
    ({"width": "-3"}, "--width must be a finite number above 0"),
    ({"width": "inf"}, "--width must be a finite number above 0"),
    ({"iters": "many"}, "--iters must be a whole number"),
    ({"iters": "2.5"}, "--iters must be a whole number"),
    ({"iters": "0"}, "--iters must be from 1"),
    ({"iters": "20000000"}, "--iters must be from 1"),
    ({"palette": "rainbow-unicorn"}, "--palette 'rainbow-unicorn' is unknown; choose one of"),
])
def test_request_from_cli_rejects_garbage_in_one_line(opts, words):
    with pytest.raises(ValueError, match=words) as exc:
        cli_requests.mandelbrot_request(opts, 64, 48, False)
    assert "\n" not in str(exc.value)


def test_request_from_cli_bad_size():
    with pytest.raises(ValueError, match="at least 1×1"):
        cli_requests.mandelbrot_request({}, 0, 48, False)


# ---------------------------------------------------------------- frames, buffers, colour

def test_frame_layout_and_timings(cpu_backend):
    r = m.Renderer(cpu_backend)
    first = r.render(request())
    assert first.rgba.shape == (12, 16, 4) and first.rgba.dtype == np.uint8
    assert first.rgba.flags.c_contiguous
    assert first.values is None
    assert first.timings.phases_ms["compile"] is not None     # first call compiles (or loads)
    second = r.render(request(cx=-0.4))
    t = second.timings
    assert t.phases_ms["compile"] is None and t.phases_ms["kernel"] > 0
    assert t.detail["colourise"] > 0 and t.phases_ms["d2h"] is None and t.backend == "cpu"
    assert r.warmup() == 0.0


def test_buffers_are_reused_and_rgba_rings(renderer):
    frames = [renderer.render(request(cx=-0.5 + 0.01 * i)) for i in range(2)]
    before = renderer.pool.allocations
    frames += [renderer.render(request(cx=-0.4 + 0.01 * i)) for i in range(4)]
    assert renderer.pool.allocations == before
    ids = [f.rgba.__array_interface__["data"][0] for f in frames]
    assert ids[0] == ids[3] and len({ids[0], ids[1], ids[2]}) == 3


def test_colours_interior_and_palette(renderer):
    req = request(iters=60, want_values=True, interior=(10, 20, 30, 255))
    f = renderer.render(req)
    inside = f.values == 60
    assert inside.any() and (~inside).any()
    assert np.all(f.rgba[inside] == [10, 20, 30, 255])
    lut = palettes.lut(palettes.DEFAULT)
    outside_colours = {tuple(c) for c in f.rgba[~inside]}
    assert outside_colours <= {tuple(c) for c in lut}
    shifted = renderer.render(replace(req, offset=0.3))
    assert not np.array_equal(shifted.rgba[~inside], f.rgba[~inside])


def test_colour_only_change_recolours_without_recomputing(cpu_backend):
    r = m.Renderer(cpu_backend)
    req = request(*SEAHORSE, 0.01, (20, 14), 200, want_values=True)
    a = r.render(req)
    a_rgba = a.rgba.copy()
    b = r.render(replace(req, palette="viridis", density=2.0))
    assert b.meta["recoloured"] and not a.meta["recoloured"]
    assert b.timings.detail["colourise"] > 0
    fresh = m.Renderer(cpu_backend).render(replace(req, palette="viridis", density=2.0))
    np.testing.assert_array_equal(b.rgba, fresh.rgba)
    np.testing.assert_array_equal(b.values, fresh.values)
    assert not np.array_equal(b.rgba, a_rgba)
    c = r.render(replace(req, max_iter=201))
    assert not c.meta["recoloured"]


def test_fetch_value_reads_one_pixel_until_overwritten(renderer):
    req = request(*SEAHORSE, 0.01, (20, 14), 150, want_values=True)
    f = renderer.render(req)
    assert f.fetch_value(3, 7) == f.values[3, 7]
    assert f.fetch_value(13, 19) == f.values[13, 19]
    with pytest.raises(IndexError, match="outside"):
        f.fetch_value(14, 0)
    for i in range(3):
        renderer.render(replace(req, center_re=req.center_re + 1e-4 * (i + 1)))
    assert math.isnan(f.fetch_value(3, 7))


class _CancelAfter:
    def __init__(self, n):
        self.n = n

    def check(self):
        self.n -= 1
        if self.n < 0:
            raise RuntimeError("cancelled")


def test_cancel_between_bands(renderer, monkeypatch):
    monkeypatch.setattr(m, "CPU_BAND_WORK", 1)   # one band per 4 rows
    with pytest.raises(RuntimeError, match="cancelled"):
        renderer.render(request(size=(16, 40)), cancel=_CancelAfter(2))
    full = renderer.render(request(size=(16, 40), want_values=True), cancel=_CancelAfter(100))
    monkeypatch.setattr(m, "CPU_BAND_WORK", 2 ** 27)
    whole = m.Renderer(renderer.backend).render(request(size=(16, 40), want_values=True))
    np.testing.assert_array_equal(full.values, whole.values)


# ---------------------------------------------------------------- strips (pictures of any size)

@pytest.mark.parametrize("rows", [1, 5, 23, 100])
def test_strips_assemble_to_the_whole_frame_bit_for_bit(renderer, cpu_backend, rows):
    req = request(*SEAHORSE, 0.01, (37, 23), 150)
    whole = m.Renderer(cpu_backend).render(replace(req, want_values=True))
    for values, expected in ((False, whole.rgba), (True, whole.values)):
        got = np.full_like(expected, 7)
        starts = []
        for r0, strip in renderer.strips(req, values=values, rows=rows):
            assert strip.dtype == expected.dtype and strip.shape[1:] == expected.shape[1:]
            starts.append(r0)
            got[r0:r0 + len(strip)] = strip
        assert starts == list(range(0, 23, rows))
        np.testing.assert_array_equal(got, expected)


def test_strips_reuse_one_buffer_and_default_to_one_strip(renderer):
    it = renderer.strips(request(size=(16, 40)), values=True, rows=8)
    (_, first), (_, second) = next(it), next(it)
    assert np.shares_memory(first, second)   # valid until the next strip, as documented
    assert [r0 for r0, _ in renderer.strips(request(size=(16, 40)), values=False)] == [0]


def test_strips_check_at_once_and_cancel_between_strips(renderer):
    with pytest.raises(ValueError, match="at least 1 row"):
        renderer.strips(request(), values=False, rows=0)        # before any strip is asked for
    with pytest.raises(ValueError, match="iterations"):
        renderer.strips(request(iters=0), values=False)
    it = renderer.strips(request(size=(16, 40)), values=False, rows=4, cancel=_CancelAfter(3))
    next(it)                                                     # two checks: strip, band
    with pytest.raises(RuntimeError, match="cancelled"):
        next(it)


# ---------------------------------------------------------------- benchmarks

def test_workloads_are_registered():
    names = {w.name for w in mbench.workloads()}
    assert {"mandelbrot-seahorse", "mandelbrot-full", "mandelbrot-preview",
            "mandelbrot-launch"} <= names
    launch = [w for w in mbench.workloads() if w.name == "mandelbrot-launch"][0]
    assert launch.backends == ("cuda",)
    # the divergence metric and the deep-zoom depths come with --only mandelbrot on the GPU
    gpu_only = {w.name for w in mbench.workloads() if w.backends == ("cuda",)}
    assert {"mandelbrot-divergence", "mandelbrot-deep-1e30", "mandelbrot-deep-1e1000"} <= gpu_only


def test_bench_measure_reports_exact_iterations(cpu_backend):
    from kernels.mandelbrot import bench as mb
    req = request(-0.5, 0.0, 3.0, (24, 16), 40)
    row, iters = mb._measure("mandelbrot-test", cpu_backend, 2, req)
    vals = m.Renderer(cpu_backend).render(replace(req, want_values=True)).values
    plain = int(m.iteration_counts(vals, 40).sum())
    assert 0 < iters < plain            # the cardioid/bulb shortcut skips the interior
    assert row["metrics"]["G iter/s"] > 0 and row["metrics"]["frame ms"] > 0
    assert row["phases_ms"]["kernel"] > 0 and row["size"] == "24x16"


def test_size_changes_keep_frames_right(renderer, cpu_backend):
    for size in ((9, 7), (14, 10), (9, 7), (1, 1)):
        req = request(*SEAHORSE, 0.01, size, 120, want_values=True)
        got = renderer.render(req)
        assert got.rgba.shape == (size[1], size[0], 4)
        np.testing.assert_array_equal(got.values, m.Renderer(cpu_backend).render(req).values)
