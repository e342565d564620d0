"""Pictures written from GPU strips (real GPU, or numba's simulator with tiny sizes): the files
hold what one whole GPU frame shows, and a cancel leaves the earlier file whole."""
import os

import numpy as np
import pytest
from PIL import Image

from services import files
from kernels.mandelbrot import renderer as m

pytestmark = pytest.mark.gpu

SEAHORSE = (-0.743643887037151, 0.131825904205330)


class _CancelAfter:
    def __init__(self, n):
        self.n = n

    def check(self):
        self.n -= 1
        if self.n < 0:
            raise RuntimeError("cancelled")


def test_gpu_strips_written_to_png_and_npy(gpu_backend, tmp_path, simulated):
    w, h = (13, 11) if simulated else (300, 170)
    req = m.MandelbrotRequest(*SEAHORSE, 0.01, (w, h), 40 if simulated else 600, want_values=True)
    renderer = m.Renderer(gpu_backend)
    seen = []
    files.write_strips(tmp_path / "g.npy", w, h, renderer.strips(req, values=True, rows=4),
                       progress=seen.append)
    files.write_strips(tmp_path / "g.png", w, h, renderer.strips(req, values=False, rows=3))
    assert seen[-1] == 1.0 and len(seen) == -(-h // 4)
    shown = m.Renderer(gpu_backend).render(req)
    np.testing.assert_array_equal(np.load(tmp_path / "g.npy"), shown.values)
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "g.png")), shown.rgba)


def test_gpu_cancel_keeps_the_earlier_file(gpu_backend, tmp_path):
    target = tmp_path / "g.npy"
    target.write_bytes(b"earlier")
    req = m.MandelbrotRequest(-0.5, 0.0, 3.0, (8, 12), 20)
    strips = m.Renderer(gpu_backend).strips(req, values=True, rows=2, cancel=_CancelAfter(2))
    with pytest.raises(RuntimeError, match="cancelled"):
        files.write_strips(target, 8, 12, strips)
    assert target.read_bytes() == b"earlier" and os.listdir(tmp_path) == ["g.npy"]
