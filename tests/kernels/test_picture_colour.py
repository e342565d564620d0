"""One colour per value in a picture made of parts (kernels/mandelbrot/colouring/picture_colour.py): strips
and bands coloured with the whole picture's statistics equal the picture rendered in one piece
(CPU, and the GPU path under the simulator with tiny sizes)."""
import dataclasses

import numpy as np
import pytest

from kernels.mandelbrot.colouring import picture_colour as pc
from kernels.mandelbrot.renderer import Renderer
from kernels.mandelbrot.requests.request import MandelbrotRequest

MAPPINGS = ("log", "histogram")


def request(mapping, size=(61, 47), max_iter=400):
    return MandelbrotRequest(-0.7436, 0.1318, 0.01, size, max_iter, mapping=mapping)


def strips_of(renderer, req, rows, **kw):
    got = np.empty((req.size[1], req.size[0], 4), np.uint8)
    for r0, strip in renderer.strips(req, values=False, rows=rows, **kw):
        got[r0:r0 + strip.shape[0]] = strip
    return got


def equal_values_equal_colours(values, rgba) -> int:
    """How many distinct values show more than one colour."""
    words = rgba.reshape(-1, 4).copy().view(np.uint32).reshape(-1)
    v = values.reshape(-1)
    order = np.argsort(v, kind="stable")
    v, words = v[order], words[order]
    same = v[1:] == v[:-1]
    return int(np.count_nonzero(same & (words[1:] != words[:-1])))


@pytest.mark.parametrize("mapping", MAPPINGS)
def test_strips_equal_the_one_piece_picture(cpu_backend, mapping):
    req = request(mapping)
    whole = Renderer(cpu_backend).render(req).rgba.copy()
    got = strips_of(Renderer(cpu_backend), req, rows=5)
    assert np.array_equal(got, whole)


def test_strips_coloured_each_on_their_own_would_differ(cpu_backend):
    """The check above could fail: per-strip statistics give another picture."""
    req = request("histogram")
    whole = Renderer(cpu_backend).render(req).rgba.copy()
    r = Renderer(cpu_backend)
    apart = np.concatenate([s.copy() for _, s in r._strips(req, False, 5, None)])
    assert not np.array_equal(apart, whole)


def test_sqrt_strips_take_the_one_pass(cpu_backend):
    req = request("sqrt")
    r = Renderer(cpu_backend)
    assert r.strips(req, values=False, rows=5).__name__ == "_strips"     # no values kept
    assert np.array_equal(strips_of(r, req, rows=5), Renderer(cpu_backend).render(req).rgba)


def test_progress_covers_the_value_pass(cpu_backend):
    seen = []
    strips_of(Renderer(cpu_backend), request("log"), rows=10, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 5


def test_values_kept_in_a_file_when_memory_is_short(cpu_backend, tmp_path, monkeypatch):
    monkeypatch.setattr(pc, "RAM_SHARE", 0.0)
    req = request("histogram")
    got = strips_of(Renderer(cpu_backend), req, rows=6, folder=str(tmp_path))
    assert np.array_equal(got, Renderer(cpu_backend).render(req).rgba)
    assert list(tmp_path.iterdir()) == []          # an unnamed file: nothing left behind


def test_kept_values_round_trip_through_a_file(tmp_path, monkeypatch):
    monkeypatch.setattr(pc, "RAM_SHARE", 0.0)
    kept = pc.KeptValues(7, 5, str(tmp_path))
    data = np.arange(35, dtype=np.float64).reshape(7, 5)
    kept.put(3, data[3:])
    kept.put(0, data[:3])
    assert np.array_equal(kept.get(2, 4), data[2:6])
    kept.close()


@pytest.mark.parametrize("mapping", MAPPINGS)
def test_equal_values_get_equal_colours_across_strips(cpu_backend, mapping):
    req = dataclasses.replace(request(mapping, size=(80, 60), max_iter=300), want_values=True)
    values = Renderer(cpu_backend).render(req).values.copy()
    got = strips_of(Renderer(cpu_backend), dataclasses.replace(req, want_values=False), rows=7)
    assert equal_values_equal_colours(values, got) == 0


@pytest.mark.gpu
@pytest.mark.parametrize("mapping", MAPPINGS)
def test_gpu_strips_equal_the_gpu_one_piece_picture(gpu_backend, simulated, mapping):
    req = request(mapping, size=(13, 9) if simulated else (640, 480),
                  max_iter=60 if simulated else 2000)
    whole = Renderer(gpu_backend).render(req).rgba.copy()
    got = strips_of(Renderer(gpu_backend), req, rows=4 if simulated else 100)
    assert np.array_equal(got, whole)


@pytest.mark.parametrize("mapping", MAPPINGS)
def test_deep_strips_give_equal_values_equal_colours(cpu_backend, mapping):
    """Deep strips are deep frames of their own; their colours still come from the whole
    picture: the picture's values and colours, strip by strip, agree everywhere."""
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    from kernels.mandelbrot.deep_frames import DeepFrameRenderer
    from kernels.mandelbrot.requests.request import DeepFrameRequest
    req = DeepFrameRequest("-1.7490812690", "0.0000000012", "1e-20", (24, 20), 800,
                           mapping=mapping)
    frames = DeepFrameRenderer(cpu_backend)
    values = np.concatenate([v.copy() for _, v in frames.strips(req, values=True, rows=6)])
    rgba = np.concatenate([s.copy() for _, s in frames.strips(req, values=False, rows=6)])
    assert equal_values_equal_colours(values, rgba) == 0
    # the strips' colours are those of their values coloured in one piece
    from kernels.mandelbrot.colouring.colourer import Colourer
    from kernels.timing import JobTimer
    one = np.empty(values.shape, np.uint32)
    timer = JobTimer(cpu_backend, None, "test")
    Colourer(cpu_backend).colour(np.ascontiguousarray(values), one, req, req.max_iter, timer)
    timer.finish()
    assert np.array_equal(rgba, one.view(np.uint8).reshape(rgba.shape))
