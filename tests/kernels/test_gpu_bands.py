"""A deep GPU frame that may be cancelled runs in bands of pixels with a synchronisation between
them, so that a cancel is honoured mid-frame; once the same GpuPixels' last frame was quick (a
movie's or a poster's next frame) it runs whole: each band's end left the GPU idle while its
slowest pixels finished and the next band was launched. Frames that report progress (the
window's) keep their bands."""
from decimal import Decimal

import pytest

from kernels.mandelbrot.deep import gpu_pixels
from kernels.mandelbrot.deep.gpu_pixels import GPU_BAND_PIXELS, QUICK_FRAME_S, band_pixels
from kernels.scheduler import CancelToken

FULL_HD = 1920 * 1080


def report(fraction, stage):
    pass


def test_a_frame_without_cancel_or_progress_is_one_band():
    assert band_pixels(FULL_HD, None, None, None) == FULL_HD


def test_a_cancellable_frame_is_banded_until_the_last_frame_was_quick():
    token = CancelToken()
    assert band_pixels(FULL_HD, token, None, None) == GPU_BAND_PIXELS
    assert band_pixels(FULL_HD, token, None, 2 * QUICK_FRAME_S) == GPU_BAND_PIXELS
    assert band_pixels(FULL_HD, token, None, QUICK_FRAME_S / 2) == FULL_HD


def test_a_frame_that_reports_progress_keeps_its_bands():
    assert band_pixels(FULL_HD, None, report, QUICK_FRAME_S / 2) == GPU_BAND_PIXELS
    assert band_pixels(FULL_HD, CancelToken(), report, QUICK_FRAME_S / 2) == GPU_BAND_PIXELS


@pytest.mark.gpu
def test_a_movies_next_frame_runs_whole_and_gives_the_same_pixels(gpu_backend, simulated,
                                                                  monkeypatch):
    pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")
    import numpy as np

    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.requests.deep_request import DeepRequest, add_decimal
    if simulated:       # bands of a few pixels: the simulator's frames are tiny
        monkeypatch.setattr(gpu_pixels, "GPU_BAND_PIXELS", 16)
        monkeypatch.setattr(gpu_pixels, "QUICK_FRAME_S", 1e9)
    size = (12, 8) if simulated else (1024, 768)
    w = Decimal("1e-30")
    req = DeepRequest(str(w * Decimal("0.1234567")), add_decimal(1, w * Decimal("-0.0765432")),
                      "1e-30", size, 2000)
    r = DeepRenderer(gpu_backend)
    token = CancelToken()
    syncs = []
    real = gpu_pixels.GpuPixels.stream

    def counting_stream(self):
        s = real(self)
        if not hasattr(s, "_counted"):
            plain = s.synchronize

            def sync(*a, **k):
                syncs.append(1)
                return plain(*a, **k)
            s.synchronize, s._counted = sync, True
        return s
    monkeypatch.setattr(gpu_pixels.GpuPixels, "stream", counting_stream)
    banded = r.render_values(req, cancel=token)
    first_syncs = len(syncs)
    assert r.pixels.last_frame_s is not None and r.pixels.last_frame_s < gpu_pixels.QUICK_FRAME_S
    syncs.clear()
    whole = r.render_values(req, cancel=token)
    assert len(syncs) < first_syncs, "the second frame should run without band synchronisations"
    np.testing.assert_array_equal(banded.values, whole.values)
    assert banded.stats == whole.stats
