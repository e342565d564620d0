"""Issue 34 on the GPU (real, or the simulator at tiny sizes): one piece and bands give the same
values, the pixels the redo kernel hands back are iterated exactly where the values are, and on a
real GPU KF's 5e227 matches MPFR and the CPU twin."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.buffers import BufferPool  # noqa: E402
from kernels.mandelbrot.redo import exact_redo  # noqa: E402
from kernels.mandelbrot.redo.exact import exact_values  # noqa: E402
from kernels.mandelbrot.reference.reference_store import ReferenceStore  # noqa: E402
from kernels.mandelbrot.deep.renderer import DeepRenderer  # noqa: E402
from kernels.mandelbrot.requests.deep_request import DeepRequest  # noqa: E402
from kernels.mandelbrot.deep_frames import DeepFrameRenderer  # noqa: E402
from kernels.mandelbrot.requests.request import DeepFrameRequest  # noqa: E402
from kernels.timing import JobTimer  # noqa: E402

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
TRUTH = Path(__file__).with_name("data") / "kf_5e227_16x16_mpfr.txt"
# test_deep_exact.py's cheap place
CRE, CIM = "-0.743643887037158704752191506114774", "0.131825904205311970493132056385139"


def kf(name, size):
    from services.kfr import parse_kfr
    loc = parse_kfr((RESOURCES / f"kf-{name}.kfr").read_text(errors="replace"))
    return DeepRequest(loc.center_re, loc.center_im, str(loc.width(*size)), size, loc.iterations)


def _frames(backend):
    r = DeepFrameRenderer(backend)
    r.deep.references = ReferenceStore(cache=None)
    r.deep.exact_redo = True
    return r


def _banded(backend, req, cuts):
    r = _frames(backend)
    h = int(req.size[1])
    out = np.full((h, int(req.size[0])), np.nan)
    for r0 in list(range(0, h, cuts))[::-1]:       # bottom band first
        n = min(cuts, h - r0)
        out[r0:r0 + n] = r.band(req, r0, n, True)
    return out


def test_one_piece_and_bands_on_the_gpu(gpu_backend, simulated):
    # simulator: 5x4, bands of 3 rows; GPU: 96x70 in bands of 9 rows (before: values differed)
    size, cuts = ((5, 4), 3) if simulated else ((96, 70), 9)
    req = DeepFrameRequest(CRE, CIM, "1e-25", size, 20000, want_values=True)
    whole = _frames(gpu_backend).render(req).values.copy()
    assert np.array_equal(whole, _banded(gpu_backend, req, cuts))


def test_handed_back_pixels_are_settled_on_the_device(gpu_backend):
    """gpu_untrusted.queue_listing and settle_on_device: a pixel of the redo list below 0 gets the
    exact value (as a place of its whole picture: here the double-double tier proves it, with or
    without MPFR behind it), the others stay; not exact: the loop's own value back, put there on
    the device without a wait."""
    from numba import cuda

    from kernels.mandelbrot.deep.gpu_pixels import GpuPixels
    from kernels.mandelbrot.redo.gpu_untrusted import queue_listing, settle_on_device
    req = DeepRequest(CRE, CIM, "1e-30", (5, 4), 3000)
    truth = exact_values(req)
    pixels, pool = GpuPixels(gpu_backend), BufferPool(gpu_backend)
    proved = {"dd_pixels": 1, "exact_pixels": 0, "marked_pixels": 0}
    marked = {"dd_pixels": 0, "exact_pixels": 0, "marked_pixels": 1}
    for exact, want, counts in ((True, truth[2, 3], proved),
                                (exact_redo.PROVED, truth[2, 3], proved), (False, 12.5, marked)):
        values = truth.copy()
        values[2, 3] = -1.0 - 12.5
        dev = cuda.to_device(values)
        redo = cuda.to_device(np.array([0, 2 * 5 + 3, 7, 0], dtype=np.int64))
        nredo = cuda.to_device(np.array([3], dtype=np.int64))
        timer = JobTimer(gpu_backend, pixels.stream(), "test")
        queue_listing(pixels, pool, dev, redo, nredo)
        layers = np.zeros((5, 4, 5), np.int32)
        layers[4, 2, 3] = 2                 # the loop's mark of the pixel it handed back
        layers_d = cuda.to_device(layers)
        got = settle_on_device(pixels, pool, dev, req, exact, timer, layers=layers_d)
        timer.finish()
        # marking only: nothing waited for, the count read once the frame's timer has finished
        assert callable(got) == (exact is False)
        got = got() if callable(got) else got
        back = dev.copy_to_host()
        assert got == counts
        # the overlay's 2 stays only where the pixel stays marked
        assert layers_d.copy_to_host()[4, 2, 3] == (2 if counts["marked_pixels"] else 1)
        assert back[2, 3] == pytest.approx(want, abs=1e-6)
        mask = np.ones_like(back, dtype=bool)
        mask[2, 3] = False
        assert np.array_equal(back[mask], truth[mask])


def test_kf_5e227_on_the_gpu_matches_mpfr_and_the_cpu(gpu_backend, cpu_backend, simulated):
    if simulated:
        pytest.skip("1,200,000 iterations a pixel: a real GPU's test")
    req = kf("5e227", (16, 16))
    g, c = DeepRenderer(gpu_backend), DeepRenderer(cpu_backend)
    g.exact_redo = c.exact_redo = True
    gv, cv = g.render_values(req), c.render_values(req)
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    off = np.abs(np.floor(gv.values).astype(np.int64) - truth)
    assert int((off > 1).sum()) == 0, np.argwhere(off > 1).tolist()
    assert np.array_equal(np.floor(gv.values), np.floor(cv.values))
    assert gv.stats == cv.stats


def test_kf_5e227_on_the_gpu_middle_tier_as_the_cpu(gpu_backend, cpu_backend, simulated):
    """The double-double tier (exact_redo.PROVED) behind the GPU's handed-back pixels: the same
    values and counts as the CPU twin's, every proved pixel within ±1 of MPFR."""
    if simulated:
        pytest.skip("1,200,000 iterations a pixel: a real GPU's test")
    req = kf("5e227", (16, 16))
    g, c = DeepRenderer(gpu_backend), DeepRenderer(cpu_backend)
    g.exact_redo = c.exact_redo = exact_redo.PROVED
    gv, cv = g.render_values(req), c.render_values(req)
    truth = np.loadtxt(TRUTH, dtype=np.int64)
    off = np.abs(np.floor(gv.values).astype(np.int64) - truth)
    assert int((off > 1).sum()) <= gv.stats["marked_pixels"] == 0, np.argwhere(off > 1).tolist()
    assert gv.stats["dd_pixels"] >= 5
    assert np.array_equal(np.floor(gv.values), np.floor(cv.values))
    assert gv.stats == cv.stats
