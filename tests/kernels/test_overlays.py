"""Overlays of float64 frames (Renderer.render with an overlay or `keep`): the iterations layer
equals the counts the kernels perform, the lane-iterations equal a model of the warp launch's schedule run on
those counts, the frame without overlays is today's, and the CPU and the simulator agree.

GPU tests run under NUMBA_ENABLE_CUDASIM=1 with tiny frames."""
import dataclasses

import numpy as np
import pytest

from kernels.mandelbrot.colouring import overlays as ov
from kernels.mandelbrot import renderer as m
from kernels.mandelbrot.frames.gpu_target import THRESH

SEAHORSE = (-0.743643887037151, 0.131825904205330)


def _req(size=(24, 16), iters=60, centre=SEAHORSE, width=0.01, **kw):
    return m.MandelbrotRequest(*centre, width, size, iters, want_values=True, **kw)


def executed(req, values):
    """Iterations the kernels perform per pixel: the plain count, 0 where the shortcut answers."""
    g = m.PixelGrid.of(req)
    w, h = req.size
    xs = g.cx + (np.arange(w) + 0.5 - g.half_w) * g.step
    ys = g.cy - (np.arange(h) + 0.5 - g.half_h) * g.step
    skip = m.mk.shortcut_mask(xs[None, :], ys[:, None])
    return np.where(skip, 0, m.iteration_counts(values, req.max_iter))


def warp_model(iters, max_iter, thresh=THRESH, steps=8):
    """The warp launch's schedule for ONE warp over the frame, in Python: (lane-iterations per
    pixel, the warp's bodies issued). Segments of 32 pixels of a row in picture order, idle lanes
    refilled in lane order once `thresh` are idle (all 32 once the segments have run out), each
    pass up to `steps` iterations per live lane (one near max_iter); the warp issues the most any
    lane ran in the steps loop plus one if any lane took the single step."""
    h, w = iters.shape
    segs = []
    for r in range(h):
        for c0 in range(0, w, 32):
            segs.append([(r, c) for c in range(c0, min(w, c0 + 32))])
    slots = np.zeros_like(iters)
    lane_px = [None] * 32
    lane_n = [0] * 32
    lane_start = [0] * 32
    done = [False] * 32
    queue = [p for s in segs for p in s]
    pos = 0
    wsteps = 0
    while True:
        for lane in range(32):               # store finished pixels
            if done[lane]:
                slots[lane_px[lane]] = wsteps - lane_start[lane]
                lane_px[lane], done[lane] = None, False
        refilled = True
        while refilled and pos < len(queue):  # idle lanes take pixels in lane order
            refilled = False
            for lane in range(32):
                if lane_px[lane] is None and pos < len(queue):
                    p = queue[pos]
                    pos += 1
                    refilled = True
                    if iters[p] == 0:        # the shortcut: stored at once, never live
                        continue
                    lane_px[lane], lane_n[lane], lane_start[lane] = p, 0, wsteps
        more = pos < len(queue)
        idle = sum(px is None or done[i] for i, px in enumerate(lane_px))
        need = thresh if more else 32
        if idle == 32:
            if not more:
                return slots, wsteps
            continue
        while idle < need:
            most, single = 0, False
            for lane in range(32):
                p = lane_px[lane]
                if p is None or done[lane]:
                    continue
                n = lane_n[lane]
                if n + steps <= max_iter:
                    t = min(steps, int(iters[p]) - n)
                    most = max(most, t)
                else:
                    t, single = 1, True
                lane_n[lane] = n + t
                if lane_n[lane] >= iters[p]:
                    done[lane] = True
            wsteps += most + (1 if single else 0)
            idle = sum(px is None or done[i] for i, px in enumerate(lane_px))


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
    return m.Renderer(cpu_backend)


# ---------------------------------------------------------------- CPU

def test_cpu_iterations_layer_is_the_executed_counts(cpu):
    req = _req(centre=(-0.5, 0.0), width=3.0, size=(20, 14), iters=50)   # cardioid: shortcuts
    plain = cpu.render(req)
    f = cpu.render(req, keep=(ov.ITERATIONS,))
    info = f.meta["overlay"]
    want = executed(req, plain.values)
    assert (want == 0).any() and (want == req.max_iter).any()
    np.testing.assert_array_equal(info.layers[ov.ITERATIONS], want)
    assert info.totals["useful"] == m.executed_iterations(req, plain.values)
    np.testing.assert_array_equal(f.values, plain.values)
    np.testing.assert_array_equal(f.rgba, plain.rgba)          # no overlay drawn: the picture


def test_cpu_draws_the_overlay_and_says_why_lanes_have_no_meaning(cpu):
    req = _req(overlay=ov.ITERATIONS)
    f = cpu.render(req)
    info = f.meta["overlay"]
    it = ov.shown_values(ov.ITERATIONS, np.stack([executed(req, cpu.render(
        dataclasses.replace(req, overlay="")).values), np.zeros(req.size[::-1], np.int32)]))
    want = ov.colour_host(it, ov.scale_for(ov.ITERATIONS, req.max_iter))
    np.testing.assert_array_equal(f.rgba.view(np.uint32).reshape(req.size[::-1]), want)
    assert info.unavailable[ov.LANES] == ov.WARPS_REASON
    assert ov.BLA in info.unavailable and ov.ITERATIONS not in info.unavailable
    assert "iterations" in f.timings.label and "per pixel" in f.timings.label
    with pytest.raises(ValueError, match="no warps on the CPU"):
        cpu.render(dataclasses.replace(req, overlay=ov.LANES))
    with pytest.raises(ValueError, match="only deep frames"):
        cpu.render(dataclasses.replace(req, overlay=ov.BLA))
    with pytest.raises(ValueError, match="unknown overlay 'sparkle'"):
        cpu.render(dataclasses.replace(req, overlay="sparkle"))


def test_off_path_is_todays_frame(cpu):
    """With no overlay the renderer runs its own pipeline: the same picture as a fresh renderer
    gives, after an overlay frame has run on this one."""
    req = _req(overlay="")
    cpu.render(dataclasses.replace(req, overlay=ov.ITERATIONS))
    f = cpu.render(req)
    fresh = m.Renderer(cpu.backend).render(req)
    np.testing.assert_array_equal(f.rgba, fresh.rgba)
    np.testing.assert_array_equal(f.values, fresh.values)
    assert "overlay" not in f.meta


def test_names_and_reasons():
    assert ov.parse_names("iterations, rebases,iterations") == (ov.ITERATIONS, ov.REBASES)
    with pytest.raises(ValueError, match="unknown overlay 'x'"):
        ov.parse_names("iterations,x")
    with pytest.raises(ValueError, match="no overlay named"):
        ov.parse_names(" , ")
    assert ov.unavailable(ov.LANES, deep=False, gpu=True) is None
    assert ov.unavailable(ov.LANES, deep=True, gpu=True) == ov.DEEP_LANES_REASON
    assert ov.unavailable(ov.REDONE, deep=True, gpu=False) is None
    with pytest.raises(ValueError, match="float64 frame on the CPU"):
        ov.check_names((ov.STEPS,), deep=False, gpu=False)


def test_float32_frames_have_no_overlays(cpu_backend):
    assert ov.unavailable(ov.ITERATIONS, deep=False, gpu=True, float32=True) == ov.FLOAT32_REASON
    req = _req(backend=cpu_backend)
    assert ov.with_usable_overlay(req, ov.ITERATIONS).overlay == ov.ITERATIONS
    assert ov.with_usable_overlay(req, ov.LANES).overlay == ""            # no warps on the CPU
    f32 = dataclasses.replace(req, number_type="float32")
    assert ov.with_usable_overlay(f32, ov.ITERATIONS).overlay == ""
    with pytest.raises(ValueError, match="float32 kernels have no overlay twins"):
        m.Renderer(cpu_backend, number_type="float32").render(
            dataclasses.replace(f32, overlay=ov.ITERATIONS))


def test_the_number_type_comparison_compares_pictures_with_an_overlay_chosen(cpu_backend):
    from kernels.mandelbrot.compare import compare
    kept = {t: m.Renderer(cpu_backend, number_type=t) for t in ("float64", "float32")}
    req = _req(size=(16, 10), overlay=ov.ITERATIONS)
    c = compare(req, lambda r: kept[r.number_type].render(r))
    picture = m.Renderer(cpu_backend).render(dataclasses.replace(req, overlay=""))
    np.testing.assert_array_equal(c.rgba64, picture.rgba)


def test_lane_efficiency_text():
    t = {"useful": 311_000_000, "lane_iterations": 756_000_000, "pixels": 2_073_600}
    assert ov.totals_text(ov.LANES, t) == ("lane efficiency 41 % (311 M useful of 756 M "
                                          "lane-iterations issued)")


# ---------------------------------------------------------------- GPU (or its simulator)

def _bands_of(monkeypatch, rows: int, cols: int, max_iter: int) -> None:
    """Have the renderer cut every frame into launches of `rows` rows, on the GPU and under the
    simulator alike, none of them sliced."""
    work = rows * cols * max_iter
    for name, value in (("GPU_BAND_WORK", work), ("SIM_BAND_WORK", work),
                        ("GPU_MIN_BAND_PIXELS", 1), ("SIM_BAND_PIXELS", 10**9)):
        monkeypatch.setattr(m, name, value)


def _poison_totals(renderer) -> None:
    """Fill the device total the next lane-efficiency frame adds to with a double's bits (what
    stale device memory holds), so a frame that does not zero it shows it whatever was there."""
    stream = renderer.target.stream
    totals = renderer.pool.device("overlay-lanes", (1,), np.int64, stream=stream)
    poison = np.full(1, 0x40163BC5CD578DF9, np.int64)
    totals.copy_to_device(poison, stream=stream)
    back = totals.copy_to_host(stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(back, poison)


def _lane_bounds(info, its) -> None:
    """The frame's lane-iterations against the per-pixel layers: at least the pixels' own
    (their lanes' spans are disjoint within a warp), at least the useful iterations, and at most
    32 × the useful iterations (every body a warp issues is run by one of its live lanes)."""
    t = info.totals
    iterated = its > 0
    eff = info.layers[ov.LANES]
    slots = np.rint(np.where(iterated, its * 100.0 / np.where(iterated, eff, 1), 0))
    assert t["useful"] == its.sum()
    assert t["lane_iterations"] % 32 == 0
    assert slots.sum() <= t["lane_iterations"] <= 32 * t["useful"], (slots.sum(), t)


@pytest.mark.gpu
@pytest.mark.parametrize("band", [None, 4])
def test_gpu_layers_equal_the_counts_and_the_one_warp_model(gpu_backend, cpu, monkeypatch, band):
    """One warp per launch (a grid of one block) makes the schedule deterministic: its
    lane-iterations per pixel and in all equal the model's, run on the executed counts of each
    launch's band of rows (the whole frame, or bands of 4 rows). The values equal the GPU's own
    frame without overlays bit for bit; the counts equal the CPU's (its log may differ by an ulp).
    """
    from kernels.mandelbrot.frames.gpu_target import OverlayWarpLaunch
    monkeypatch.setattr(OverlayWarpLaunch, "grid", lambda self, g: (1, 32))
    gpu = m.Renderer(gpu_backend)
    for req in (_req(size=(40, 9), iters=60),                      # segments of 32 and of 8
                _req(centre=(-0.5, 0.0), width=3.0, size=(24, 10), iters=37)):  # shortcuts
        w, h = req.size
        _bands_of(monkeypatch, band or h, w, req.max_iter)
        plain = cpu.render(req)
        gpu_plain = gpu.render(req)
        _poison_totals(gpu)
        f = gpu.render(req, keep=(ov.ITERATIONS, ov.LANES))
        info = f.meta["overlay"]
        its = executed(req, plain.values)
        np.testing.assert_array_equal(info.layers[ov.ITERATIONS], its)
        slots = np.zeros_like(its)
        bodies = 0
        for r0 in range(0, h, band or h):
            s, b = warp_model(its[r0:r0 + (band or h)], req.max_iter)
            slots[r0:r0 + (band or h)] = s
            bodies += b
        lanes = info.layers[ov.LANES]
        want = np.where(slots > 0, 100.0 * its / np.where(slots > 0, slots, 1), np.nan)
        np.testing.assert_allclose(lanes, want, rtol=1e-12, equal_nan=True)
        _lane_bounds(info, its)
        assert info.totals["lane_iterations"] == 32 * bodies
        np.testing.assert_array_equal(f.values, gpu_plain.values)  # the same values bit for bit
        np.testing.assert_array_equal(m.iteration_counts(f.values, req.max_iter),
                                      m.iteration_counts(plain.values, req.max_iter))


@pytest.mark.gpu
def test_gpu_lane_layers_hold_with_many_warps(gpu_backend, cpu):
    """With the launch's own grid (warps racing for segments): every pixel's lane-iterations cover
    its iterations, the frame's total lies between the pixels' own and 32 × the useful ones, and
    nothing iterated has none; so again on a renderer that drew a frame without overlays first,
    over totals left holding garbage, whole and in bands of 3 rows."""
    gpu = m.Renderer(gpu_backend)
    req = _req(size=(40, 12), iters=80)
    want = executed(req, cpu.render(req).values)
    for poisoned in (False, True, True):
        if poisoned:
            gpu.render(req)
            _poison_totals(gpu)
        f = gpu.render(req, keep=(ov.ITERATIONS, ov.LANES))
        info = f.meta["overlay"]
        its = info.layers[ov.ITERATIONS]
        np.testing.assert_array_equal(its, want)
        eff = info.layers[ov.LANES]
        iterated = its > 0
        assert np.all(eff[iterated] <= 100.0) and np.all(eff[iterated] > 0)
        assert np.isnan(eff[~iterated]).all()
        _lane_bounds(info, its)
        assert "lane efficiency" in ov.totals_text(ov.LANES, info.totals)


@pytest.mark.gpu
def test_gpu_lane_totals_hold_in_bands_with_many_warps(gpu_backend, cpu, monkeypatch):
    gpu = m.Renderer(gpu_backend)
    req = _req(size=(40, 12), iters=80)
    _bands_of(monkeypatch, 3, 40, req.max_iter)
    gpu.render(req)
    _poison_totals(gpu)
    info = gpu.render(req, keep=(ov.ITERATIONS, ov.LANES)).meta["overlay"]
    np.testing.assert_array_equal(info.layers[ov.ITERATIONS], executed(req, cpu.render(req).values))
    _lane_bounds(info, info.layers[ov.ITERATIONS])


@pytest.mark.gpu
def test_gpu_and_cpu_draw_the_same_iterations_overlay(gpu_backend, cpu, simulated):
    gpu = m.Renderer(gpu_backend)
    req = _req(size=(20, 12), iters=50, overlay=ov.ITERATIONS)
    g, c = gpu.render(req), cpu.render(req)
    same_colours(g.rgba, c.rgba, simulated)
    assert g.meta["overlay"].totals["useful"] == c.meta["overlay"].totals["useful"]


@pytest.mark.gpu
def test_gpu_iterations_overlay_runs_the_apps_own_kernels(gpu_backend, cpu, monkeypatch,
                                                          simulated):
    """No twin for the iterations overlay: the frame runs the plain warp launch (the lanes twin
    would fail here), its values are the plain frame's bit for bit, and its colours and total
    are those of the CPU's iterations layer."""
    from kernels.mandelbrot.frames.gpu_target import OverlayWarpLaunch

    def no_twin(*a, **k):
        raise AssertionError("the iterations overlay ran the lane-efficiency twin")
    monkeypatch.setattr(OverlayWarpLaunch, "escape", no_twin)
    gpu = m.Renderer(gpu_backend)
    req = _req(centre=(-0.5, 0.0), width=3.0, size=(20, 12), iters=45, overlay=ov.ITERATIONS)
    plain = gpu.render(dataclasses.replace(req, overlay=""))
    plain_values = plain.values.copy()
    f = gpu.render(req)
    np.testing.assert_array_equal(f.values, plain_values)
    its = executed(req, cpu.render(dataclasses.replace(req, overlay="")).values)
    assert (its == 0).any() and (its == req.max_iter).any()     # shortcut and inside pixels
    want = ov.colour_host(its.astype(np.float64), ov.scale_for(ov.ITERATIONS, req.max_iter))
    same_colours(f.rgba, want.view(np.uint8).reshape(f.rgba.shape), simulated)
    assert f.meta["overlay"].totals["useful"] == its.sum()
    with pytest.raises(AssertionError, match="lane-efficiency twin"):
        gpu.render(dataclasses.replace(req, overlay=ov.LANES))


@pytest.mark.gpu
def test_gpu_lane_overlay_colours_its_layers(gpu_backend):
    """The lane-efficiency overlay drawn on the device is overlays.colour_host of the layers the
    frame keeps (its NumPy twin); pixels the shortcut answered have no value."""
    gpu = m.Renderer(gpu_backend)
    req = _req(centre=(-0.5, 0.0), width=3.0, size=(24, 10), iters=37, overlay=ov.LANES)
    f = gpu.render(req, keep=(ov.LANES,))
    eff = f.meta["overlay"].layers[ov.LANES]
    assert np.isnan(eff).any() and (eff[~np.isnan(eff)] < 100.0).any()
    want = ov.colour_host(eff, ov.scale_for(ov.LANES, req.max_iter))
    np.testing.assert_array_equal(f.rgba.view(np.uint32).reshape(eff.shape), want)
    assert (want == ov.no_value_word()).sum() == np.isnan(eff).sum()


@pytest.mark.gpu
def test_gpu_sliced_frame_derives_iterations_and_greys_lanes(gpu_backend, cpu, monkeypatch):
    monkeypatch.setattr(m, "SIM_BAND_WORK", 64)        # every band too long: iteration slices
    monkeypatch.setattr(m, "GPU_BAND_WORK", 64)
    monkeypatch.setattr(m, "SIM_BAND_PIXELS", 10**6)
    monkeypatch.setattr(m, "GPU_MIN_BAND_PIXELS", 10**6)
    gpu = m.Renderer(gpu_backend)
    req = _req(centre=(-0.5, 0.0), width=3.0, size=(16, 8), iters=40)
    f = gpu.render(req, keep=(ov.ITERATIONS,))
    info = f.meta["overlay"]
    np.testing.assert_array_equal(info.layers[ov.ITERATIONS], executed(req, cpu.render(req).values))
    assert info.unavailable[ov.LANES] == ov.SLICED_REASON
    assert "lane_iterations" not in info.totals


@pytest.mark.gpu
def test_gpu_off_path_is_todays_frame(gpu_backend):
    gpu = m.Renderer(gpu_backend)
    req = _req(size=(20, 12), iters=50)
    before = gpu.render(req)
    rgba, values = before.rgba.copy(), before.values.copy()
    gpu.render(dataclasses.replace(req, overlay=ov.LANES))
    after = m.Renderer(gpu_backend).render(req)
    np.testing.assert_array_equal(after.rgba, rgba)
    np.testing.assert_array_equal(after.values, values)
