"""The window's picture export (services/export_jobs.py) in the log and histogram mappings: a
picture larger than one strip is coloured as one, equal to the picture rendered whole, and its
progress only goes forward (values first, then the colours)."""
import dataclasses

import numpy as np
import pytest

from kernels.mandelbrot.requests import strips as mstrips
from kernels.mandelbrot.renderer import Renderer
from kernels.mandelbrot.requests.request import MandelbrotRequest
from kernels.scheduler import CancelToken, ExportProgress
from services.export_jobs import MandelbrotExport, export_mandelbrot


class Ctx:
    """A JobContext's part the export uses: its token, backend and kept renderers."""

    def __init__(self, backend):
        self.token, self.backend, self._kept = CancelToken(), backend, {}

    def renderer(self, name, factory, backend=None):
        if name not in self._kept:
            self._kept[name] = factory()
        return self._kept[name]


def run(gen):
    steps = []
    try:
        while True:
            steps.append(next(gen))
    except StopIteration as stop:
        return steps, stop.value


@pytest.mark.parametrize("mapping", ["log", "histogram"])
def test_an_export_in_strips_equals_the_picture_rendered_whole(cpu_backend, tmp_path, monkeypatch,
                                                               mapping):
    from PIL import Image
    monkeypatch.setattr(mstrips, "STRIP_PIXELS", 70 * 9)        # strips of 9 rows
    req = MandelbrotRequest(-0.7436, 0.1318, 0.01, (70, 50), 500, mapping=mapping)
    out = tmp_path / "p.png"
    steps, done = run(export_mandelbrot(Ctx(cpu_backend),
                                        MandelbrotExport(req, str(out), cpu_backend)))
    fractions = [s.fraction for s in steps if isinstance(s, ExportProgress)]
    assert len(fractions) == 2 * 6 and fractions == sorted(fractions) and fractions[-1] == 1.0
    whole = Renderer(cpu_backend).render(req).rgba
    assert np.array_equal(np.asarray(Image.open(out)), whole)
    assert done.path == str(out)


def test_values_exports_are_unchanged_by_the_mapping(cpu_backend, tmp_path, monkeypatch):
    monkeypatch.setattr(mstrips, "STRIP_PIXELS", 70 * 9)
    req = MandelbrotRequest(-0.7436, 0.1318, 0.01, (70, 50), 500, mapping="histogram",
                            want_values=True)
    out = tmp_path / "p.npy"
    run(export_mandelbrot(Ctx(cpu_backend), MandelbrotExport(req, str(out), cpu_backend)))
    assert np.array_equal(np.load(out), Renderer(cpu_backend).render(req).values)
