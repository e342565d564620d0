"""A headless `--render` draws one frame: its deep reference gets the precision that frame needs,
not the window's headroom for the zooms in that follow (kernels/mandelbrot/deep/renderer.py)."""
import numpy as np

from kernels import backend
from kernels.mandelbrot.deep.renderer import PRECISION_HEADROOM
from kernels.mandelbrot.requests.request import DeepFrameRequest
from services.render import view_renderer

CENTRE = ("-0.743643887037158704752191506114774", "0.131825904205311970493132056385139")


def test_one_frame_gets_no_headroom_where_the_window_keeps_it():
    # a width whose need and need + headroom round to different multiples of 64 bits
    req = DeepFrameRequest(*CENTRE, "1e-40", (24, 16), 400, want_values=True)
    assert req.precision < req.precision_deeper(PRECISION_HEADROOM)
    cpu = backend.resolve("cpu")
    one = view_renderer("mandelbrot", req, cpu, one_frame=True)
    kept = view_renderer("mandelbrot", req, cpu)
    a, b = one.render(req), kept.render(req)
    assert a.meta["precision_bits"] == req.precision
    assert b.meta["precision_bits"] == req.precision_deeper(PRECISION_HEADROOM)
    # the same picture: the frame's own precision is what the rule asks for it
    assert np.mean(np.abs(np.floor(a.values) - np.floor(b.values)) <= 1) >= 0.995
