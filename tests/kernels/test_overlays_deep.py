"""Overlays of deep frames (the deep loops' layer twins, loops/loop_args.with_layers): each
pixel's perturbation steps, BLA steps, rebases and redone flag summed over the frame equal the
stats the renderer already reports, the iteration layer is the values' escape iteration, the
values are those of the loop without overlays, and the CPU and the GPU (or its simulator) agree
pixel for pixel."""
import dataclasses
from decimal import Decimal

import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.colouring import overlays as ov
from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.requests.deep_request import add_decimal
from kernels.mandelbrot.deep_frames import DeepFrameRenderer
from kernels.mandelbrot.requests.request import DeepFrameRequest

DEEP_NAMES = (ov.ITERATIONS, ov.STEPS, ov.BLA, ov.REBASES, ov.REDONE)


def near_i(width):
    w = Decimal(width)
    return str(w * Decimal("0.1234567")), add_decimal(1, w * Decimal("-0.0765432"))


def cases(small):
    return [
        DeepFrameRequest(*near_i("1e-20"), "1e-20", small, 300, want_values=True),
        DeepFrameRequest(*near_i("1e-320"), "1e-320", small, 2000, want_values=True),
        DeepFrameRequest(loc.MINIBROT_139.center_re, loc.MINIBROT_139.center_im, "4e-90", small,
                         3000, want_values=True),
        REDONE_PAIR,
    ]


# two pixels of tests/kernels/test_deep_seahorse.py, one of them redone by the accuracy guard
REDONE_PAIR = DeepFrameRequest("-0.743643887037158700533441506114774",
                               "0.131825904205311972133757056385139", "3.125e-19", (2, 1), 10_000,
                               want_values=True)


def check_layers_against_stats(frame, req):
    info = frame.meta["overlay"]
    st = frame.meta["stats"]
    L = info.layers
    assert L[ov.STEPS].sum() == st["perturbation_steps"]
    assert L[ov.BLA].sum() == st["bla_steps"]
    assert L[ov.REBASES].sum() == st["rebases"]
    assert (L[ov.REDONE] > 0).sum() == st["redone_pixels"]
    # 2: handed back for an exact redo, whose MPFR value the frame has (the layer the loop's)
    assert set(np.unique(L[ov.REDONE])) <= {0.0, 1.0, 2.0}
    assert (L[ov.REDONE] == 2).sum() == st["exact_pixels"] + st["marked_pixels"]
    want = np.where(frame.values >= req.max_iter, req.max_iter, np.floor(frame.values) + 1)
    mine = L[ov.REDONE] < 2
    np.testing.assert_array_equal(L[ov.ITERATIONS][mine], want[mine])


def same_colours(gpu_rgba, cpu_rgba, exact: bool):
    """The same overlay colours: exactly under the simulator (the CPU's arithmetic); on a GPU,
    libdevice's log may move a value across a LUT entry's edge in its last bit."""
    if exact:
        np.testing.assert_array_equal(gpu_rgba, cpu_rgba)
        return
    same = np.all(gpu_rgba == cpu_rgba, axis=-1)
    assert same.mean() >= 0.999
    assert np.abs(gpu_rgba.astype(int) - cpu_rgba.astype(int)).max() <= 8


@pytest.fixture
def cpu(cpu_backend):
    return DeepFrameRenderer(cpu_backend)


def test_cpu_layers_sum_to_the_frame_stats(cpu, cpu_backend):
    for req in cases((10, 7)):          # the last: a pixel redone
        plain = DeepFrameRenderer(cpu_backend).render(req)
        f = cpu.render(req, keep=DEEP_NAMES)
        check_layers_against_stats(f, req)
        assert f.meta["stats"] == plain.meta["stats"]
        np.testing.assert_array_equal(f.values, plain.values)
        np.testing.assert_array_equal(f.rgba, plain.rgba)         # no overlay drawn
        assert f.meta["overlay"].unavailable[ov.LANES] == ov.WARPS_REASON
    assert f.meta["stats"]["redone_pixels"] > 0 and f.meta["overlay"].layers[ov.REDONE].max() == 1


def test_cpu_draws_each_deep_overlay_with_its_scale(cpu):
    req = cases((10, 7))[0]
    for name in DEEP_NAMES:
        f = cpu.render(dataclasses.replace(req, overlay=name))
        info = f.meta["overlay"]
        shown = cpu.render(req, keep=(name,)).meta["overlay"].layers[name]
        want = ov.colour_host(shown, info.scale)
        np.testing.assert_array_equal(f.rgba.view(np.uint32).reshape(7, 10), want)
        if name in (ov.STEPS, ov.BLA, ov.REBASES):
            assert info.scale.hi == max(1, shown.max()) and info.scale.log
        assert info.text() and info.text() in f.timings.label


def test_deep_overlays_refuse_lanes(cpu):
    with pytest.raises(ValueError, match="lane-efficiency"):
        cpu.render(dataclasses.replace(cases((4, 3))[0], overlay=ov.LANES))


@pytest.mark.gpu
def test_gpu_layers_equal_the_cpu_twin(gpu_backend, cpu, simulated):
    gpu = DeepFrameRenderer(gpu_backend)
    for req in cases((8, 6) if simulated else (64, 40)):
        g = gpu.render(req, keep=DEEP_NAMES)
        c = cpu.render(req, keep=DEEP_NAMES)
        check_layers_against_stats(g, req)
        assert g.meta["stats"] == c.meta["stats"]
        for name in DEEP_NAMES:
            np.testing.assert_array_equal(g.meta["overlay"].layers[name],
                                          c.meta["overlay"].layers[name], err_msg=name)
        assert ov.LANES in g.meta["overlay"].unavailable
    req = dataclasses.replace(cases((8, 6) if simulated else (64, 40))[0], overlay=ov.BLA)
    g, c = gpu.render(req), cpu.render(req)
    assert g.meta["overlay"].scale == c.meta["overlay"].scale      # the frame's largest, on both
    same_colours(g.rgba, c.rgba, simulated)


@pytest.mark.gpu
def test_gpu_off_path_is_todays_frame(gpu_backend, simulated):
    req = cases((8, 6) if simulated else (64, 40))[0]
    gpu = DeepFrameRenderer(gpu_backend)
    gpu.render(dataclasses.replace(req, overlay=ov.STEPS))
    after = gpu.render(req)
    fresh = DeepFrameRenderer(gpu_backend).render(req)
    np.testing.assert_array_equal(after.rgba, fresh.rgba)
    np.testing.assert_array_equal(after.values, fresh.values)
    assert "overlay" not in after.meta
