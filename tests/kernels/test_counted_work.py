"""Every workload records the work it counted with its timings, and the counts hold: executed ≥
useful lane-iterations, equal for a uniform frame, useful = the bench's exact iteration count."""
import numpy as np
import pytest

from kernels.mandelbrot.frames import frame_work as fw
from kernels.mandelbrot.bench import BULB3, SEAHORSE
from kernels.mandelbrot.renderer import (MandelbrotRequest, PixelGrid, Renderer,
                                         executed_iterations, iteration_counts)
from kernels.roofs.work import place


def frame(backend, view, size, iters):
    cx, cy, width = view
    req = MandelbrotRequest(cx, cy, width, size, iters, want_values=True)
    return req, Renderer(backend, reuse_values=False).render(req)


def by_name(timings):
    return {w.name: w for w in timings.work}


def test_cpu_frame_counts_its_useful_iterations(cpu_backend):
    req, f = frame(cpu_backend, SEAHORSE, (70, 41), 300)
    works = by_name(f.timings)
    useful = works["escape, useful iterations"]
    assert useful.ops == fw.FLOPS_PER_ITERATION * executed_iterations(req, f.values)
    assert useful.bytes == 8 * 70 * 41 and useful.kind == "f64"
    assert "escape, executed lane-iterations" not in works      # no lanes on the CPU
    (p,) = place(f.timings, None)
    assert p.seconds and p.rate == pytest.approx(useful.ops / p.seconds)
    # the colouring and the count itself are not the escape kernel's time
    k, d = f.timings.phases_ms["kernel"], f.timings.detail
    assert p.seconds == pytest.approx((k - d["colourise"] - d["work count"]) * 1e-3)


def segment_counts(req, values):
    """The 32-pixel segments' lane-iterations, computed apart in NumPy."""
    w, h = req.size
    g = PixelGrid.of(req)
    from kernels.mandelbrot.loops.escape import shortcut_mask
    cols = g.cx + (np.arange(w) + 0.5 - g.half_w) * g.step
    rows = g.cy - (np.arange(h) + 0.5 - g.half_h) * g.step
    n = iteration_counts(values, req.max_iter)
    n[shortcut_mask(cols[None, :], rows[:, None])] = 0
    lanes = 0
    for c0 in range(0, w, 32):
        lanes += 32 * int(n[:, c0:c0 + 32].max(axis=1).sum())
    return int(n.sum()), lanes


def test_count_twin_matches_numpy_and_executed_is_at_least_useful(cpu_backend):
    req, f = frame(cpu_backend, SEAHORSE, (70, 20), 300)     # 70 columns: a part segment per row
    useful, lanes = fw.count_cpu(f.values, *PixelGrid.of(req).args(0, req.max_iter))
    assert (useful, lanes) == segment_counts(req, f.values)
    assert lanes > useful                                    # the seahorse's lanes wait


def test_a_uniform_frame_executes_what_it_needs(cpu_backend):
    # inside the period-3 bulb: every pixel runs every iteration, no lane waits
    req, f = frame(cpu_backend, BULB3, (64, 8), 200)
    useful, lanes = fw.count_cpu(f.values, *PixelGrid.of(req).args(0, req.max_iter))
    assert useful == lanes == 64 * 8 * 200


@pytest.mark.gpu
def test_gpu_frame_counts_useful_and_executed(gpu_backend, simulated):
    size = (40, 6) if simulated else (1920, 1080)
    req, f = frame(gpu_backend, SEAHORSE, size, 120)
    works = by_name(f.timings)
    useful = works["escape, useful iterations"].ops / fw.FLOPS_PER_ITERATION
    executed = works["escape, executed lane-iterations"].ops / fw.FLOPS_PER_ITERATION
    assert useful == executed_iterations(req, f.values)
    assert (useful, executed) == segment_counts(req, f.values)
    assert executed >= useful
    req, f = frame(gpu_backend, BULB3, (32, 2) if simulated else (1024, 64), 100)
    works = by_name(f.timings)
    assert works["escape, useful iterations"].ops == works["escape, executed lane-iterations"].ops


def test_vector_points_count_flops_and_bytes(cpu_backend):
    from kernels.vector.ops import get_op
    from kernels.vector.registry import implementations
    from kernels.vector.runner import PointRunner
    impl = next(i for i in implementations(cpu_backend) if i.available and i.device == "cpu")
    point = PointRunner(cpu_backend, repeats=2).measure("triad", impl, "kernel", 1 << 12)
    (w,) = point.timings.work
    op = get_op("triad")
    assert w.kind == "f32" and w.ops == op.flops * (1 << 12) and w.bytes == 12 * (1 << 12)
    (p,) = place(point.timings, None)
    assert p.seconds == pytest.approx(point.kernel_ms * 1e-3)


def test_distance_frames_count_their_pixels(cpu_backend):
    from kernels.distance import work as dw
    from kernels.distance.renderer import Renderer as DistanceRenderer
    from kernels.distance.request import DistanceRequest
    f = DistanceRenderer(cpu_backend).render(DistanceRequest(size=(64, 32)))
    (w,) = f.timings.work
    assert w.ops == dw.FLOPS_PER_PIXEL * 64 * 32 and w.bytes == 4 * 64 * 32


def test_random_number_jobs_count_per_value(cpu_backend):
    from kernels.rng import request as rq
    from kernels.rng import work as rw
    from kernels.rng.renderer import Renderer as RngRenderer
    r = RngRenderer(cpu_backend)
    n = 1 << 12
    gen = r.generate(rq.GenerateRequest(n=n))
    (w,) = gen.timings.work
    assert w.kind == "int32" and w.ops == rw.OPS_PER_VALUE["xoroshiro128p"] * n
    assert w.detail == "generate" and w.bytes == 4 * n
    red = r.reduce(rq.ReduceRequest(n=n, dtype="float64"))
    (w,) = red.timings.work
    assert (w.kind, w.ops, w.bytes, w.detail) == ("f64", n, 8 * n, "reduce")
    (p,) = place(red.timings, None)
    assert p.seconds == pytest.approx(red.reduce_ms * 1e-3)
    hist = r.histogram(rq.HistogramRequest(n=n))
    assert hist.timings.work[0].ops == rw.HISTOGRAM_OPS * n
    mc = r.monte_carlo(rq.MonteCarloRequest(n=n))
    assert mc.timings.work[0].ops == rw.MONTE_CARLO_OPS * n


def test_deep_frames_weigh_their_steps():
    from kernels.mandelbrot.deep import deep_work as dw
    w = dw.frame_work({"perturbation_steps": 1000, "bla_steps": 10}, pixels=100, read_bytes=64)
    assert w.ops == 1000 * dw.PERTURBATION_FLOPS + 10 * dw.BLA_FLOPS
    assert w.bytes == 8 * 100 + 64 and w.minus == ("colourise",)


def test_a_deep_render_records_its_steps(cpu_backend):
    pytest.importorskip("gmpy2")
    from kernels.mandelbrot.deep import deep_work as dw
    from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP as loc
    from kernels.mandelbrot.deep.renderer import DeepRenderer
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    res = DeepRenderer(cpu_backend).render_values(
        DeepRequest(loc.center_re, loc.center_im, "1e-30", (16, 12), 1000))
    (w,) = res.timings.work
    st = res.stats
    assert w.ops == dw.PERTURBATION_FLOPS * st["perturbation_steps"] + dw.BLA_FLOPS * st["bla_steps"]
    assert w.ops > 0


def test_a_float32_frame_counts_float32_work(cpu_backend):
    req = MandelbrotRequest(*SEAHORSE, (48, 32), 200, want_values=True)
    f = Renderer(cpu_backend, reuse_values=False, number_type="float32").render(req)
    assert by_name(f.timings)["escape, useful iterations"].kind == "f32"
